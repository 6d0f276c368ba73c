package io.github.dualmap.engine;

/**
 * Receives an engine's KV cache events, as vLLM publishes them with
 * {@code --kv-events-config}: a full block registered in the prefix cache under its chain
 * hash ({@code BlockStored}) and a cached block evicted for reuse ({@code BlockRemoved}).
 * Called in the order the cache changes, during {@link Engine#step(long)}; the listener
 * decides when its consumers see them.
 */
public interface KvEventListener {

	/** Discards every event. */
	KvEventListener NONE = new KvEventListener() {
		@Override
		public void stored(long blockHash) {
		}

		@Override
		public void removed(long blockHash) {
		}
	};

	/** A full block of chain hash {@code blockHash} is now in the prefix cache. */
	void stored(long blockHash);

	/** The cached block of chain hash {@code blockHash} was evicted. */
	void removed(long blockHash);

}

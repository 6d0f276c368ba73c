package io.github.dualmap.core;

import java.util.Set;

/**
 * What a router that learns the cache from its own routing believes each instance holds:
 * the blocks of the prompts it sent there, bounded. Implementations: one LRU index per
 * instance (the sgl-router's trees) or one for all instances ({@link SharedPrefixTree},
 * the SGLang Model Gateway's).
 */
interface ApproximateTrees {

	/** Leading blocks of {@code chain} believed cached on {@code instanceId}. */
	int matchedBlocks(String instanceId, long[] chain);

	/** {@code chain} was sent to {@code instanceId} at {@code nowNanos}. */
	void record(String instanceId, long[] chain, long nowNanos);

	/** Forgets every instance not in {@code members}. */
	void retain(Set<String> members);

	/** Blocks held for {@code instanceId} (0 for an unknown instance). */
	int blocks(String instanceId);

	/** One LRU index of {@code maxBlocks} per instance, each bounded on its own. */
	static ApproximateTrees perInstance(int maxBlocks) {
		PerInstance<ShadowKvIndex> trees = new PerInstance<>(() -> new ShadowKvIndex(maxBlocks));
		return new ApproximateTrees() {

			@Override
			public int matchedBlocks(String instanceId, long[] chain) {
				ShadowKvIndex t = trees.find(instanceId);
				return t == null ? 0 : t.peekMatchedBlocks(chain);
			}

			@Override
			public void record(String instanceId, long[] chain, long nowNanos) {
				trees.get(instanceId).record(chain);
			}

			@Override
			public void retain(Set<String> members) {
				trees.retain(members);
			}

			@Override
			public int blocks(String instanceId) {
				ShadowKvIndex t = trees.find(instanceId);
				return t == null ? 0 : t.size();
			}

		};
	}

}

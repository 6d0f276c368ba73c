package io.github.dualmap.sim;

import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.engine.KvEventListener;
import io.github.dualmap.sim.trace.TraceRequest;
import org.jspecify.annotations.Nullable;

/**
 * One serving instance as the simulator drives it: requests go in, iterations run one at
 * a time in virtual time, and metrics can be scraped. {@link EngineInstance} adapts the
 * engine model; tests plug in analysable stand-ins.
 */
public interface InstanceModel {

	/**
	 * Queues request {@code index} of the trace, arrived at {@code nowNanos}.
	 * @return {@code false} when the instance can never serve it (longer than its context
	 * or its KV cache); the simulator counts it as rejected
	 */
	boolean submit(int index, TraceRequest request, long nowNanos);

	/** Whether a step would do anything. */
	boolean hasWork();

	/**
	 * Runs one iteration starting at {@code nowNanos}. Its effects on the instance apply
	 * at once; its events are delivered by the simulator at
	 * {@link StepOutcome#endNanos()}.
	 */
	StepOutcome step(long nowNanos);

	/** What a metrics scrape at {@code nowNanos} would show. */
	EngineSnapshot scrape(long nowNanos);

	/**
	 * From now on every step takes {@code factor} times its modelled time (a slowdown,
	 * {@code --slow-down}; 1 restores it).
	 * @throws UnsupportedOperationException for a model without modelled step times
	 */
	default void setStepTimeFactor(double factor) {
		throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot slow down");
	}

	/**
	 * The instance's weight on the routers' rings, as its operator gives it with the
	 * {@code dualmap.weight} metadata; 1 by default.
	 */
	default double ringWeight() {
		return 1.0;
	}

	/** Requests running or waiting (the load the simulator reports). */
	int load();

	/** Requests preempted so far (monotonic); 0 for models without preemption. */
	default long preemptions() {
		return 0;
	}

	/**
	 * Cached KV blocks evicted for reuse so far (monotonic); 0 for models without a
	 * cache.
	 */
	default long evictedBlocks() {
		return 0;
	}

	/**
	 * The instance's KV events and what a router needs to match them against a request,
	 * or {@code null} for a model without a prefix cache.
	 */
	default @Nullable KvEventSource kvEventSource() {
		return null;
	}

	/**
	 * An engine's KV events (blocks stored in and evicted from its prefix cache) and its
	 * block keys: the router side of vLLM's {@code --kv-events-config}.
	 */
	interface KvEventSource {

		/** Reports every stored and evicted block to {@code listener} from now on. */
		void listen(KvEventListener listener);

		/**
		 * The chained hashes of the request's full prompt blocks, as the cache keys them.
		 */
		long[] blockHashes(TraceRequest request);

		/** Tokens per block. */
		int blockTokens();

		/** Tokens scheduled per step at most ({@code max_num_batched_tokens}). */
		int maxBatchedTokens();

	}

	/**
	 * What one iteration produced.
	 *
	 * @param endNanos when it ends
	 * @param firstTokens trace indexes of requests whose first token is produced at the
	 * end
	 * @param cachedTokens prompt tokens found in the prefix cache, parallel to
	 * {@code firstTokens}
	 * @param finished trace indexes of requests that produced their last token
	 */
	record StepOutcome(long endNanos, int[] firstTokens, int[] cachedTokens, int[] finished) {

		public StepOutcome {
			if (firstTokens.length != cachedTokens.length) {
				throw new IllegalArgumentException("cachedTokens has " + cachedTokens.length + " entries for "
						+ firstTokens.length + " first tokens");
			}
		}

	}

	/** Creates instance {@code index} of a run; called once per instance per run. */
	@FunctionalInterface
	interface Factory {

		InstanceModel create(int index, long seed);

	}

}

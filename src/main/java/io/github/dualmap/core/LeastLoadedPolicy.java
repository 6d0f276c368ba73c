package io.github.dualmap.core;

import org.jspecify.annotations.Nullable;

/**
 * Baseline: the accepting instance with the fewest pending uncached tokens
 * ({@link InstancePool#pendingTokens}), ties broken by fewer requests in flight, then by
 * ring (id) order. Ignores the prompt, so cache reuse is left to chance.
 */
public final class LeastLoadedPolicy implements RoutingPolicy {

	/** The name it is registered under. */
	public static final String NAME = "least-loaded";

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		InstanceState best = leastLoaded(pool);
		return best == null ? null : Placement.of(pool, best, request.blocks()).decideWithoutModel(Reason.LOAD);
	}

	/**
	 * The load-only choice every policy makes for an unparsed body: the least pending
	 * tokens, reported with the pool's TTFT estimate.
	 */
	static @Nullable Decision leastPending(InstancePool pool, RoutingRequest request) {
		InstanceState best = leastLoaded(pool);
		return best == null ? null : Placement.of(pool, best, request.blocks()).decide(Reason.LOAD);
	}

	private static @Nullable InstanceState leastLoaded(InstancePool pool) {
		InstanceState best = null;
		long bestPending = Long.MAX_VALUE;
		for (InstanceState s : pool.instances()) {
			if (!s.acceptsNewWork()) {
				continue;
			}
			long pending = pool.pendingTokens(s);
			if (best == null || pending < bestPending || (pending == bestPending && s.inFlight() < best.inFlight())) {
				best = s;
				bestPending = pending;
			}
		}
		return best;
	}

	@Override
	public String toString() {
		return "LeastLoadedPolicy";
	}

}

package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Baseline: the accepting instance with the fewest pending uncached tokens
 * ({@link InstancePool#pendingTokens}), ties broken by fewer requests in flight, then by
 * ring (id) order; requests without a prompt take turns among the instances tied on both
 * (they add no pending tokens). Ignores the prompt, so cache reuse is left to chance.
 */
public final class LeastLoadedPolicy implements RoutingPolicy {

	/** The name it is registered under. */
	public static final String NAME = "least-loaded";

	@Override
	public String name() {
		return NAME;
	}

	/** Turns among equally loaded instances for requests routed without a prompt. */
	private final TieBreaker loadTies = new TieBreaker();

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		InstanceState best = request.blocks() == null ? leastPendingInstance(pool, this.loadTies) : leastLoaded(pool);
		return best == null ? null : CandidateCost.of(pool, best, request.blocks()).decideWithoutModel(Reason.LOAD);
	}

	/**
	 * The load-only choice every policy makes for an unparsed body: the least pending
	 * tokens, reported with the pool's TTFT estimate.
	 */
	static @Nullable Decision leastPending(InstancePool pool, RoutingRequest request, TieBreaker ties) {
		InstanceState chosen = leastPendingInstance(pool, ties);
		return chosen == null ? null : CandidateCost.of(pool, chosen, request.blocks()).decide(Reason.LOAD);
	}

	private static @Nullable InstanceState leastPendingInstance(InstancePool pool, TieBreaker ties) {
		// Instances equal on both counts take turns: requests routed by load alone
		// (embeddings, a model list) add no pending tokens and end at once, so without
		// turns every one of them went to the first idle instance.
		return ties.lowest(leastLoadedTies(pool), s -> 0);
	}

	/** The first, in ring (id) order, of the accepting instances least loaded. */
	private static @Nullable InstanceState leastLoaded(InstancePool pool) {
		List<InstanceState> best = leastLoadedTies(pool);
		return best.isEmpty() ? null : best.get(0);
	}

	/**
	 * The accepting instances with the fewest pending tokens and, among those, the fewest
	 * requests in flight, in ring (id) order.
	 */
	private static List<InstanceState> leastLoadedTies(InstancePool pool) {
		List<InstanceState> best = new ArrayList<>();
		long bestPending = Long.MAX_VALUE;
		int bestInFlight = Integer.MAX_VALUE;
		for (InstanceState s : pool.instances()) {
			if (!s.acceptsNewWork()) {
				continue;
			}
			long pending = pool.pendingTokens(s);
			int inFlight = s.inFlight();
			if (pending < bestPending || (pending == bestPending && inFlight < bestInFlight)) {
				best.clear();
				bestPending = pending;
				bestInFlight = inFlight;
			}
			if (pending == bestPending && inFlight == bestInFlight) {
				best.add(s);
			}
		}
		return best;
	}

	@Override
	public String toString() {
		return "LeastLoadedPolicy";
	}

}

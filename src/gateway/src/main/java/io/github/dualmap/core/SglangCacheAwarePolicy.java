package io.github.dualmap.core;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The sgl-router's {@code cache_aware} policy ({@value #NAME}; the SGLang repository's
 * {@code sgl-router/src/policies/cache_aware.rs}). When in-flight load is imbalanced (max
 * - min above the absolute threshold and max above the relative threshold x min) it takes
 * the shortest queue; otherwise the instance whose approximate tree holds the longest
 * prefix of the prompt if the match rate is above the cache threshold, else the least
 * loaded instance. Each instance's tree is bounded on its own, with LRU eviction. Its
 * successor is {@link SmgCacheAwarePolicy}.
 */
public final class SglangCacheAwarePolicy extends SglangTreePolicy {

	/** The registry name. */
	public static final String NAME = "sglang-cache-aware";

	private final int balanceAbsThreshold;

	private final double balanceRelThreshold;

	private final TieBreaker ties = new TieBreaker();

	/**
	 * The router's defaults, trees counted in blocks of {@code settings.blockTokens()}.
	 */
	public SglangCacheAwarePolicy(SchedulerSettings settings) {
		this(settings.blockTokens(), DEFAULT_CACHE_THRESHOLD, DEFAULT_BALANCE_ABS_THRESHOLD,
				DEFAULT_BALANCE_REL_THRESHOLD, DEFAULT_MAX_TREE_TOKENS);
	}

	/**
	 * @param blockTokens tokens per block of the prompt chains this policy sees
	 * @param cacheThreshold match rate above which the best match wins, in [0, 1]
	 * @param balanceAbsThreshold imbalance needs max - min in-flight above this, >= 0
	 * @param balanceRelThreshold and max above this x min, >= 1 and finite
	 * @param maxTreeTokens tokens each instance's tree may hold before LRU eviction
	 */
	public SglangCacheAwarePolicy(int blockTokens, double cacheThreshold, int balanceAbsThreshold,
			double balanceRelThreshold, long maxTreeTokens) {
		super(blockTokens, cacheThreshold, balanceAbsThreshold, balanceRelThreshold, maxTreeTokens,
				ApproximateTrees::perInstance);
		this.balanceAbsThreshold = balanceAbsThreshold;
		this.balanceRelThreshold = balanceRelThreshold;
	}

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		List<InstanceState> accepting = pool.acceptingInstances();
		if (accepting.isEmpty()) {
			return null;
		}
		PromptBlocks blocks = request.blocks();
		if (blocks == null || isImbalanced(accepting)) {
			InstanceState shortest = ties.lowest(accepting, InstanceState::inFlight);
			return decision(shortest, Reason.LOAD, blocks, request);
		}
		List<InstanceState> holders = longestMatchAboveThreshold(blocks, accepting);
		if (holders != null) {
			InstanceState chosen = ties.lowest(holders, InstanceState::inFlight);
			return decision(chosen, Reason.AFFINITY, blocks, request);
		}
		// Low match: the least loaded instance (upstream since sglang #14650, December
		// 2025; before, the smallest tree, whatever its load).
		InstanceState least = ties.lowest(accepting, InstanceState::inFlight);
		return decision(least, Reason.LOAD, blocks, request);
	}

	private boolean isImbalanced(List<InstanceState> accepting) {
		int max = Integer.MIN_VALUE;
		int min = Integer.MAX_VALUE;
		for (InstanceState s : accepting) {
			max = Math.max(max, s.inFlight());
			min = Math.min(min, s.inFlight());
		}
		return max - min > balanceAbsThreshold && max > balanceRelThreshold * min;
	}

}

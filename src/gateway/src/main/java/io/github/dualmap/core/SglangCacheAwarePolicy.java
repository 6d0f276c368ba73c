package io.github.dualmap.core;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The SGLang router's {@code cache_aware} policy (sgl-router
 * {@code src/policies/cache_aware.rs}). When in-flight load is imbalanced (max - min
 * above the absolute threshold and max above the relative threshold x min) it takes the
 * shortest queue; otherwise the instance whose approximate tree holds the longest prefix
 * of the prompt if the match rate is above the cache threshold, else the instance with
 * the smallest tree. The trees are learned only from this router's own routing and
 * bounded by a maximum size with LRU eviction, as the router's are.
 */
public final class SglangCacheAwarePolicy implements RoutingPolicy {

	/** The registry name. */
	public static final String NAME = "sglang-cache-aware";

	/** {@code --cache-threshold} default of the router's CLI. */
	public static final double DEFAULT_CACHE_THRESHOLD = 0.3;

	/** {@code --balance-abs-threshold} default of the router's CLI. */
	public static final int DEFAULT_BALANCE_ABS_THRESHOLD = 64;

	/** {@code --balance-rel-threshold} default of the router's CLI. */
	public static final double DEFAULT_BALANCE_REL_THRESHOLD = 1.5;

	/**
	 * {@code --max-tree-size} default (2^26 characters of prompt text per tree) at the
	 * router's 4 characters per token: 2^24 tokens.
	 */
	public static final long DEFAULT_MAX_TREE_TOKENS = (1L << 26) / 4;

	/**
	 * How often an SGLang Model Gateway router replica exchanges state with a peer when
	 * its mesh is enabled ({@code --enable-mesh}): the mesh controller's gossip round of
	 * one second, which carries the cache-aware trees' inserts.
	 */
	public static final Duration DEFAULT_MESH_SYNC_INTERVAL = Duration.ofSeconds(1);

	private final double cacheThreshold;

	private final int balanceAbsThreshold;

	private final double balanceRelThreshold;

	private final PerInstance<ShadowKvIndex> trees;

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
	 * @param balanceAbsThreshold imbalance needs max - min in-flight above this
	 * @param balanceRelThreshold and max above this x min
	 * @param maxTreeTokens tokens each instance's tree may hold before LRU eviction
	 */
	public SglangCacheAwarePolicy(int blockTokens, double cacheThreshold, int balanceAbsThreshold,
			double balanceRelThreshold, long maxTreeTokens) {
		if (blockTokens <= 0) {
			throw new IllegalArgumentException("blockTokens must be > 0 but was " + blockTokens);
		}
		if (!(cacheThreshold >= 0 && cacheThreshold <= 1)) {
			throw new IllegalArgumentException("cacheThreshold must be in [0, 1] but was " + cacheThreshold);
		}
		if (balanceAbsThreshold < 0) {
			throw new IllegalArgumentException("balanceAbsThreshold must be >= 0 but was " + balanceAbsThreshold);
		}
		if (!(balanceRelThreshold >= 1) || Double.isInfinite(balanceRelThreshold)) {
			throw new IllegalArgumentException(
					"balanceRelThreshold must be >= 1 and finite but was " + balanceRelThreshold);
		}
		if (maxTreeTokens < blockTokens) {
			throw new IllegalArgumentException(
					"maxTreeTokens must be >= blockTokens (" + blockTokens + ") but was " + maxTreeTokens);
		}
		this.cacheThreshold = cacheThreshold;
		this.balanceAbsThreshold = balanceAbsThreshold;
		this.balanceRelThreshold = balanceRelThreshold;
		int maxTreeBlocks = (int) Math.min(Integer.MAX_VALUE, maxTreeTokens / blockTokens);
		this.trees = new PerInstance<>(() -> new ShadowKvIndex(maxTreeBlocks));
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
		Map<InstanceState, Integer> matched = new HashMap<>();
		int longest = 0;
		for (InstanceState s : accepting) {
			int m = tree(s.id()).peekMatchedBlocks(blocks.chain());
			matched.put(s, m);
			longest = Math.max(longest, m);
		}
		int matchedTokens = blocks.tokensFor(longest);
		double matchRate = blocks.promptTokens() == 0 ? 0 : (double) matchedTokens / blocks.promptTokens();
		if (matchRate > cacheThreshold) {
			int best = longest;
			List<InstanceState> holders = accepting.stream().filter(s -> matched.get(s) == best).toList();
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

	private Decision decision(InstanceState chosen, Reason reason, @Nullable PromptBlocks blocks,
			RoutingRequest request) {
		if (blocks == null) {
			return Decision.of(chosen.id(), reason, request);
		}
		int cached = blocks.tokensFor(tree(chosen.id()).peekMatchedBlocks(blocks.chain()));
		return new Decision(chosen.id(), reason, cached, blocks.promptTokens() - cached, -1);
	}

	/**
	 * The router inserts the prompt into the chosen instance's tree, whatever the branch.
	 */
	@Override
	public void onDispatched(RoutingRequest request, Decision decision, InstancePool pool) {
		PromptBlocks blocks = request.blocks();
		if (blocks != null && pool.instance(decision.instanceId()) != null) {
			tree(decision.instanceId()).record(blocks.chain());
		}
	}

	/**
	 * Mesh sync: a peer router replica inserted {@code blocks} into its tree of
	 * {@code instanceId}, and the insert reached this replica, whose tree of that
	 * instance gets it too. Ignored for an instance no longer in {@code pool}.
	 */
	public void peerInserted(String instanceId, PromptBlocks blocks, InstancePool pool) {
		if (pool.instance(instanceId) != null) {
			tree(instanceId).record(blocks.chain());
		}
	}

	/** A removed instance's tree goes with it, as the router removes its tenant. */
	@Override
	public void onMembershipChanged(InstancePool pool) {
		trees.retainMembers(pool);
	}

	/** Blocks held in the tree of {@code instanceId} (0 for an unknown instance). */
	public int treeBlocks(String instanceId) {
		ShadowKvIndex t = trees.find(instanceId);
		return t == null ? 0 : t.size();
	}

	private ShadowKvIndex tree(String instanceId) {
		return trees.get(instanceId);
	}

}

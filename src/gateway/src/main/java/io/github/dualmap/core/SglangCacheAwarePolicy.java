package io.github.dualmap.core;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The SGLang router's {@code cache_aware} policy, in two generations.
 * <p>
 * {@value #NAME}: the sgl-router of the SGLang repository
 * ({@code sgl-router/src/policies/cache_aware.rs}). When in-flight load is imbalanced
 * (max - min above the absolute threshold and max above the relative threshold x min) it
 * takes the shortest queue; otherwise the instance whose approximate tree holds the
 * longest prefix of the prompt if the match rate is above the cache threshold, else the
 * least loaded instance. Each instance's tree is bounded on its own, with LRU eviction.
 * <p>
 * {@value #SMG_NAME}: the SGLang Model Gateway that router became (smg-project/smg
 * {@code model_gateway/src/policies/cache_aware.rs} at {@code 04def283}, after smg #2341
 * of 2026-08-27; HTTP workers, CLI defaults). No fleet-wide imbalance check (its KV-usage
 * triggers are off by default). A match above the cache threshold makes the instances
 * holding the longest match the candidates, less those whose in-flight count exceeds both
 * {@code balance_rel_threshold} x the mean and the mean + {@code balance_abs_threshold}
 * (the spill gate of smg #2161); with no holder left the candidates are the instances
 * that do not trip the gate themselves; a low match makes every instance a candidate. The
 * {@link ExpectedWaitSelector} picks one of them from the engines' polled loads. One tree
 * for all instances with one bound, trimmed every eviction interval
 * ({@link SharedPrefixTree}).
 * <p>
 * Both learn their trees only from this router's own routing (and, with mesh sync, its
 * peers' inserts), and insert the prompt for the chosen instance whatever the branch.
 */
public final class SglangCacheAwarePolicy implements RoutingPolicy {

	/** The registry name of the sgl-router generation. */
	public static final String NAME = "sglang-cache-aware";

	/** The registry name of the SGLang Model Gateway generation. */
	public static final String SMG_NAME = "smg-cache-aware";

	/**
	 * The SGLang Model Gateway's {@code --eviction-interval} default (seconds between
	 * passes that trim the tree to {@code --max-tree-size}).
	 */
	public static final Duration DEFAULT_EVICTION_INTERVAL = Duration.ofSeconds(120);

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

	private final String name;

	// Which generation: the SGLang Model Gateway's rules, or the sgl-router's.
	private final boolean modelGateway;

	// Per-instance trees (sgl-router) or one shared tree (SMG).
	private final ApproximateTrees trees;

	// SMG: the spill gate, and the load selector for the candidates it leaves.
	private final SpillGate gate;

	private final ExpectedWaitSelector selector = new ExpectedWaitSelector(false);

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
		this(blockTokens, cacheThreshold, balanceAbsThreshold, balanceRelThreshold, maxTreeTokens, null);
	}

	private SglangCacheAwarePolicy(int blockTokens, double cacheThreshold, int balanceAbsThreshold,
			double balanceRelThreshold, long maxTreeTokens, @Nullable Duration sharedTreeEvictionInterval) {
		if (blockTokens <= 0) {
			throw new IllegalArgumentException("blockTokens must be > 0 but was " + blockTokens);
		}
		if (!(cacheThreshold >= 0 && cacheThreshold <= 1)) {
			throw new IllegalArgumentException("cacheThreshold must be in [0, 1] but was " + cacheThreshold);
		}
		// Checks the two balance thresholds.
		this.gate = new SpillGate(balanceAbsThreshold, balanceRelThreshold);
		if (maxTreeTokens < blockTokens) {
			throw new IllegalArgumentException(
					"maxTreeTokens must be >= blockTokens (" + blockTokens + ") but was " + maxTreeTokens);
		}
		this.modelGateway = sharedTreeEvictionInterval != null;
		this.name = modelGateway ? SMG_NAME : NAME;
		this.cacheThreshold = cacheThreshold;
		this.balanceAbsThreshold = balanceAbsThreshold;
		this.balanceRelThreshold = balanceRelThreshold;
		int maxTreeBlocks = (int) Math.min(Integer.MAX_VALUE, maxTreeTokens / blockTokens);
		this.trees = sharedTreeEvictionInterval == null ? ApproximateTrees.perInstance(maxTreeBlocks)
				: new SharedPrefixTree(maxTreeBlocks, sharedTreeEvictionInterval.toNanos());
	}

	/**
	 * The SGLang Model Gateway generation ({@value #SMG_NAME}) with its CLI defaults (the
	 * same thresholds and tree size as the sgl-router's, eviction every
	 * {@link #DEFAULT_EVICTION_INTERVAL}), trees counted in blocks of
	 * {@code settings.blockTokens()}.
	 */
	public static SglangCacheAwarePolicy modelGateway(SchedulerSettings settings) {
		return modelGateway(settings.blockTokens(), DEFAULT_CACHE_THRESHOLD, DEFAULT_BALANCE_ABS_THRESHOLD,
				DEFAULT_BALANCE_REL_THRESHOLD, DEFAULT_MAX_TREE_TOKENS, DEFAULT_EVICTION_INTERVAL);
	}

	/**
	 * The SGLang Model Gateway generation ({@value #SMG_NAME}): the spill gate and one
	 * tree of at most {@code maxTreeTokens} for all instances, trimmed every
	 * {@code evictionInterval}.
	 */
	public static SglangCacheAwarePolicy modelGateway(int blockTokens, double cacheThreshold, int balanceAbsThreshold,
			double balanceRelThreshold, long maxTreeTokens, Duration evictionInterval) {
		if (evictionInterval.isNegative() || evictionInterval.isZero()) {
			throw new IllegalArgumentException("evictionInterval must be > 0 but was " + evictionInterval);
		}
		return new SglangCacheAwarePolicy(blockTokens, cacheThreshold, balanceAbsThreshold, balanceRelThreshold,
				maxTreeTokens, evictionInterval);
	}

	@Override
	public String name() {
		return name;
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		List<InstanceState> accepting = pool.acceptingInstances();
		if (accepting.isEmpty()) {
			return null;
		}
		return modelGateway ? chooseModelGateway(request, accepting, pool) : chooseRouter(request, accepting);
	}

	private Decision chooseRouter(RoutingRequest request, List<InstanceState> accepting) {
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

	private Decision chooseModelGateway(RoutingRequest request, List<InstanceState> accepting, InstancePool pool) {
		PromptBlocks blocks = request.blocks();
		List<InstanceState> holders = blocks == null ? null : longestMatchAboveThreshold(blocks, accepting);
		if (holders == null) {
			return decision(selector.select(accepting, request, pool), Reason.LOAD, blocks, request);
		}
		List<InstanceState> passing = gate.passing(holders, accepting);
		if (passing.isEmpty()) {
			return decision(selector.select(gate.spillTargets(accepting), request, pool), Reason.LOAD, blocks, request);
		}
		return decision(selector.select(passing, request, pool), Reason.AFFINITY, blocks, request);
	}

	/**
	 * The instances holding the longest match of {@code blocks} when its share of the
	 * prompt is above the cache threshold, else {@code null}.
	 */
	private @Nullable List<InstanceState> longestMatchAboveThreshold(PromptBlocks blocks,
			List<InstanceState> accepting) {
		Map<InstanceState, Integer> matched = new HashMap<>();
		int longest = 0;
		for (InstanceState s : accepting) {
			int m = trees.matchedBlocks(s.id(), blocks.chain());
			matched.put(s, m);
			longest = Math.max(longest, m);
		}
		int matchedTokens = blocks.tokensFor(longest);
		double matchRate = blocks.promptTokens() == 0 ? 0 : (double) matchedTokens / blocks.promptTokens();
		if (!(matchRate > cacheThreshold)) {
			return null;
		}
		int best = longest;
		return accepting.stream().filter(s -> matched.get(s) == best).toList();
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
		int cached = blocks.tokensFor(trees.matchedBlocks(chosen.id(), blocks.chain()));
		return new Decision(chosen.id(), reason, cached, blocks.promptTokens() - cached, -1);
	}

	/**
	 * The router inserts the prompt into the chosen instance's tree, whatever the branch.
	 */
	@Override
	public void onDispatched(RoutingRequest request, Decision decision, InstancePool pool) {
		PromptBlocks blocks = request.blocks();
		if (blocks != null && pool.instance(decision.instanceId()) != null) {
			trees.record(decision.instanceId(), blocks.chain(), pool.now());
		}
	}

	/**
	 * Mesh sync: a peer router replica inserted {@code blocks} into its tree of
	 * {@code instanceId}, and the insert reached this replica, whose tree of that
	 * instance gets it too. Ignored for an instance no longer in {@code pool}.
	 */
	public void peerInserted(String instanceId, PromptBlocks blocks, InstancePool pool) {
		if (pool.instance(instanceId) != null) {
			trees.record(instanceId, blocks.chain(), pool.now());
		}
	}

	/** A removed instance's tree goes with it, as the router removes its tenant. */
	@Override
	public void onMembershipChanged(InstancePool pool) {
		Set<String> members = pool.memberIds();
		trees.retain(members);
		selector.retain(members);
	}

	/** Blocks held in the tree of {@code instanceId} (0 for an unknown instance). */
	public int treeBlocks(String instanceId) {
		return trees.blocks(instanceId);
	}

}

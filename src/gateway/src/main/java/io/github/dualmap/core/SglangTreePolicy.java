package io.github.dualmap.core;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

import org.jspecify.annotations.Nullable;

/**
 * What the SGLang router's two generations of {@code cache_aware}
 * ({@link SglangCacheAwarePolicy}, {@link SmgCacheAwarePolicy}) share: approximate trees
 * of the prompts this router sent, learned only from its own routing (and, with mesh
 * sync, its peers' inserts); the longest match and whether its share of the prompt is
 * above the cache threshold; and the insert of the prompt for the chosen instance,
 * whatever the branch. The generations differ in their trees and in what they do with the
 * match.
 */
public abstract sealed class SglangTreePolicy implements RoutingPolicy
		permits SglangCacheAwarePolicy, SmgCacheAwarePolicy {

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

	private final ApproximateTrees trees;

	/**
	 * @param blockTokens tokens per block of the prompt chains this policy sees, > 0
	 * @param cacheThreshold match rate above which the longest match decides, in [0, 1]
	 * @param balanceAbsThreshold the generation's absolute load margin, >= 0
	 * @param balanceRelThreshold its relative load margin, >= 1 and finite
	 * @param maxTreeTokens tokens a tree may hold, >= {@code blockTokens}
	 * @param trees the trees, made from the bound in blocks
	 */
	SglangTreePolicy(int blockTokens, double cacheThreshold, int balanceAbsThreshold, double balanceRelThreshold,
			long maxTreeTokens, IntFunction<ApproximateTrees> trees) {
		if (blockTokens <= 0) {
			throw new IllegalArgumentException("blockTokens must be > 0 but was " + blockTokens);
		}
		if (!(cacheThreshold >= 0 && cacheThreshold <= 1)) {
			throw new IllegalArgumentException("cacheThreshold must be in [0, 1] but was " + cacheThreshold);
		}
		SpillGate.checkThresholds(balanceAbsThreshold, balanceRelThreshold);
		if (maxTreeTokens < blockTokens) {
			throw new IllegalArgumentException(
					"maxTreeTokens must be >= blockTokens (" + blockTokens + ") but was " + maxTreeTokens);
		}
		this.cacheThreshold = cacheThreshold;
		this.trees = trees.apply((int) Math.min(Integer.MAX_VALUE, maxTreeTokens / blockTokens));
	}

	/**
	 * The instances of {@code accepting} holding the longest match of {@code blocks} when
	 * its share of the prompt is above the cache threshold, else {@code null}.
	 */
	final @Nullable List<InstanceState> longestMatchAboveThreshold(PromptBlocks blocks, List<InstanceState> accepting) {
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

	/** The decision for {@code chosen}, its cached tokens by its tree. */
	final Decision decision(InstanceState chosen, Reason reason, @Nullable PromptBlocks blocks,
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
	public final void onDispatched(RoutingRequest request, Decision decision, InstancePool pool) {
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
	public final void peerInserted(String instanceId, PromptBlocks blocks, InstancePool pool) {
		if (pool.instance(instanceId) != null) {
			trees.record(instanceId, blocks.chain(), pool.now());
		}
	}

	/** A removed instance's tree goes with it, as the router removes its tenant. */
	@Override
	public void onMembershipChanged(InstancePool pool) {
		trees.retain(pool.memberIds());
	}

	/** Blocks held in the tree of {@code instanceId} (0 for an unknown instance). */
	public final int treeBlocks(String instanceId) {
		return trees.blocks(instanceId);
	}

}

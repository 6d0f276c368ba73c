package io.github.dualmap.core;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The SGLang Model Gateway's {@code cache_aware} policy ({@value #NAME}; smg-project/smg
 * {@code model_gateway/src/policies/cache_aware.rs} at {@code 04def283}, after smg #2341
 * of 2026-08-27; HTTP workers, CLI defaults), the successor of
 * {@link SglangCacheAwarePolicy}. No fleet-wide imbalance check (its KV-usage triggers
 * are off by default). A match above the cache threshold makes the instances holding the
 * longest match the candidates, less those whose in-flight count exceeds both
 * {@code balance_rel_threshold} x the mean and the mean + {@code balance_abs_threshold}
 * (the {@link SpillGate} of smg #2161); with no holder left the candidates are the
 * instances that do not trip the gate themselves; a low match makes every instance a
 * candidate. The {@link ExpectedWaitSelector} picks one of them from the engines' polled
 * loads. One tree for all instances with one bound, trimmed every eviction interval
 * ({@link SharedPrefixTree}).
 */
public final class SmgCacheAwarePolicy extends SglangTreePolicy {

	/** The registry name. */
	public static final String NAME = "smg-cache-aware";

	/**
	 * The SGLang Model Gateway's {@code --eviction-interval} default (seconds between
	 * passes that trim the tree to {@code --max-tree-size}).
	 */
	public static final Duration DEFAULT_EVICTION_INTERVAL = Duration.ofSeconds(120);

	private final SpillGate gate;

	private final ExpectedWaitSelector selector = new ExpectedWaitSelector(false);

	/**
	 * The gateway's CLI defaults (the same thresholds and tree size as the sgl-router's,
	 * eviction every {@link #DEFAULT_EVICTION_INTERVAL}), the tree counted in blocks of
	 * {@code settings.blockTokens()}.
	 */
	public SmgCacheAwarePolicy(SchedulerSettings settings) {
		this(settings.blockTokens(), DEFAULT_CACHE_THRESHOLD, DEFAULT_BALANCE_ABS_THRESHOLD,
				DEFAULT_BALANCE_REL_THRESHOLD, DEFAULT_MAX_TREE_TOKENS, DEFAULT_EVICTION_INTERVAL);
	}

	/**
	 * @param blockTokens tokens per block of the prompt chains this policy sees
	 * @param cacheThreshold match rate above which the longest match's holders are the
	 * candidates, in [0, 1]
	 * @param balanceAbsThreshold a candidate spills above the mean + this in flight, >= 0
	 * @param balanceRelThreshold and above this x the mean, >= 1 and finite
	 * @param maxTreeTokens tokens the one tree may hold after an eviction pass
	 * @param evictionInterval time between eviction passes, > 0
	 */
	public SmgCacheAwarePolicy(int blockTokens, double cacheThreshold, int balanceAbsThreshold,
			double balanceRelThreshold, long maxTreeTokens, Duration evictionInterval) {
		super(blockTokens, cacheThreshold, balanceAbsThreshold, balanceRelThreshold, maxTreeTokens,
				maxTreeBlocks -> new SharedPrefixTree(maxTreeBlocks, positive(evictionInterval).toNanos()));
		this.gate = new SpillGate(balanceAbsThreshold, balanceRelThreshold);
	}

	private static Duration positive(Duration evictionInterval) {
		if (evictionInterval.isNegative() || evictionInterval.isZero()) {
			throw new IllegalArgumentException("evictionInterval must be > 0 but was " + evictionInterval);
		}
		return evictionInterval;
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
		List<InstanceState> holders = blocks == null ? null : longestMatchAboveThreshold(blocks, accepting);
		if (holders == null) {
			return decision(selector.select(accepting, request, pool), Reason.LOAD, blocks, request);
		}
		SpillGate.Candidates candidates = gate.candidates(holders, accepting);
		return decision(selector.select(candidates.instances(), request, pool),
				candidates.spilled() ? Reason.LOAD : Reason.AFFINITY, blocks, request);
	}

	/** A removed instance's tree and polled load go with it. */
	@Override
	public void onMembershipChanged(InstancePool pool) {
		super.onMembershipChanged(pool);
		selector.retain(pool.memberIds());
	}

}

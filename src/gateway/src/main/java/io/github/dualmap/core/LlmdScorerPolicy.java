package io.github.dualmap.core;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * llm-d's default scheduling profile (the inference scheduler's filter, score, pick
 * cycle): a weighted sum of the queue scorer (scraped waiting queue, min-max normalised
 * across instances), the KV-cache utilisation scorer ({@code 1 - kvUsage}) and the
 * approximate prefix-cache scorer (share of the prompt's blocks found in an LRU index of
 * this router's own routing decisions), picked by maximum score. A scorer whose scraped
 * input is stale or missing gives the neutral score 0.5: unknown is neither idle nor
 * saturated. With a weight for it, also the no-hit LRU scorer of llm-d's
 * {@code optimized-baseline} guide: a request no instance's index holds any block of (a
 * cold one) scores the instances by how long ago each last took a cold request (never:
 * highest, in instance order; then least recently first), every other request 0.5 on
 * every instance; an instance a cold request went to becomes the most recent.
 */
public final class LlmdScorerPolicy implements RoutingPolicy {

	/** The registry name. */
	public static final String NAME = "llmd-scorer";

	/** Weight of the queue scorer in the default profile. */
	public static final double DEFAULT_QUEUE_WEIGHT = 2;

	/** Weight of the KV-cache utilisation scorer in the default profile. */
	public static final double DEFAULT_KV_CACHE_WEIGHT = 2;

	/** Weight of the prefix-cache scorer in the default profile. */
	public static final double DEFAULT_PREFIX_WEIGHT = 3;

	/**
	 * Tokens of the prompt the prefix scorer matches at most: the plugin's 256 blocks of
	 * 16 tokens.
	 */
	public static final int DEFAULT_MAX_PREFIX_TOKENS = 256 * 16;

	/**
	 * Tokens one instance's prefix index holds until the engine's capacity is scraped:
	 * the plugin's 31,250 LRU entries of 16 tokens.
	 */
	public static final long DEFAULT_INDEX_CAPACITY_TOKENS = 31_250L * 16;

	/**
	 * Tokens of the prompt the prefix scorer matches at most in llm-d's current
	 * approximate prefix producer ({@code maxPrefixTokensToMatch}, a 128K context).
	 */
	public static final int CURRENT_MAX_PREFIX_TOKENS = 131_072;

	/** Weight of the no-hit LRU scorer in the {@code optimized-baseline} guide. */
	public static final double OPTIMIZED_BASELINE_NO_HIT_LRU_WEIGHT = 2;

	/** Instances the no-hit LRU scorer remembers ({@code lruSize}). */
	static final int NO_HIT_LRU_SIZE = 1024;

	/** Score of a scorer that has no fresh input for an instance. */
	static final double NEUTRAL = 0.5;

	private final double queueWeight;

	private final double kvCacheWeight;

	private final double prefixWeight;

	private final LlmdPrefixIndex index;

	private final double noHitLruWeight;

	// Instances that took a cold request, least recently first (the no-hit LRU scorer's
	// order); guarded by this.
	private final LinkedHashMap<String, Boolean> coldOrder = new LinkedHashMap<>();

	private final TieBreaker ties = new TieBreaker();

	/**
	 * The {@code optimized-baseline} guide's profile: the default profile's scorers, the
	 * prefix matched over up to {@value #CURRENT_MAX_PREFIX_TOKENS} tokens, and the
	 * no-hit LRU scorer at weight {@value #OPTIMIZED_BASELINE_NO_HIT_LRU_WEIGHT}.
	 */
	public static LlmdScorerPolicy optimizedBaseline(int blockTokens) {
		return new LlmdScorerPolicy(blockTokens, DEFAULT_QUEUE_WEIGHT, DEFAULT_KV_CACHE_WEIGHT, DEFAULT_PREFIX_WEIGHT,
				CURRENT_MAX_PREFIX_TOKENS, DEFAULT_INDEX_CAPACITY_TOKENS, OPTIMIZED_BASELINE_NO_HIT_LRU_WEIGHT);
	}

	/**
	 * The default profile, indexes counted in blocks of {@code settings.blockTokens()}.
	 */
	public LlmdScorerPolicy(SchedulerSettings settings) {
		this(settings.blockTokens(), DEFAULT_QUEUE_WEIGHT, DEFAULT_KV_CACHE_WEIGHT, DEFAULT_PREFIX_WEIGHT,
				DEFAULT_MAX_PREFIX_TOKENS, DEFAULT_INDEX_CAPACITY_TOKENS);
	}

	/**
	 * @param blockTokens tokens per block of the prompt chains this policy sees, > 0
	 * @param queueWeight weight of the queue scorer, >= 0
	 * @param kvCacheWeight weight of the KV-cache utilisation scorer, >= 0
	 * @param prefixWeight weight of the prefix-cache scorer, >= 0
	 * @param maxPrefixTokens prompt tokens the prefix scorer considers, > 0
	 * ({@link Integer#MAX_VALUE}: the whole prompt)
	 * @param indexCapacityTokens tokens per instance in the prefix index until the
	 * engine's capacity is known, > 0
	 */
	public LlmdScorerPolicy(int blockTokens, double queueWeight, double kvCacheWeight, double prefixWeight,
			int maxPrefixTokens, long indexCapacityTokens) {
		this(blockTokens, queueWeight, kvCacheWeight, prefixWeight, maxPrefixTokens, indexCapacityTokens, 0);
	}

	/**
	 * As above, with the no-hit LRU scorer at {@code noHitLruWeight} (>= 0; 0: none).
	 */
	public LlmdScorerPolicy(int blockTokens, double queueWeight, double kvCacheWeight, double prefixWeight,
			int maxPrefixTokens, long indexCapacityTokens, double noHitLruWeight) {
		this.index = new LlmdPrefixIndex(blockTokens, maxPrefixTokens, indexCapacityTokens);
		weight("queueWeight", queueWeight);
		weight("kvCacheWeight", kvCacheWeight);
		weight("prefixWeight", prefixWeight);
		weight("noHitLruWeight", noHitLruWeight);
		this.queueWeight = queueWeight;
		this.kvCacheWeight = kvCacheWeight;
		this.prefixWeight = prefixWeight;
		this.noHitLruWeight = noHitLruWeight;
	}

	private static void weight(String name, double w) {
		if (!(w >= 0) || Double.isInfinite(w)) {
			throw new IllegalArgumentException(name + " must be >= 0 and finite but was " + w);
		}
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
		LoadScores load = LoadScores.of(accepting, pool);
		PromptBlocks blocks = request.blocks();
		long[] considered = blocks == null ? new long[0] : index.considered(blocks);
		Map<InstanceState, Integer> matched = new HashMap<>();
		int longest = 0;
		for (InstanceState s : accepting) {
			int m = index.matched(s.id(), considered);
			matched.put(s, m);
			longest = Math.max(longest, m);
		}
		Map<String, Double> noHit = this.noHitLruWeight > 0 ? noHitScores(accepting, longest == 0) : Map.of();
		InstanceState chosen = ties.lowest(accepting, s -> {
			double prefix = considered.length == 0 ? 0 : (double) matched.get(s) / considered.length;
			double lru = this.noHitLruWeight > 0 ? this.noHitLruWeight * noHit.get(s.id()) : 0;
			return -(load.score(s, queueWeight, kvCacheWeight) + prefixWeight * prefix + lru);
		});
		int m = matched.get(chosen);
		Reason reason = m > 0 && m == longest ? Reason.AFFINITY : Reason.LOAD;
		if (blocks == null) {
			return Decision.of(chosen.id(), reason, request);
		}
		int cached = blocks.tokensFor(m);
		return new Decision(chosen.id(), reason, cached, blocks.promptTokens() - cached, -1);
	}

	/**
	 * The no-hit LRU scorer's scores of {@code accepting}, by id: 0.5 each for a request
	 * some instance holds a block of; for a cold one, rank r (instances never sent a cold
	 * request first, in instance order, then the others least recently first, by their
	 * place among every instance remembered) scores {@code 1 - r / (n - 1)}, at least 0.
	 */
	private synchronized Map<String, Double> noHitScores(List<InstanceState> accepting, boolean cold) {
		Map<String, Double> scores = new HashMap<>();
		int n = accepting.size();
		if (!cold || n == 1) {
			accepting.forEach(s -> scores.put(s.id(), cold ? 1.0 : NEUTRAL));
			return scores;
		}
		Map<String, Integer> position = new HashMap<>();
		for (String id : this.coldOrder.keySet()) {
			position.put(id, position.size());
		}
		int neverUsed = 0;
		for (InstanceState s : accepting) {
			if (!position.containsKey(s.id())) {
				scores.put(s.id(), 1.0 - (double) neverUsed++ / (n - 1));
			}
		}
		for (InstanceState s : accepting) {
			Integer p = position.get(s.id());
			if (p != null) {
				scores.put(s.id(), Math.max(0, 1.0 - (double) (neverUsed + p) / (n - 1)));
			}
		}
		return scores;
	}

	/** {@code instanceId} took a cold request: it becomes the most recent. */
	private synchronized void tookCold(String instanceId) {
		this.coldOrder.remove(instanceId);
		this.coldOrder.put(instanceId, Boolean.TRUE);
		if (this.coldOrder.size() > NO_HIT_LRU_SIZE) {
			this.coldOrder.remove(this.coldOrder.keySet().iterator().next());
		}
	}

	/**
	 * What llm-d's load scorers read, once per decision: each accepting instance's fresh
	 * engine snapshot and the range of their queue lengths.
	 */
	record LoadScores(Map<InstanceState, @Nullable EngineSnapshot> engines, int minWaiting, int maxWaiting) {

		static LoadScores of(List<InstanceState> accepting, InstancePool pool) {
			long now = pool.now();
			long staleAfter = pool.settings().staleAfterNanos();
			Map<InstanceState, @Nullable EngineSnapshot> engines = new HashMap<>();
			int minWaiting = Integer.MAX_VALUE;
			int maxWaiting = Integer.MIN_VALUE;
			for (InstanceState s : accepting) {
				EngineSnapshot e = s.freshEngine(now, staleAfter);
				engines.put(s, e);
				if (e != null && e.waiting() >= 0) {
					minWaiting = Math.min(minWaiting, e.waiting());
					maxWaiting = Math.max(maxWaiting, e.waiting());
				}
			}
			return new LoadScores(engines, minWaiting, maxWaiting);
		}

		/** The weighted sum of the queue and KV-cache utilisation scores of {@code s}. */
		double score(InstanceState s, double queueWeight, double kvCacheWeight) {
			EngineSnapshot e = this.engines.get(s);
			return queueWeight * queueScore(e, this.minWaiting, this.maxWaiting) + kvCacheWeight * kvCacheScore(e);
		}

	}

	/**
	 * The queue scorer: {@code (max - waiting) / (max - min)} over instances with a fresh
	 * queue length, 1 when they are all equal, neutral when this one is unknown.
	 */
	static double queueScore(@Nullable EngineSnapshot e, int minWaiting, int maxWaiting) {
		if (e == null || e.waiting() < 0) {
			return NEUTRAL;
		}
		if (maxWaiting == minWaiting) {
			return 1.0;
		}
		return (double) (maxWaiting - e.waiting()) / (maxWaiting - minWaiting);
	}

	/** The KV-cache utilisation scorer: {@code 1 - kvUsage}, neutral when unknown. */
	static double kvCacheScore(@Nullable EngineSnapshot e) {
		if (e == null || !Double.isFinite(e.kvUsage())) {
			return NEUTRAL;
		}
		return 1 - Math.max(0, Math.min(1, e.kvUsage()));
	}

	/**
	 * After the pick the prompt's blocks enter the chosen instance's index, sized to the
	 * engine's scraped KV capacity when known (the plugin's auto-tune).
	 */
	@Override
	public void onDispatched(RoutingRequest request, Decision decision, InstancePool pool) {
		PromptBlocks blocks = request.blocks();
		InstanceState s = pool.instance(decision.instanceId());
		if (blocks == null || s == null) {
			return;
		}
		long[] considered = index.considered(blocks);
		if (this.noHitLruWeight > 0 && index.cold(considered, pool)) {
			tookCold(s.id());
		}
		index.record(s, considered, pool);
	}

	@Override
	public void onMembershipChanged(InstancePool pool) {
		index.retainMembers(pool);
	}

	/**
	 * Blocks held in the prefix index of {@code instanceId} (0 for an unknown instance).
	 */
	public int indexBlocks(String instanceId) {
		return index.size(instanceId);
	}

}

package io.github.dualmap.core;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * llm-d's inference scheduler in its precise-prefix-cache configuration (the
 * {@code precise-prefix-cache-aware} guide): the precise prefix-cache scorer, fed by the
 * engines' KV events, with the kv-cache-utilization and queue scorers, weights 3 / 2 / 2,
 * max-score picker; and flow control: while the saturation detector finds the pool
 * saturated, arrivals wait in the scheduler's queue ({@link AdmissionHold}).
 * <p>
 * Precise prefix score: each instance's count of the prompt's engine blocks cached there
 * from the first block on (the KV-cache indexer's longest-prefix score, from the events
 * in {@link KvEventIndex}), min-max normalised over the instances with a hit (all equal:
 * 1), 0 without a hit. The load scorers are {@link LlmdScorerPolicy}'s. Saturation: no
 * accepting instance has metrics younger than the staleness threshold with a waiting
 * queue of at most the queue-depth threshold and KV usage at most the utilisation
 * threshold. Ties go to the instance a hash of the request's id picks (the picker
 * shuffles the endpoints first), so router replicas do not pick in lockstep.
 */
public final class LlmdPrecisePolicy implements RoutingPolicy, AdmissionHold, KvEventFeed.Consumer {

	/** The simulator's row name. */
	public static final String NAME = "llmd-precise";

	/** Weight of the precise prefix-cache scorer in the guide's profile. */
	public static final double DEFAULT_PREFIX_WEIGHT = 3;

	/** Weight of the kv-cache-utilization scorer in the guide's profile. */
	public static final double DEFAULT_KV_CACHE_WEIGHT = 2;

	/** Weight of the queue scorer in the guide's profile. */
	public static final double DEFAULT_QUEUE_WEIGHT = 2;

	/** Saturation detector {@code DefaultQueueDepthThreshold}. */
	public static final int DEFAULT_QUEUE_DEPTH_THRESHOLD = 5;

	/** Saturation detector {@code DefaultKVCacheUtilThreshold}. */
	public static final double DEFAULT_KV_CACHE_UTIL_THRESHOLD = 0.8;

	/** Saturation detector {@code DefaultMetricsStalenessThreshold}: 200 ms. */
	public static final long DEFAULT_METRICS_STALENESS_NANOS = 200_000_000L;

	private final double prefixWeight;

	private final double kvCacheWeight;

	private final double queueWeight;

	private final int queueDepthThreshold;

	private final double kvCacheUtilThreshold;

	private final long stalenessNanos;

	private @Nullable KvEventFeed feed;

	private final TieBreaker ties = new TieBreaker();

	public LlmdPrecisePolicy() {
		this(DEFAULT_PREFIX_WEIGHT, DEFAULT_KV_CACHE_WEIGHT, DEFAULT_QUEUE_WEIGHT, DEFAULT_QUEUE_DEPTH_THRESHOLD,
				DEFAULT_KV_CACHE_UTIL_THRESHOLD, DEFAULT_METRICS_STALENESS_NANOS);
	}

	/**
	 * @param prefixWeight weight of the precise prefix scorer, >= 0
	 * @param kvCacheWeight weight of the KV-cache utilisation scorer, >= 0
	 * @param queueWeight weight of the queue scorer, >= 0
	 * @param queueDepthThreshold waiting requests above which an instance is saturated
	 * @param kvCacheUtilThreshold KV usage (0-1) above which an instance is saturated
	 * @param stalenessNanos metrics older than this make an instance saturated, > 0
	 */
	public LlmdPrecisePolicy(double prefixWeight, double kvCacheWeight, double queueWeight, int queueDepthThreshold,
			double kvCacheUtilThreshold, long stalenessNanos) {
		for (double w : new double[] { prefixWeight, kvCacheWeight, queueWeight }) {
			if (!(w >= 0) || Double.isInfinite(w)) {
				throw new IllegalArgumentException("weights must be >= 0 and finite but one was " + w);
			}
		}
		if (queueDepthThreshold < 0) {
			throw new IllegalArgumentException("queueDepthThreshold must be >= 0 but was " + queueDepthThreshold);
		}
		if (!(kvCacheUtilThreshold >= 0 && kvCacheUtilThreshold <= 1)) {
			throw new IllegalArgumentException(
					"kvCacheUtilThreshold must be in [0, 1] but was " + kvCacheUtilThreshold);
		}
		if (stalenessNanos <= 0) {
			throw new IllegalArgumentException("stalenessNanos must be > 0 but was " + stalenessNanos);
		}
		this.prefixWeight = prefixWeight;
		this.kvCacheWeight = kvCacheWeight;
		this.queueWeight = queueWeight;
		this.queueDepthThreshold = queueDepthThreshold;
		this.kvCacheUtilThreshold = kvCacheUtilThreshold;
		this.stalenessNanos = stalenessNanos;
	}

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public void attach(KvEventFeed feed) {
		this.feed = feed;
	}

	private KvEventFeed feed() {
		KvEventFeed f = feed;
		if (f == null) {
			throw new IllegalStateException(NAME + " routes on engine KV events and has no event feed");
		}
		return f;
	}

	/**
	 * The saturation detector: saturated unless some accepting instance has fresh metrics
	 * with a short enough queue and enough free KV cache.
	 */
	@Override
	public boolean mustHold(InstancePool pool) {
		List<InstanceState> accepting = pool.acceptingInstances();
		if (accepting.isEmpty()) {
			return false;
		}
		for (InstanceState s : accepting) {
			EngineSnapshot e = s.freshEngine(pool.now(), stalenessNanos);
			if (e != null && e.waiting() >= 0 && e.waiting() <= queueDepthThreshold && Double.isFinite(e.kvUsage())
					&& e.kvUsage() <= kvCacheUtilThreshold) {
				return false;
			}
		}
		return true;
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		KvEventFeed f = feed();
		List<InstanceState> accepting = pool.acceptingInstances();
		if (accepting.isEmpty()) {
			return null;
		}
		LlmdScorerPolicy.LoadScores load = LlmdScorerPolicy.LoadScores.of(accepting, pool);
		long[] chain = request.blocks() == null ? null : f.engineBlocks().of(request);
		Map<InstanceState, Integer> hits = new HashMap<>();
		int minHit = Integer.MAX_VALUE;
		int maxHit = 0;
		for (InstanceState s : accepting) {
			int h = chain == null ? 0 : f.index().overlapBlocks(s.id(), chain);
			hits.put(s, h);
			if (h > 0) {
				minHit = Math.min(minHit, h);
				maxHit = Math.max(maxHit, h);
			}
		}
		int lo = minHit;
		int hi = maxHit;
		InstanceState chosen = ties.lowest(accepting,
				s -> -(prefixWeight * prefixScore(hits.get(s), lo, hi) + load.score(s, queueWeight, kvCacheWeight)),
				request);
		int hit = hits.get(chosen);
		Reason reason = hit > 0 && hit == maxHit ? Reason.AFFINITY : Reason.LOAD;
		if (request.blocks() == null) {
			return Decision.of(chosen.id(), reason, request);
		}
		int cached = Math.min(request.promptTokens(), hit * f.blockTokens());
		return new Decision(chosen.id(), reason, cached, request.promptTokens() - cached, -1);
	}

	/**
	 * The precise scorer's normalisation: min-max over instances with a hit, 1 when they
	 * are all equal, 0 for an instance without a hit.
	 */
	static double prefixScore(int hit, int minHit, int maxHit) {
		if (hit <= 0) {
			return 0;
		}
		if (maxHit == minHit) {
			return 1;
		}
		return (double) (hit - minHit) / (maxHit - minHit);
	}

	@Override
	public void onMembershipChanged(InstancePool pool) {
		KvEventFeed f = feed;
		if (f != null) {
			f.index().retain(pool.instances().stream().map(InstanceState::id).collect(Collectors.toSet()));
		}
	}

}

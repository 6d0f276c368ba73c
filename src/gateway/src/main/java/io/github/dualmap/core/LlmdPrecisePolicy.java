package io.github.dualmap.core;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

import org.jspecify.annotations.Nullable;

/**
 * llm-d's inference scheduler in its precise-prefix-cache configuration (the
 * {@code precise-prefix-cache-aware} guide): the precise prefix-cache scorer, fed by the
 * engines' KV events, with the kv-cache-utilization and queue scorers, weights 2 / 1 / 1,
 * max-score picker; and flow control: while the utilization saturation detector finds the
 * pool saturated, arrivals wait in the flow controller's queue ({@link AdmissionHold}).
 * <p>
 * Precise prefix score: each instance's count of the prompt's engine blocks cached there
 * from the first block on (the KV-cache indexer's longest-prefix score, from the events
 * in {@link KvEventIndex}) over the prompt's full blocks, at most 1; 0 without a hit. The
 * load scorers are {@link LlmdScorerPolicy}'s. Saturation: the mean over the accepting
 * instances of each one's {@code max(waiting / queueDepthThreshold, kvUsage /
 * kvCacheUtilThreshold)}, 1 for an instance whose metrics are older than the staleness
 * threshold, reaches 1. Ties go to the instance a hash of the request's id picks (the
 * picker shuffles the endpoints first), so router replicas do not pick in lockstep.
 * <p>
 * The full constructor also gives the min-max normalisation of llm-d releases up to
 * v0.8.0 ({@link PrefixNormalisation#MIN_MAX}) and a scheduler without flow control;
 * {@link #minMax()} and {@link #withoutFlowControl()} are the simulator's variant rows.
 */
public final class LlmdPrecisePolicy implements RoutingPolicy, AdmissionHold, KvEventFeed.Consumer {

	/** The simulator's row name. */
	public static final String NAME = "llmd-precise";

	/** Weight of the precise prefix-cache scorer in the guide's profile. */
	public static final double DEFAULT_PREFIX_WEIGHT = 2;

	/** Weight of the kv-cache-utilization scorer in the guide's profile. */
	public static final double DEFAULT_KV_CACHE_WEIGHT = 1;

	/** Weight of the queue scorer in the guide's profile. */
	public static final double DEFAULT_QUEUE_WEIGHT = 1;

	/**
	 * How the precise scorer turns each instance's cached-prefix length into a score.
	 */
	public enum PrefixNormalisation {

		/**
		 * The instance's cached blocks over the prompt's blocks, at most 1 (the scorer's
		 * {@code absoluteScoredPods}, the default).
		 */
		ABSOLUTE,

		/**
		 * Min-max over the instances with a hit: {@code (hit - min) / (max - min)}, 1 for
		 * every instance with a hit when their hits are equal, 0 without a hit (the
		 * scorer's {@code indexedScoresToNormalizedScoredPods}, llm-d releases up to
		 * v0.8.0).
		 */
		MIN_MAX

	}

	/**
	 * Weight of the precise prefix-cache scorer in the guide's profile while the scorer
	 * normalised min-max ({@link PrefixNormalisation#MIN_MAX}).
	 */
	public static final double MIN_MAX_PREFIX_WEIGHT = 3;

	/**
	 * Weight of the kv-cache-utilization scorer in the guide's profile while the prefix
	 * scorer normalised min-max.
	 */
	public static final double MIN_MAX_KV_CACHE_WEIGHT = 2;

	/**
	 * Weight of the queue scorer in the guide's profile while the prefix scorer
	 * normalised min-max.
	 */
	public static final double MIN_MAX_QUEUE_WEIGHT = 2;

	/** Pool saturation at which flow control stops dispatching (its usage limit). */
	static final double SATURATED = 1.0;

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

	private final PrefixNormalisation normalisation;

	private final boolean flowControl;

	private @Nullable KvEventFeed feed;

	private final TieBreaker ties = new TieBreaker();

	/** The guide's profile with flow control. */
	public LlmdPrecisePolicy() {
		this(DEFAULT_PREFIX_WEIGHT, DEFAULT_KV_CACHE_WEIGHT, DEFAULT_QUEUE_WEIGHT, DEFAULT_QUEUE_DEPTH_THRESHOLD,
				DEFAULT_KV_CACHE_UTIL_THRESHOLD, DEFAULT_METRICS_STALENESS_NANOS);
	}

	/**
	 * The profile of llm-d releases up to v0.8.0: min-max prefix scores
	 * ({@link PrefixNormalisation#MIN_MAX}) with the guide's weights of then
	 * ({@value #MIN_MAX_PREFIX_WEIGHT} / {@value #MIN_MAX_KV_CACHE_WEIGHT} /
	 * {@value #MIN_MAX_QUEUE_WEIGHT}), the same saturation detector, with flow control.
	 */
	public static LlmdPrecisePolicy minMax() {
		return new LlmdPrecisePolicy(MIN_MAX_PREFIX_WEIGHT, MIN_MAX_KV_CACHE_WEIGHT, MIN_MAX_QUEUE_WEIGHT,
				DEFAULT_QUEUE_DEPTH_THRESHOLD, DEFAULT_KV_CACHE_UTIL_THRESHOLD, DEFAULT_METRICS_STALENESS_NANOS,
				PrefixNormalisation.MIN_MAX, true);
	}

	/** The guide's profile without flow control: every arrival is routed at once. */
	public static LlmdPrecisePolicy withoutFlowControl() {
		return new LlmdPrecisePolicy(DEFAULT_PREFIX_WEIGHT, DEFAULT_KV_CACHE_WEIGHT, DEFAULT_QUEUE_WEIGHT,
				DEFAULT_QUEUE_DEPTH_THRESHOLD, DEFAULT_KV_CACHE_UTIL_THRESHOLD, DEFAULT_METRICS_STALENESS_NANOS,
				PrefixNormalisation.ABSOLUTE, false);
	}

	/**
	 * The given weights and saturation detector, absolute prefix scores, with flow
	 * control.
	 * @param prefixWeight weight of the precise prefix scorer, >= 0
	 * @param kvCacheWeight weight of the KV-cache utilisation scorer, >= 0
	 * @param queueWeight weight of the queue scorer, >= 0
	 * @param queueDepthThreshold waiting requests at which an instance counts as
	 * saturated by its queue, > 0
	 * @param kvCacheUtilThreshold KV usage (0-1] at which an instance counts as saturated
	 * by its memory
	 * @param stalenessNanos metrics older than this make an instance saturated, > 0
	 */
	public LlmdPrecisePolicy(double prefixWeight, double kvCacheWeight, double queueWeight, int queueDepthThreshold,
			double kvCacheUtilThreshold, long stalenessNanos) {
		this(prefixWeight, kvCacheWeight, queueWeight, queueDepthThreshold, kvCacheUtilThreshold, stalenessNanos,
				PrefixNormalisation.ABSOLUTE, true);
	}

	/**
	 * @param prefixWeight weight of the precise prefix scorer, >= 0
	 * @param kvCacheWeight weight of the KV-cache utilisation scorer, >= 0
	 * @param queueWeight weight of the queue scorer, >= 0
	 * @param queueDepthThreshold waiting requests at which an instance counts as
	 * saturated by its queue, > 0
	 * @param kvCacheUtilThreshold KV usage (0-1] at which an instance counts as saturated
	 * by its memory
	 * @param stalenessNanos metrics older than this make an instance saturated, > 0
	 * @param normalisation how the prefix scorer normalises the instances' cached-prefix
	 * lengths, not null
	 * @param flowControl whether arrivals wait while the pool is saturated; without it
	 * {@link #mustHold} never holds and every request is routed on arrival
	 */
	public LlmdPrecisePolicy(double prefixWeight, double kvCacheWeight, double queueWeight, int queueDepthThreshold,
			double kvCacheUtilThreshold, long stalenessNanos, PrefixNormalisation normalisation, boolean flowControl) {
		for (double w : new double[] { prefixWeight, kvCacheWeight, queueWeight }) {
			if (!(w >= 0) || Double.isInfinite(w)) {
				throw new IllegalArgumentException("weights must be >= 0 and finite but one was " + w);
			}
		}
		if (queueDepthThreshold <= 0) {
			throw new IllegalArgumentException("queueDepthThreshold must be > 0 but was " + queueDepthThreshold);
		}
		if (!(kvCacheUtilThreshold > 0 && kvCacheUtilThreshold <= 1)) {
			throw new IllegalArgumentException(
					"kvCacheUtilThreshold must be in (0, 1] but was " + kvCacheUtilThreshold);
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
		this.normalisation = Objects.requireNonNull(normalisation, "normalisation");
		this.flowControl = flowControl;
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
		return KvEventFeed.attached(feed, NAME);
	}

	/**
	 * Flow control's gate: hold while the saturation detector's pool saturation is at
	 * least 1; never without flow control.
	 */
	@Override
	public boolean mustHold(InstancePool pool) {
		List<InstanceState> accepting = pool.acceptingInstances();
		if (!flowControl || accepting.isEmpty()) {
			return false;
		}
		return saturation(accepting, pool) >= SATURATED;
	}

	/**
	 * The utilization detector's pool saturation: the mean over {@code accepting} of each
	 * instance's {@code max(waiting / queueDepthThreshold, kvUsage /
	 * kvCacheUtilThreshold)}, 1 for an instance without fresh metrics.
	 */
	double saturation(List<InstanceState> accepting, InstancePool pool) {
		double sum = 0;
		for (InstanceState s : accepting) {
			EngineSnapshot e = s.freshEngine(pool.now(), stalenessNanos);
			if (e == null || e.waiting() < 0 || !Double.isFinite(e.kvUsage())) {
				sum += 1;
				continue;
			}
			sum += Math.max((double) e.waiting() / queueDepthThreshold, e.kvUsage() / kvCacheUtilThreshold);
		}
		return sum / accepting.size();
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
		int maxHit = 0;
		int minHit = Integer.MAX_VALUE;
		for (InstanceState s : accepting) {
			int h = chain == null ? 0 : f.index().overlapBlocks(s.id(), chain);
			hits.put(s, h);
			maxHit = Math.max(maxHit, h);
			if (h > 0) {
				minHit = Math.min(minHit, h);
			}
		}
		int total = chain == null ? 0 : chain.length;
		int lowest = minHit;
		int highest = maxHit;
		ToDoubleFunction<InstanceState> prefix = normalisation == PrefixNormalisation.MIN_MAX
				? s -> minMaxPrefixScore(hits.get(s), lowest, highest) : s -> prefixScore(hits.get(s), total);
		InstanceState chosen = ties.lowest(accepting,
				s -> -(prefixWeight * prefix.applyAsDouble(s) + load.score(s, queueWeight, kvCacheWeight)), request);
		int hit = hits.get(chosen);
		Reason reason = hit > 0 && hit == maxHit ? Reason.AFFINITY : Reason.LOAD;
		return f.decision(chosen.id(), reason, hit, request);
	}

	/**
	 * The precise scorer's normalisation: the instance's cached blocks over the prompt's
	 * blocks, at most 1; 0 without a hit or without a full block.
	 */
	static double prefixScore(int hit, int totalBlocks) {
		if (hit <= 0 || totalBlocks <= 0) {
			return 0;
		}
		return Math.min(1.0, (double) hit / totalBlocks);
	}

	/**
	 * The min-max normalisation ({@link PrefixNormalisation#MIN_MAX}): {@code (hit -
	 * minHit) / (maxHit - minHit)} over the instances with a hit, 1 when those hits are
	 * equal, 0 without a hit.
	 * @param hit the instance's cached blocks of the prompt
	 * @param minHit the fewest cached blocks of any instance with a hit
	 * @param maxHit the most cached blocks of any instance
	 */
	static double minMaxPrefixScore(int hit, int minHit, int maxHit) {
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
			f.index().retain(pool.memberIds());
		}
	}

}

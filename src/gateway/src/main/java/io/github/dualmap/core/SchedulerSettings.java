package io.github.dualmap.core;

import java.time.Duration;

/**
 * Every knob of the core scheduler, immutable, with the DualMap reference values as
 * defaults. Build with {@code SchedulerSettings.custom()...build()} or take
 * {@link #ofDefaults()}.
 *
 * @param virtualNodes virtual nodes per unit of instance weight on each ring
 * @param blockTokens nominal tokens per prompt block (sizes the shadow index in blocks)
 * @param minPrefixDepth blocks in the routing key of a prefix that is not hot
 * @param maxPrefixDepth deepest the hot-prefix table may expand a key
 * @param hotWindow requests in the sliding window of the hot-prefix table
 * @param hotRatio share of the window above which a prefix is expanded one block deeper
 * @param hotDropRatio share below which an expansion is dropped
 * @param hotMinSamples requests the window must hold before anything is expanded
 * @param maxHotPrefixes bound on expanded prefixes held at once
 * @param switchFactor the SLO switch fires when the affinity choice's estimate exceeds
 * this x SLO
 * @param switchHitCharge and only when the other candidate's estimate is lower by more
 * than this x the prefill time of the cached prefix the switch gives up (0 = whenever it
 * is lower): that prefix is prefilled again on the other candidate, capacity every
 * request queued there pays for, not only the switched one
 * @param switchMaxKvUsage and never to a candidate holding less of the prompt whose
 * scraped KV cache usage is above this share (1 = off): with the pool at its KV limit a
 * switch into a cold candidate adds a whole prompt's blocks where there is no room, and
 * the preemptions cost more than the switch gains (the queue's rescue has its own limit,
 * {@link QueueSettings#rescueMaxKvUsage()})
 * @param hotspotFactor an instance is a hotspot above this x the pool's mean pending
 * tokens
 * @param hotspotFloorTokens and above this absolute number of pending tokens
 * @param hotspotMaxWaitNanos or when its oldest queued request has waited this long
 * @param thirdChoice when both candidates would miss the SLO, consider the least-loaded
 * instance
 * @param prefillNanosPerToken initial tPrefill of the TTFT model
 * @param baseTtftNanos tBase of the TTFT model
 * @param calibrationAlpha EWMA weight of one observed TTFT in recalibrating tPrefill of
 * the linear model (0 = off; 0 also keeps the attention model at its configured
 * coefficients)
 * @param ttftModel which TTFT model the estimates come from
 * @param attentionNanosPerPair initial attention cost per (query x context) token pair of
 * the attention model
 * @param ttftForgetting forgetting factor of the attention model's online fit, in (0, 1]
 * @param defaultSloNanos TTFT objective of a request that names none
 * @param shadowCapacityTokens assumed KV capacity of an instance until one is scraped
 * @param staleAfterNanos scraped engine state older than this is unknown
 * @param slowStartNanos a new instance's share ramps up over this period (0 = off)
 * @param coldCachedShare a request is cold when none of its first
 * {@code coldCandidatesMax} ring instances is believed to hold at least this share of its
 * prompt; a cold request goes to the least occupied of its first d ring instances (0 =
 * off: every request chooses between its two candidates; NaN = by the dispatch mode,
 * {@link #forDispatchMode})
 * @param coldCandidatesMax the most ring instances a cold request considers, in [2,
 * {@link #MAX_COLD_CANDIDATES}]
 * @param coldLoadStepTokens a cold request considers one ring instance more than two per
 * this many pending uncached tokens on the pool's mean instance
 * @param ttftRelaxAfterNanos an instance whose TTFT model has seen no first token for
 * this long is estimated with the lower of its own fit and the pool's (0 = off)
 * @param engineBacklog estimate the prefill each engine has admitted and not yet computed
 * from its prefix-cache counters ({@link EngineBacklog}), as work ahead there where it is
 * more than this router's own
 * @param tieBreak how a request chooses between candidates that hold the same cached
 * prefix of it ({@link TieBreak})
 */
public record SchedulerSettings(int virtualNodes, int blockTokens, int minPrefixDepth, int maxPrefixDepth,
		int hotWindow, double hotRatio, double hotDropRatio, int hotMinSamples, int maxHotPrefixes, double switchFactor,
		double switchHitCharge, double switchMaxKvUsage, double hotspotFactor, long hotspotFloorTokens,
		long hotspotMaxWaitNanos, boolean thirdChoice, double prefillNanosPerToken, long baseTtftNanos,
		double calibrationAlpha, TtftModel ttftModel, double attentionNanosPerPair, double ttftForgetting,
		long defaultSloNanos, long shadowCapacityTokens, long staleAfterNanos, long slowStartNanos,
		double coldCachedShare, int coldCandidatesMax, long coldLoadStepTokens, long ttftRelaxAfterNanos,
		boolean engineBacklog, TieBreak tieBreak) {

	/** Nominal tokens per prompt block. */
	public static final int DEFAULT_BLOCK_TOKENS = 64;

	/** Blocks in the routing key of a prefix that is not hot. */
	public static final int DEFAULT_MIN_PREFIX_DEPTH = 1;

	/** Deepest the hot-prefix table may expand a key. */
	public static final int DEFAULT_MAX_PREFIX_DEPTH = 16;

	/** Requests in the sliding window of the hot-prefix table. */
	public static final int DEFAULT_HOT_WINDOW = 200;

	/** Share of the window above which a prefix is expanded one block deeper. */
	public static final double DEFAULT_HOT_RATIO = 0.0612;

	/** Share below which an expansion is dropped. */
	public static final double DEFAULT_HOT_DROP_RATIO = 0.02;

	/** Requests the window must hold before anything is expanded. */
	public static final int DEFAULT_HOT_MIN_SAMPLES = 20;

	/** Bound on expanded prefixes held at once. */
	public static final int DEFAULT_MAX_HOT_PREFIXES = 256;

	/** The SLO switch fires above this times the request's SLO. */
	public static final double DEFAULT_SWITCH_FACTOR = 0.5;

	/** The switch's charge per unit of the cached prefix's prefill time it gives up. */
	public static final double DEFAULT_SWITCH_HIT_CHARGE = 1.0;

	/** An instance is a hotspot above this times the pool's mean pending tokens. */
	public static final double DEFAULT_HOTSPOT_FACTOR = 1.5;

	/** And above this absolute number of pending tokens. */
	public static final long DEFAULT_HOTSPOT_FLOOR_TOKENS = 16_384;

	/** Or when its oldest queued request has waited this long. */
	public static final Duration DEFAULT_HOTSPOT_MAX_WAIT = Duration.ofSeconds(3);

	/** The third choice is off unless configured. */
	public static final boolean DEFAULT_THIRD_CHOICE = false;

	/** Initial prefill time per uncached token of the TTFT model. */
	public static final Duration DEFAULT_PREFILL_PER_TOKEN = Duration.ofNanos(25_000);

	/** Fixed part of the time to first token. */
	public static final Duration DEFAULT_BASE_TTFT = Duration.ofMillis(20);

	/** EWMA weight of one observed TTFT in recalibrating the linear model. */
	public static final double DEFAULT_CALIBRATION_ALPHA = 0.05;

	/** TTFT objective of a request that names none. */
	public static final Duration DEFAULT_SLO = Duration.ofSeconds(5);

	/** Assumed KV capacity of an instance in tokens until one is scraped. */
	public static final long DEFAULT_SHADOW_CAPACITY_TOKENS = 900_000;

	/** Scraped engine state older than this is unknown. */
	public static final Duration DEFAULT_STALE_AFTER = Duration.ofSeconds(2);

	/** Slow start is off unless configured. */
	public static final Duration DEFAULT_SLOW_START = Duration.ZERO;

	/**
	 * The share of a prompt below which a request is cold when the cold rule is on. The
	 * SGLang router's low-match threshold ({@code --cache-threshold}, 0.3): below it the
	 * prefix a request gives up is at most a third of its prefill.
	 */
	public static final double COLD_CACHED_SHARE = 0.3;

	/**
	 * The cold rule is left to the dispatch mode unless configured
	 * ({@link #forDispatchMode}): off behind the gateway's queue, whose admission and
	 * moves already spread the requests no instance caches (there the rule serves what
	 * the choice between two candidates serves), on where a pool dispatches at once,
	 * since nothing else spreads them there (docs/benchmarks.md).
	 */
	public static final double DEFAULT_COLD_CACHED_SHARE = Double.NaN;

	/** The most ring instances a cold request considers by default. */
	public static final int DEFAULT_COLD_CANDIDATES_MAX = 4;

	/** The largest {@link #coldCandidatesMax()} accepted. */
	public static final int MAX_COLD_CANDIDATES = 16;

	/**
	 * Pending tokens on the mean instance per extra ring instance a cold request
	 * considers: one default prefill budget of the dispatch queue
	 * ({@code max-prefill-tokens}, 16,384), so the pool counts as loaded once its mean
	 * instance has a full budget waiting or in prefill.
	 */
	public static final long DEFAULT_COLD_LOAD_STEP_TOKENS = 16_384;

	/**
	 * How long an instance's TTFT model may go without an observation before its
	 * estimates take the pool's fit when that is lower: a few seconds, many first tokens
	 * per instance at load, so only an instance the choice avoids (or that has just
	 * joined) goes that long.
	 */
	public static final Duration DEFAULT_TTFT_RELAX_AFTER = Duration.ofSeconds(5);

	/**
	 * Whether the engines' admitted prefill is estimated from their prefix-cache
	 * counters: a gateway replica without replica sync otherwise cannot see another
	 * replica's long prompt in prefill until requests wait behind it. On: four unsynced
	 * replicas serve more with it and one replica as much (docs/benchmarks.md); an engine
	 * without the counters (SGLang) gives no estimate, so it changes nothing there.
	 */
	public static final boolean DEFAULT_ENGINE_BACKLOG = true;

	/**
	 * Ties go to ring order where the candidates' engines show another sender: replicas
	 * without replica sync then place a conversation alike, and one gateway alone keeps
	 * the choice by estimate (docs/benchmarks.md, "Several gateway replicas").
	 */
	public static final TieBreak DEFAULT_TIE_BREAK = TieBreak.AUTO;

	/**
	 * The KV usage above which the SLO switch avoids a colder candidate: measured on the
	 * conversation trace (docs/benchmarks.md), 0.9 served more than 0.95 and than no
	 * limit.
	 */
	public static final double DEFAULT_SWITCH_MAX_KV_USAGE = 0.9;

	/** The TTFT model a pool uses unless configured otherwise. */
	public static final TtftModel DEFAULT_TTFT_MODEL = TtftModel.ATTENTION;

	/**
	 * Initial attention cost per token pair: a Llama-3-8B class model on one H100 (4 x 32
	 * layers x 4096 hidden FLOPs per pair at 400 TFLOP/s, about 1.3 ns).
	 */
	public static final double DEFAULT_ATTENTION_NANOS_PER_PAIR = 1.31;

	/**
	 * Forgetting factor of the attention model's fit: an observation's weight halves
	 * after about 70 more on the same instance.
	 */
	public static final double DEFAULT_TTFT_FORGETTING = 0.99;

	public SchedulerSettings {
		positive("virtualNodes", virtualNodes);
		positive("blockTokens", blockTokens);
		positive("minPrefixDepth", minPrefixDepth);
		if (maxPrefixDepth < minPrefixDepth) {
			throw new IllegalArgumentException(
					"maxPrefixDepth must be >= minPrefixDepth (" + minPrefixDepth + ") but was " + maxPrefixDepth);
		}
		positive("hotWindow", hotWindow);
		fraction("hotRatio", hotRatio);
		fraction("hotDropRatio", hotDropRatio);
		if (hotDropRatio > hotRatio) {
			throw new IllegalArgumentException(
					"hotDropRatio must be <= hotRatio (" + hotRatio + ") but was " + hotDropRatio);
		}
		positive("hotMinSamples", hotMinSamples);
		if (hotMinSamples > hotWindow) {
			// The window never holds more than hotWindow requests: nothing would ever
			// expand.
			throw new IllegalArgumentException(
					"hotMinSamples must be <= hotWindow (" + hotWindow + ") but was " + hotMinSamples);
		}
		positive("maxHotPrefixes", maxHotPrefixes);
		if (!(switchFactor > 0)) {
			throw new IllegalArgumentException("switchFactor must be > 0 but was " + switchFactor);
		}
		if (!(switchHitCharge >= 0) || Double.isInfinite(switchHitCharge)) {
			throw new IllegalArgumentException("switchHitCharge must be >= 0 and finite but was " + switchHitCharge);
		}
		if (!(switchMaxKvUsage > 0 && switchMaxKvUsage <= 1)) {
			throw new IllegalArgumentException("switchMaxKvUsage must be in (0, 1] but was " + switchMaxKvUsage);
		}
		if (!(hotspotFactor >= 1)) {
			throw new IllegalArgumentException("hotspotFactor must be >= 1 but was " + hotspotFactor);
		}
		nonNegative("hotspotFloorTokens", hotspotFloorTokens);
		positive("hotspotMaxWaitNanos", hotspotMaxWaitNanos);
		if (!(prefillNanosPerToken > 0)) {
			throw new IllegalArgumentException("prefillNanosPerToken must be > 0 but was " + prefillNanosPerToken);
		}
		nonNegative("baseTtftNanos", baseTtftNanos);
		if (!(calibrationAlpha >= 0 && calibrationAlpha <= 1)) {
			throw new IllegalArgumentException("calibrationAlpha must be in [0, 1] but was " + calibrationAlpha);
		}
		if (tieBreak == null) {
			throw new IllegalArgumentException("tieBreak must be set");
		}
		if (ttftModel == null) {
			throw new IllegalArgumentException("ttftModel must be set");
		}
		if (!(attentionNanosPerPair > 0) || Double.isInfinite(attentionNanosPerPair)) {
			throw new IllegalArgumentException(
					"attentionNanosPerPair must be > 0 and finite but was " + attentionNanosPerPair);
		}
		if (!(ttftForgetting > 0 && ttftForgetting <= 1)) {
			throw new IllegalArgumentException("ttftForgetting must be in (0, 1] but was " + ttftForgetting);
		}
		positive("defaultSloNanos", defaultSloNanos);
		positive("shadowCapacityTokens", shadowCapacityTokens);
		positive("staleAfterNanos", staleAfterNanos);
		nonNegative("slowStartNanos", slowStartNanos);
		if (!(coldCachedShare >= 0 && coldCachedShare <= 1) && !Double.isNaN(coldCachedShare)) {
			throw new IllegalArgumentException(
					"coldCachedShare must be in [0, 1] (or NaN: by the dispatch mode) but was " + coldCachedShare);
		}
		if (coldCandidatesMax < 2 || coldCandidatesMax > MAX_COLD_CANDIDATES) {
			throw new IllegalArgumentException(
					"coldCandidatesMax must be in [2, " + MAX_COLD_CANDIDATES + "] but was " + coldCandidatesMax);
		}
		positive("coldLoadStepTokens", coldLoadStepTokens);
		nonNegative("ttftRelaxAfterNanos", ttftRelaxAfterNanos);
	}

	/**
	 * Whether cold requests go by occupancy over their ring instances; false while the
	 * share is left to the dispatch mode and not yet resolved by
	 * {@link #forDispatchMode}.
	 */
	public boolean spreadsCold() {
		return coldCachedShare > 0;
	}

	/**
	 * These settings for a pool dispatching in {@code mode}: a cold-request share left to
	 * the mode ({@link #DEFAULT_COLD_CACHED_SHARE}) becomes {@link #COLD_CACHED_SHARE}
	 * when requests are sent as soon as they are chosen
	 * ({@link DispatchMode#PASS_THROUGH}) and 0 (off) behind the queue; a configured
	 * share stays as it is. Dispatching at once nothing but the choice spreads the
	 * requests whose prompt no instance caches, so occupancy over their first ring
	 * instances balances what the two candidates alone leave uneven; behind the queue its
	 * admission and moves do that already.
	 */
	public SchedulerSettings forDispatchMode(DispatchMode mode) {
		if (!Double.isNaN(coldCachedShare)) {
			return this;
		}
		return toBuilder().coldCachedShare(mode == DispatchMode.PASS_THROUGH ? COLD_CACHED_SHARE : 0).build();
	}

	private static void positive(String name, long v) {
		if (v <= 0) {
			throw new IllegalArgumentException(name + " must be > 0 but was " + v);
		}
	}

	private static void nonNegative(String name, long v) {
		if (v < 0) {
			throw new IllegalArgumentException(name + " must be >= 0 but was " + v);
		}
	}

	private static void fraction(String name, double v) {
		if (!(v > 0 && v < 1)) {
			throw new IllegalArgumentException(name + " must be in (0, 1) but was " + v);
		}
	}

	public static SchedulerSettings ofDefaults() {
		return custom().build();
	}

	public static Builder custom() {
		return new Builder();
	}

	/** A builder that starts from this object's values. */
	public Builder toBuilder() {
		Builder b = new Builder();
		b.virtualNodes = virtualNodes;
		b.blockTokens = blockTokens;
		b.minPrefixDepth = minPrefixDepth;
		b.maxPrefixDepth = maxPrefixDepth;
		b.hotWindow = hotWindow;
		b.hotRatio = hotRatio;
		b.hotDropRatio = hotDropRatio;
		b.hotMinSamples = hotMinSamples;
		b.maxHotPrefixes = maxHotPrefixes;
		b.switchFactor = switchFactor;
		b.switchHitCharge = switchHitCharge;
		b.switchMaxKvUsage = switchMaxKvUsage;
		b.hotspotFactor = hotspotFactor;
		b.hotspotFloorTokens = hotspotFloorTokens;
		b.hotspotMaxWaitNanos = hotspotMaxWaitNanos;
		b.thirdChoice = thirdChoice;
		b.prefillNanosPerToken = prefillNanosPerToken;
		b.baseTtftNanos = baseTtftNanos;
		b.calibrationAlpha = calibrationAlpha;
		b.ttftModel = ttftModel;
		b.attentionNanosPerPair = attentionNanosPerPair;
		b.ttftForgetting = ttftForgetting;
		b.defaultSloNanos = defaultSloNanos;
		b.shadowCapacityTokens = shadowCapacityTokens;
		b.staleAfterNanos = staleAfterNanos;
		b.slowStartNanos = slowStartNanos;
		b.coldCachedShare = coldCachedShare;
		b.coldCandidatesMax = coldCandidatesMax;
		b.coldLoadStepTokens = coldLoadStepTokens;
		b.ttftRelaxAfterNanos = ttftRelaxAfterNanos;
		b.engineBacklog = engineBacklog;
		b.tieBreak = tieBreak;
		return b;
	}

	/** Fluent builder; every setter takes the value as documented on the record. */
	public static final class Builder {

		private int virtualNodes = DualHashRing.DEFAULT_VIRTUAL_NODES;

		private int blockTokens = DEFAULT_BLOCK_TOKENS;

		private int minPrefixDepth = DEFAULT_MIN_PREFIX_DEPTH;

		private int maxPrefixDepth = DEFAULT_MAX_PREFIX_DEPTH;

		private int hotWindow = DEFAULT_HOT_WINDOW;

		private double hotRatio = DEFAULT_HOT_RATIO;

		private double hotDropRatio = DEFAULT_HOT_DROP_RATIO;

		private int hotMinSamples = DEFAULT_HOT_MIN_SAMPLES;

		private int maxHotPrefixes = DEFAULT_MAX_HOT_PREFIXES;

		private double switchFactor = DEFAULT_SWITCH_FACTOR;

		private double switchHitCharge = DEFAULT_SWITCH_HIT_CHARGE;

		private double switchMaxKvUsage = DEFAULT_SWITCH_MAX_KV_USAGE;

		private double hotspotFactor = DEFAULT_HOTSPOT_FACTOR;

		private long hotspotFloorTokens = DEFAULT_HOTSPOT_FLOOR_TOKENS;

		private long hotspotMaxWaitNanos = DEFAULT_HOTSPOT_MAX_WAIT.toNanos();

		private boolean thirdChoice = DEFAULT_THIRD_CHOICE;

		private double prefillNanosPerToken = DEFAULT_PREFILL_PER_TOKEN.toNanos();

		private long baseTtftNanos = DEFAULT_BASE_TTFT.toNanos();

		private double calibrationAlpha = DEFAULT_CALIBRATION_ALPHA;

		private TtftModel ttftModel = DEFAULT_TTFT_MODEL;

		private double attentionNanosPerPair = DEFAULT_ATTENTION_NANOS_PER_PAIR;

		private double ttftForgetting = DEFAULT_TTFT_FORGETTING;

		private long defaultSloNanos = DEFAULT_SLO.toNanos();

		private long shadowCapacityTokens = DEFAULT_SHADOW_CAPACITY_TOKENS;

		private long staleAfterNanos = DEFAULT_STALE_AFTER.toNanos();

		private long slowStartNanos = DEFAULT_SLOW_START.toNanos();

		private double coldCachedShare = DEFAULT_COLD_CACHED_SHARE;

		private int coldCandidatesMax = DEFAULT_COLD_CANDIDATES_MAX;

		private long coldLoadStepTokens = DEFAULT_COLD_LOAD_STEP_TOKENS;

		private long ttftRelaxAfterNanos = DEFAULT_TTFT_RELAX_AFTER.toNanos();

		private boolean engineBacklog = DEFAULT_ENGINE_BACKLOG;

		private TieBreak tieBreak = DEFAULT_TIE_BREAK;

		public Builder virtualNodes(int v) {
			this.virtualNodes = v;
			return this;
		}

		public Builder blockTokens(int v) {
			this.blockTokens = v;
			return this;
		}

		public Builder minPrefixDepth(int v) {
			this.minPrefixDepth = v;
			return this;
		}

		public Builder maxPrefixDepth(int v) {
			this.maxPrefixDepth = v;
			return this;
		}

		public Builder hotWindow(int v) {
			this.hotWindow = v;
			return this;
		}

		public Builder hotRatio(double v) {
			this.hotRatio = v;
			return this;
		}

		public Builder hotDropRatio(double v) {
			this.hotDropRatio = v;
			return this;
		}

		public Builder hotMinSamples(int v) {
			this.hotMinSamples = v;
			return this;
		}

		public Builder maxHotPrefixes(int v) {
			this.maxHotPrefixes = v;
			return this;
		}

		public Builder switchFactor(double v) {
			this.switchFactor = v;
			return this;
		}

		public Builder switchHitCharge(double v) {
			this.switchHitCharge = v;
			return this;
		}

		public Builder switchMaxKvUsage(double v) {
			this.switchMaxKvUsage = v;
			return this;
		}

		public Builder hotspotFactor(double v) {
			this.hotspotFactor = v;
			return this;
		}

		public Builder hotspotFloorTokens(long v) {
			this.hotspotFloorTokens = v;
			return this;
		}

		public Builder hotspotMaxWait(Duration v) {
			this.hotspotMaxWaitNanos = v.toNanos();
			return this;
		}

		public Builder thirdChoice(boolean v) {
			this.thirdChoice = v;
			return this;
		}

		public Builder prefillNanosPerToken(double v) {
			this.prefillNanosPerToken = v;
			return this;
		}

		public Builder baseTtft(Duration v) {
			this.baseTtftNanos = v.toNanos();
			return this;
		}

		public Builder calibrationAlpha(double v) {
			this.calibrationAlpha = v;
			return this;
		}

		public Builder ttftModel(TtftModel v) {
			this.ttftModel = v;
			return this;
		}

		public Builder attentionNanosPerPair(double v) {
			this.attentionNanosPerPair = v;
			return this;
		}

		public Builder ttftForgetting(double v) {
			this.ttftForgetting = v;
			return this;
		}

		public Builder defaultSlo(Duration v) {
			this.defaultSloNanos = v.toNanos();
			return this;
		}

		public Builder shadowCapacityTokens(long v) {
			this.shadowCapacityTokens = v;
			return this;
		}

		public Builder staleAfter(Duration v) {
			this.staleAfterNanos = v.toNanos();
			return this;
		}

		public Builder slowStart(Duration v) {
			this.slowStartNanos = v.toNanos();
			return this;
		}

		public Builder coldCachedShare(double v) {
			this.coldCachedShare = v;
			return this;
		}

		public Builder coldCandidatesMax(int v) {
			this.coldCandidatesMax = v;
			return this;
		}

		public Builder coldLoadStepTokens(long v) {
			this.coldLoadStepTokens = v;
			return this;
		}

		public Builder ttftRelaxAfter(Duration v) {
			this.ttftRelaxAfterNanos = v.toNanos();
			return this;
		}

		public Builder engineBacklog(boolean v) {
			this.engineBacklog = v;
			return this;
		}

		public Builder tieBreak(TieBreak v) {
			this.tieBreak = v;
			return this;
		}

		public SchedulerSettings build() {
			return new SchedulerSettings(virtualNodes, blockTokens, minPrefixDepth, maxPrefixDepth, hotWindow, hotRatio,
					hotDropRatio, hotMinSamples, maxHotPrefixes, switchFactor, switchHitCharge, switchMaxKvUsage,
					hotspotFactor, hotspotFloorTokens, hotspotMaxWaitNanos, thirdChoice, prefillNanosPerToken,
					baseTtftNanos, calibrationAlpha, ttftModel, attentionNanosPerPair, ttftForgetting, defaultSloNanos,
					shadowCapacityTokens, staleAfterNanos, slowStartNanos, coldCachedShare, coldCandidatesMax,
					coldLoadStepTokens, ttftRelaxAfterNanos, engineBacklog, tieBreak);
		}

	}

}

package io.github.dualmap.core;

/**
 * One instance's TTFT model with the attention term:
 * {@code TTFT^ = base + a*(T_ahead + u) + c*(A_ahead + u*(k + u/2))}, where {@code u} and
 * {@code k} are the request's uncached and cached tokens and {@code T_ahead},
 * {@code A_ahead} the tokens and attention pairs of the prefill ahead of it
 * ({@link PrefillWork}). It is the shape of a chunked-prefill engine's step time: a cost
 * per computed token (weights, MLP) and one per query x context pair (attention), which a
 * single per-token rate cannot follow once prompts carry long cached prefixes.
 * <p>
 * {@code (base, a, c)} start from configuration and are fitted online by recursive least
 * squares with a forgetting factor: O(1) per observed first token (three features), with
 * each observation weighted by the inverse of its estimate so a long prefill does not
 * outweigh a hundred short ones, its standardised residual clipped (one preempted or
 * stalled request moves the fit a bounded step), the covariance never looser than the
 * prior (no wind-up in a direction the traffic does not excite), and each coefficient
 * kept within {@link TtftEstimator#MAX_DRIFT} of its configured value. Thread-safe;
 * estimates read one published snapshot without locking.
 */
public final class AttentionTtftModel {

	// Features are scaled so the three coefficients have comparable magnitudes (ms, ms
	// per 10k tokens, ms per 1e8 pairs) and the 3x3 covariance stays well conditioned.
	static final double TOKEN_SCALE = 1e4;

	static final double PAIR_SCALE = 1e8;

	private static final double NANOS_PER_MS = 1e6;

	/** Assumed relative noise of one observed TTFT around the model. */
	static final double RELATIVE_NOISE = 0.25;

	/** Standardised residuals beyond this are clipped. */
	static final double RESIDUAL_CLIP = 3.0;

	/** Smallest base a prior is taken as, in ms: a zero base still gets learned. */
	private static final double MIN_BASE_MS = 1.0;

	private final double forgetting;

	private final boolean learning;

	private final double[] prior;

	private final double[] lo;

	private final double[] hi;

	// Guarded by this.
	private final double[] theta;

	private final double[][] p;

	private long samples;

	/**
	 * Mean and mean square of the clipped standardised residuals, forgotten as the
	 * coefficients are. Their variance is about 1 while the observations scatter as
	 * {@link #RELATIVE_NOISE} assumes, above where the model fits them worse (work it
	 * does not see, such as decode); a mean away from 0 is the fit lagging a change, not
	 * scatter.
	 */
	private double residualMean;

	private double residualSquare = 1;

	/** {base ns, ns per token, ns per pair}, replaced whole on each update. */
	private volatile double[] published;

	/** When the last observation was fed, {@link Long#MIN_VALUE} before the first. */
	private volatile long lastObservedNanos = Long.MIN_VALUE;

	/**
	 * @param nanosPerToken prior cost per uncached token ({@code a})
	 * @param nanosPerPair prior cost per attention pair ({@code c})
	 * @param baseNanos prior fixed part ({@code base})
	 * @param forgetting RLS forgetting factor in (0, 1]: 1 never forgets
	 * @param learning whether observations update the coefficients
	 */
	public AttentionTtftModel(double nanosPerToken, double nanosPerPair, long baseNanos, double forgetting,
			boolean learning) {
		if (!(nanosPerToken > 0) || Double.isInfinite(nanosPerToken)) {
			throw new IllegalArgumentException("nanosPerToken must be > 0 and finite but was " + nanosPerToken);
		}
		if (!(nanosPerPair > 0) || Double.isInfinite(nanosPerPair)) {
			throw new IllegalArgumentException("nanosPerPair must be > 0 and finite but was " + nanosPerPair);
		}
		if (baseNanos < 0) {
			throw new IllegalArgumentException("baseNanos must be >= 0 but was " + baseNanos);
		}
		if (!(forgetting > 0 && forgetting <= 1)) {
			throw new IllegalArgumentException("forgetting must be in (0, 1] but was " + forgetting);
		}
		this.forgetting = forgetting;
		this.learning = learning;
		double baseMs = baseNanos / NANOS_PER_MS;
		this.prior = new double[] { baseMs, nanosPerToken * TOKEN_SCALE / NANOS_PER_MS,
				nanosPerPair * PAIR_SCALE / NANOS_PER_MS };
		double drift = TtftEstimator.MAX_DRIFT;
		this.lo = new double[] { 0, prior[1] / drift, prior[2] / drift };
		this.hi = new double[] { Math.max(baseMs, MIN_BASE_MS) * drift, prior[1] * drift, prior[2] * drift };
		this.theta = prior.clone();
		this.p = new double[3][3];
		resetCovariance();
		publish();
	}

	/**
	 * The model of {@code settings}' priors, forgetting factor and calibration switch.
	 */
	public static AttentionTtftModel of(SchedulerSettings settings) {
		return new AttentionTtftModel(settings.prefillNanosPerToken(), settings.attentionNanosPerPair(),
				settings.baseTtftNanos(), settings.ttftForgetting(), settings.calibrationAlpha() > 0);
	}

	/** Estimated TTFT in nanoseconds of {@code own} work behind {@code ahead}. */
	public long estimate(PrefillWork ahead, PrefillWork own) {
		double[] k = published;
		double nanos = k[0] + k[1] * ((double) ahead.tokens() + own.tokens())
				+ k[2] * ((double) ahead.pairs() + own.pairs());
		return (long) Math.min(Long.MAX_VALUE / 2.0, nanos);
	}

	/**
	 * How well the fit knows the TTFT of {@code own} work behind {@code ahead}: the
	 * standard error of {@link #estimate} over the estimate, from the fit's covariance
	 * and how far its recent observations scattered around it. At the priors it is about
	 * the priors' own uncertainty (half or more of the estimate); it falls only as first
	 * tokens of work like this (in the tokens and attention pairs it weighs) are
	 * observed, grows back as the forgetting factor lets them go, and is larger where the
	 * model fits the observations worse, so a fit fed few prompts, or short ones alone,
	 * extrapolates to a long one with a large error.
	 */
	public synchronized double relativeError(PrefillWork ahead, PrefillWork own) {
		double[] x = features(ahead, own);
		double[] px = covarianceTimes(x);
		double variance = Math.max(0, this.residualSquare - this.residualMean * this.residualMean);
		return Math.sqrt(Math.max(0, variance * dot(x, px))) / Math.max(dot(theta, x), MIN_BASE_MS);
	}

	/**
	 * Prefill time in nanoseconds of {@code work} alone, without the fixed part: what
	 * that work costs every request behind it.
	 */
	public long cost(PrefillWork work) {
		double[] k = published;
		return (long) Math.min(Long.MAX_VALUE / 2.0, k[1] * work.tokens() + k[2] * (double) work.pairs());
	}

	/**
	 * Feeds one observation: {@code own} work, sent behind {@code ahead}, saw its first
	 * token after {@code observedNanos}.
	 */
	public void observe(PrefillWork ahead, PrefillWork own, long observedNanos) {
		observe(ahead, own, observedNanos, Long.MIN_VALUE);
	}

	/**
	 * Feeds one observation made at {@code nowNanos} (the time {@link #idleSince} reports
	 * from then on).
	 */
	public void observe(PrefillWork ahead, PrefillWork own, long observedNanos, long nowNanos) {
		if (!learning || observedNanos <= 0) {
			return;
		}
		if (nowNanos != Long.MIN_VALUE) {
			this.lastObservedNanos = nowNanos;
		}
		double[] x = features(ahead, own);
		double y = observedNanos / NANOS_PER_MS;
		synchronized (this) {
			update(x, y);
			samples++;
			publish();
		}
	}

	/** The scaled features of {@code own} work behind {@code ahead}: 1, tokens, pairs. */
	private static double[] features(PrefillWork ahead, PrefillWork own) {
		return new double[] { 1, ((double) ahead.tokens() + own.tokens()) / TOKEN_SCALE,
				((double) ahead.pairs() + own.pairs()) / PAIR_SCALE };
	}

	/** The covariance times {@code v}; guarded by this. */
	private double[] covarianceTimes(double[] v) {
		double[] pv = new double[3];
		for (int i = 0; i < 3; i++) {
			pv[i] = p[i][0] * v[0] + p[i][1] * v[1] + p[i][2] * v[2];
		}
		return pv;
	}

	private void update(double[] x, double y) {
		double estimate = dot(theta, x);
		// Weighted by the inverse of the estimate: residuals are relative.
		double w = 1.0 / (RELATIVE_NOISE * Math.max(estimate, MIN_BASE_MS));
		double[] xs = { x[0] * w, x[1] * w, x[2] * w };
		double r = Math.max(-RESIDUAL_CLIP, Math.min(RESIDUAL_CLIP, (y - estimate) * w));
		// A running mean until the forgetting factor's memory is reached, the assumed
		// noise counting as one observation.
		double k = Math.max(1 - this.forgetting, 1.0 / (this.samples + 2));
		this.residualMean += k * (r - this.residualMean);
		this.residualSquare += k * (r * r - this.residualSquare);
		double[] px = covarianceTimes(xs);
		double den = forgetting + dot(xs, px);
		if (!(den > 0) || Double.isInfinite(den)) {
			resetCovariance();
			return;
		}
		for (int i = 0; i < 3; i++) {
			theta[i] = clamp(theta[i] + px[i] / den * r, lo[i], hi[i]);
		}
		for (int i = 0; i < 3; i++) {
			for (int j = i; j < 3; j++) {
				double v = (p[i][j] - px[i] * px[j] / den) / forgetting;
				p[i][j] = v;
				p[j][i] = v;
			}
		}
		boundCovariance();
	}

	/**
	 * Keeps the covariance positive definite and never looser than the prior: a direction
	 * the traffic does not excite would otherwise grow by 1/forgetting per observation
	 * and turn the next unusual request into a jump.
	 */
	private void boundCovariance() {
		double[] d = new double[3];
		for (int i = 0; i < 3; i++) {
			double limit = priorVariance(i);
			double v = p[i][i];
			if (!(v > 0) || Double.isNaN(v)) {
				resetCovariance();
				return;
			}
			d[i] = v > limit ? Math.sqrt(limit / v) : 1;
		}
		for (int i = 0; i < 3; i++) {
			for (int j = 0; j < 3; j++) {
				p[i][j] *= d[i] * d[j];
			}
		}
	}

	private double priorVariance(int i) {
		double scale = i == 0 ? Math.max(prior[0], MIN_BASE_MS) : prior[i];
		return scale * scale;
	}

	private void resetCovariance() {
		for (int i = 0; i < 3; i++) {
			for (int j = 0; j < 3; j++) {
				p[i][j] = i == j ? priorVariance(i) : 0;
			}
		}
	}

	private void publish() {
		this.published = new double[] { theta[0] * NANOS_PER_MS, theta[1] * NANOS_PER_MS / TOKEN_SCALE,
				theta[2] * NANOS_PER_MS / PAIR_SCALE };
	}

	/** The fitted cost per uncached token, in nanoseconds. */
	public double nanosPerToken() {
		return published[1];
	}

	/** The fitted cost per attention pair, in nanoseconds. */
	public double nanosPerPair() {
		return published[2];
	}

	/** The fitted fixed part, in nanoseconds. */
	public double baseNanos() {
		return published[0];
	}

	/**
	 * Whether this model has seen no observation in the {@code periodNanos} before
	 * {@code nowNanos} (never observed counts as idle).
	 */
	public boolean idleSince(long nowNanos, long periodNanos) {
		long last = this.lastObservedNanos;
		return last == Long.MIN_VALUE || nowNanos - last > periodNanos;
	}

	/** Observations fed so far. */
	public synchronized long samples() {
		return samples;
	}

	private static double dot(double[] a, double[] b) {
		return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
	}

	private static double clamp(double v, double lo, double hi) {
		return Math.max(lo, Math.min(hi, v));
	}

}

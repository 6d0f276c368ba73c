package io.github.dualmap.core;

/**
 * The TTFT model {@code TTFT^ = (W + P + u) * tPrefill + tBase}: tokens queued
 * ({@code W}) and in prefill ({@code P}) ahead of the request, plus its own uncached
 * tokens {@code u}. {@code tPrefill} starts from configuration and is recalibrated online
 * from observed TTFTs with an exponentially weighted moving average, clamped to a factor
 * of the configured value so one outlier (a network stall, a preempted request) cannot
 * poison it. The pool's estimates come from it with {@link TtftModel#LINEAR}; with
 * {@link TtftModel#ATTENTION} each instance's {@link AttentionTtftModel} gives them, and
 * this one is still fed, for the pool's per-token view (the actuator, Preble's load).
 * Thread-safe.
 */
public final class TtftEstimator {

	/** How far calibration may move tPrefill from its configured value, either way. */
	static final double MAX_DRIFT = 8.0;

	private final double configuredNanosPerToken;

	private final long baseNanos;

	private final double alpha;

	private volatile double nanosPerToken;

	public TtftEstimator(double nanosPerToken, long baseNanos, double alpha) {
		if (!(nanosPerToken > 0)) {
			throw new IllegalArgumentException("nanosPerToken must be > 0 but was " + nanosPerToken);
		}
		if (baseNanos < 0) {
			throw new IllegalArgumentException("baseNanos must be >= 0 but was " + baseNanos);
		}
		if (!(alpha >= 0 && alpha <= 1)) {
			throw new IllegalArgumentException("alpha must be in [0, 1] but was " + alpha);
		}
		this.configuredNanosPerToken = nanosPerToken;
		this.nanosPerToken = nanosPerToken;
		this.baseNanos = baseNanos;
		this.alpha = alpha;
	}

	/**
	 * Estimated TTFT in nanoseconds for {@code tokensAhead} pending tokens plus
	 * {@code uncached}.
	 */
	public long estimate(long tokensAhead, long uncached) {
		return (long) ((tokensAhead + uncached) * nanosPerToken) + baseNanos;
	}

	/**
	 * Feeds one observation: the request found {@code tokensAhead} pending tokens, had
	 * {@code uncached} tokens of its own, and saw its first token after
	 * {@code observedNanos}.
	 */
	public void observe(long tokensAhead, long uncached, long observedNanos) {
		long work = tokensAhead + uncached;
		if (work <= 0 || observedNanos <= baseNanos || alpha == 0) {
			return;
		}
		double sample = (double) (observedNanos - baseNanos) / work;
		double lo = configuredNanosPerToken / MAX_DRIFT;
		double hi = configuredNanosPerToken * MAX_DRIFT;
		sample = Math.max(lo, Math.min(hi, sample));
		synchronized (this) {
			nanosPerToken = (1 - alpha) * nanosPerToken + alpha * sample;
		}
	}

	public double nanosPerToken() {
		return nanosPerToken;
	}

	public long baseNanos() {
		return baseNanos;
	}

}

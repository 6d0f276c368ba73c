package io.github.dualmap.engine;

import java.util.Arrays;

/**
 * A Prometheus-style histogram of seconds with fixed bucket bounds; the bounds of the
 * vLLM V1 request histograms are constants here so the emulator exposes the same buckets.
 * Not thread-safe: the engine's owner records, readers take a {@link #snapshot()}.
 */
public final class LatencyHistogram {

	/** Buckets of {@code vllm:time_to_first_token_seconds}. */
	public static final double[] TTFT_BOUNDS = { 0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
			2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0 };

	/** Buckets of {@code vllm:inter_token_latency_seconds}. */
	public static final double[] ITL_BOUNDS = { 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5,
			5.0, 7.5, 10.0, 20.0, 40.0, 80.0 };

	/** Buckets of {@code vllm:e2e_request_latency_seconds}. */
	public static final double[] E2E_BOUNDS = { 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0,
			50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0 };

	private final double[] bounds;

	// counts[i] for bounds[i], counts[bounds.length] for +Inf; not cumulative.
	private final long[] counts;

	private double sum;

	private long count;

	public LatencyHistogram(double[] bounds) {
		for (int i = 1; i < bounds.length; i++) {
			if (!(bounds[i] > bounds[i - 1])) {
				throw new IllegalArgumentException("bounds must increase: " + Arrays.toString(bounds));
			}
		}
		this.bounds = bounds.clone();
		this.counts = new long[bounds.length + 1];
	}

	public void record(double seconds) {
		int i = Arrays.binarySearch(bounds, seconds);
		counts[i >= 0 ? i : -i - 1]++;
		sum += seconds;
		count++;
	}

	public Snapshot snapshot() {
		long[] cumulative = new long[counts.length];
		long acc = 0;
		for (int i = 0; i < counts.length; i++) {
			acc += counts[i];
			cumulative[i] = acc;
		}
		return new Snapshot(bounds, cumulative, sum, count);
	}

	/**
	 * Immutable view: {@code cumulativeCounts[i]} observations {@code <= bounds[i]}, the
	 * last entry for {@code +Inf}.
	 *
	 * @param bounds upper bounds in seconds
	 * @param cumulativeCounts cumulative counts, one more than bounds
	 * @param sum sum of observations in seconds
	 * @param count number of observations
	 */
	public record Snapshot(double[] bounds, long[] cumulativeCounts, double sum, long count) {

		/** Mean in seconds, NaN when empty. */
		public double mean() {
			return count == 0 ? Double.NaN : sum / count;
		}

	}

}

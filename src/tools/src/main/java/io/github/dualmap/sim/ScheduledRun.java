package io.github.dualmap.sim;

import java.util.Arrays;
import java.util.List;

/**
 * A run with a {@link MembershipSchedule}: the summary plus every request's outcome, from
 * which {@link ScalingTimeline} cuts windows. Arrays are indexed by trace request and
 * include the warm-up.
 *
 * @param result the run's summary (measured requests only)
 * @param arrivalNanos virtual arrival time of each request
 * @param ttftNanos time to first token, or -1 when none came before the run ended
 * @param cachedTokens prompt tokens the engine found cached, or -1 without a first token
 * @param instance slot of the instance it was sent to (index into {@code instanceIds}),
 * or -1 when rejected
 * @param instanceIds id of each instance slot in joining order
 * @param initialInstances slots that were members from the start
 * @param changeNanos virtual time of each membership change, in schedule order
 * @param warmup leading requests excluded from the metrics
 * @param estimateSampleNanos virtual time of each sample of the routers' estimates, in
 * time order (every scrape tick)
 * @param coldTtftEstimateNanos per sample, router 0's estimate of a cold reference prompt
 * on each instance slot ({@code InstanceState.coldTtftEstimateNanos()}, what the
 * gateway's {@code dualmap.instance.ttft.estimate} gauge reads), -1 for a slot that is no
 * member then or a pool without per-instance models
 */
public record ScheduledRun(RunResult result, long[] arrivalNanos, long[] ttftNanos, int[] cachedTokens, int[] instance,
		List<String> instanceIds, int initialInstances, long[] changeNanos, int warmup, long[] estimateSampleNanos,
		long[][] coldTtftEstimateNanos) {

	/** Policy name. */
	public String policy() {
		return result.policy();
	}

	/**
	 * Router 0's estimates of the reference prompt on each of the first {@code slots}
	 * instance slots, in seconds, as last sampled at or before {@code atNanos}; NaN for a
	 * slot without one (not a member then, no per-instance model, or no sample yet).
	 */
	public double[] coldTtftEstimatesAt(long atNanos, int slots) {
		double[] out = new double[slots];
		Arrays.fill(out, Double.NaN);
		int k = Arrays.binarySearch(estimateSampleNanos, atNanos);
		int last = k >= 0 ? k : -k - 2;
		// Equal times: the last sample taken at that instant.
		while (last >= 0 && last + 1 < estimateSampleNanos.length && estimateSampleNanos[last + 1] == atNanos) {
			last++;
		}
		if (last < 0) {
			return out;
		}
		long[] sample = coldTtftEstimateNanos[last];
		for (int slot = 0; slot < Math.min(slots, sample.length); slot++) {
			out[slot] = sample[slot] < 0 ? Double.NaN : sample[slot] / 1e9;
		}
		return out;
	}

	/** Whether request {@code i} went to an instance that joined during the run. */
	public boolean sentToNewInstance(int i) {
		return instance[i] >= initialInstances;
	}

}

package io.github.dualmap.sim;

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
 */
public record ScheduledRun(RunResult result, long[] arrivalNanos, long[] ttftNanos, int[] cachedTokens, int[] instance,
		List<String> instanceIds, int initialInstances, long[] changeNanos, int warmup) {

	/** Policy name. */
	public String policy() {
		return result.policy();
	}

	/** Whether request {@code i} went to an instance that joined during the run. */
	public boolean sentToNewInstance(int i) {
		return instance[i] >= initialInstances;
	}

}

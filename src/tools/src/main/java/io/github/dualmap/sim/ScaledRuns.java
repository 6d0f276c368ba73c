package io.github.dualmap.sim;

import java.util.List;

/**
 * Runs every policy once on the same workload, rate and {@link MembershipSchedule}, in
 * parallel on a fixed pool of threads, and cuts each run into a {@link ScalingTimeline}.
 * Each run builds its own engines and pools, so results do not depend on the thread
 * count.
 */
public final class ScaledRuns {

	private ScaledRuns() {
	}

	/**
	 * The timelines of {@code policies} (in that order) at {@code rate} with windows of
	 * {@code windowNanos}, judged on {@code yardstick} (of the workload's trace).
	 */
	public static List<ScalingTimeline> run(Workload workload, Yardstick yardstick, List<PolicySpec> policies,
			SimulationConfig config, double rate, MembershipSchedule schedule, long windowNanos, int threads) {
		if (threads <= 0) {
			throw new IllegalArgumentException("threads must be > 0 but was " + threads);
		}
		return CapacityBenchmark.parallel(policies, threads,
				p -> ScalingTimeline.of(Simulation.run(workload, yardstick, p, config, rate, schedule),
						workload.trace(), yardstick, windowNanos, config.slo().toNanos()));
	}

}

package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

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
	 * {@code windowNanos}.
	 */
	public static List<ScalingTimeline> run(Workload workload, List<PolicySpec> policies, SimulationConfig config,
			double rate, MembershipSchedule schedule, long windowNanos, int threads) {
		if (threads <= 0) {
			throw new IllegalArgumentException("threads must be > 0 but was " + threads);
		}
		ExecutorService pool = Executors.newFixedThreadPool(Math.min(threads, Math.max(1, policies.size())));
		try {
			List<Future<ScalingTimeline>> futures = new ArrayList<>();
			for (PolicySpec p : policies) {
				futures.add(pool.submit(() -> ScalingTimeline.of(Simulation.run(workload, p, config, rate, schedule),
						workload.trace(), windowNanos, config.slo().toNanos())));
			}
			List<ScalingTimeline> out = new ArrayList<>();
			for (Future<ScalingTimeline> f : futures) {
				out.add(f.get());
			}
			return out;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("simulation interrupted", ex);
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException re) {
				throw re;
			}
			throw new IllegalStateException(ex.getCause());
		}
		finally {
			pool.shutdownNow();
		}
	}

}

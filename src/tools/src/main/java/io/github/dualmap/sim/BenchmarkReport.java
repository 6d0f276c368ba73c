package io.github.dualmap.sim;

import java.util.List;

/**
 * A side-by-side comparison of policies on one workload.
 *
 * @param trace workload name
 * @param instances engine instances
 * @param routers router replicas
 * @param sloTtftSeconds the TTFT objective
 * @param fixedRate the rate of the per-policy runs behind the CDF and load charts
 * @param policies one entry per policy, in the order asked for
 * @param targetAttainment the share within the SLO that defined capacity
 * @param promptTokenTarget the share of the feasible requests' prompt tokens within the
 * SLO a rate also had to reach (0: none)
 * @param sizeFloor the share of every prompt-size quartile of the feasible requests
 * within the SLO a rate also had to reach (0: none)
 */
public record BenchmarkReport(String trace, int instances, int routers, double sloTtftSeconds, double fixedRate,
		List<PolicyReport> policies, double targetAttainment, double promptTokenTarget, double sizeFloor) {

	/** A report whose capacities asked nothing of the size quartiles. */
	public BenchmarkReport(String trace, int instances, int routers, double sloTtftSeconds, double fixedRate,
			List<PolicyReport> policies, double targetAttainment, double promptTokenTarget) {
		this(trace, instances, routers, sloTtftSeconds, fixedRate, policies, targetAttainment, promptTokenTarget, 0);
	}

	/** A report whose capacities asked nothing of the prompt tokens. */
	public BenchmarkReport(String trace, int instances, int routers, double sloTtftSeconds, double fixedRate,
			List<PolicyReport> policies, double targetAttainment) {
		this(trace, instances, routers, sloTtftSeconds, fixedRate, policies, targetAttainment, 0);
	}

	/** A report whose capacities were judged at {@link Simulation#TARGET_ATTAINMENT}. */
	public BenchmarkReport(String trace, int instances, int routers, double sloTtftSeconds, double fixedRate,
			List<PolicyReport> policies) {
		this(trace, instances, routers, sloTtftSeconds, fixedRate, policies, Simulation.TARGET_ATTAINMENT);
	}

	/**
	 * One policy's results.
	 *
	 * @param name policy name
	 * @param search the capacity search (or the single rate evaluated)
	 * @param atFixedRate the run at the report's fixed rate, with its load timeline
	 */
	public record PolicyReport(String name, CapacitySearch.Outcome search, RunResult atFixedRate) {

		/**
		 * The run whose metrics stand for the policy: at capacity, or the fixed-rate run
		 * when nothing passed.
		 */
		public RunResult headline() {
			RunResult r = search.atCapacity();
			return r != null ? r : atFixedRate;
		}

	}

	/**
	 * The headline's definition, as {@code results.json}'s {@code "metric"} names it.
	 */
	public String metric() {
		StringBuilder b = new StringBuilder("feasible requests");
		if (promptTokenTarget > 0) {
			b.append(promptTokenTarget == targetAttainment ? " and prompt tokens" : "");
		}
		b.append(String.format(java.util.Locale.ROOT, " >= %s", share(targetAttainment)));
		if (promptTokenTarget > 0 && promptTokenTarget != targetAttainment) {
			b.append(String.format(java.util.Locale.ROOT, ", their prompt tokens >= %s", share(promptTokenTarget)));
		}
		b.append(" within SLO");
		if (sizeFloor > 0) {
			b.append(String.format(java.util.Locale.ROOT, ", every prompt-size quartile >= %s", share(sizeFloor)));
		}
		return b.append(", steady state").toString();
	}

	private static String share(double f) {
		return new java.math.BigDecimal(Double.toString(f)).stripTrailingZeros().toPlainString();
	}

}

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
	 * @param search the capacity search (or the single rate evaluated); with replicates,
	 * that of the {@link ReplicatedCapacity#lowerMedian lower median} replicate
	 * @param atFixedRate the run at the report's fixed rate, with its load timeline (with
	 * replicates, the lower median replicate's)
	 * @param replicates every replicate's capacity, in seed order; empty for a single run
	 */
	public record PolicyReport(String name, CapacitySearch.Outcome search, RunResult atFixedRate,
			List<Replicate> replicates) {

		/** A policy's results from a single run. */
		public PolicyReport(String name, CapacitySearch.Outcome search, RunResult atFixedRate) {
			this(name, search, atFixedRate, List.of());
		}

		public PolicyReport {
			replicates = List.copyOf(replicates);
		}

		/** The median of the replicates' capacities (the capacity of a single run). */
		public double capacityMedian() {
			return this.replicates.isEmpty() ? this.search.capacity() : ReplicatedCapacity.median(capacities());
		}

		/** The lowest of the replicates' capacities. */
		public double capacityMin() {
			return capacities().stream().mapToDouble(Double::doubleValue).min().orElse(this.search.capacity());
		}

		/** The highest of the replicates' capacities. */
		public double capacityMax() {
			return capacities().stream().mapToDouble(Double::doubleValue).max().orElse(this.search.capacity());
		}

		private List<Double> capacities() {
			return this.replicates.stream().map(Replicate::capacity).toList();
		}

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
	 * The capacity one replicate found.
	 *
	 * @param seed the replicate's seed
	 * @param capacity its capacity (req/s)
	 */
	public record Replicate(long seed, double capacity) {

	}

	/** Whether the report's rows have replicates. */
	public boolean hasReplicates() {
		return this.policies.stream().anyMatch(p -> !p.replicates().isEmpty());
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

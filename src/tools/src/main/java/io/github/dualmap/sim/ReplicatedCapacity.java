package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

/**
 * The capacity search of several replicates ({@code sim --replicates}): every row's
 * capacity is searched once per replicate, each replicate with the workload, engines and
 * configuration its own seed makes, so a replicate finds what a run with its seed alone
 * finds; the (row, replicate) searches run in parallel on the plan's threads. Each row is
 * then represented by its {@link #lowerMedian lower median} replicate: that replicate's
 * search stands for the row, and it alone is run again at the charts' rate, the
 * {@link CapacityBenchmark#fixedRate fixed rate} of those searches.
 */
public final class ReplicatedCapacity {

	private ReplicatedCapacity() {
	}

	/**
	 * Searches every row's capacity in every replicate of {@code plan}, calling
	 * {@code progress} after each run.
	 */
	static BenchmarkReport search(SimPlan plan, CapacitySearch search, Runnable progress) {
		List<SimPlan.Replicate> runs = plan.replicates().runs();
		List<CapacityBenchmark> benchmarks = runs.stream()
			.map(r -> new CapacityBenchmark(r.base(), plan.repeat(), r.config(), plan.threads(),
					plan.search().stopEarly(), r.engine(), plan.search().minWindowSeconds()))
			.toList();
		int rows = plan.policies().size();
		// Job k is row k % rows of replicate k / rows.
		List<Integer> jobs = IntStream.range(0, runs.size() * rows).boxed().toList();
		List<CapacitySearch.Outcome> outcomes = CapacityBenchmark.parallel(jobs, plan.threads(),
				k -> benchmarks.get(k / rows).searchOne(runs.get(k / rows).policies().get(k % rows), search, progress));
		int[] median = new int[rows];
		List<CapacitySearch.Outcome> representative = new ArrayList<>();
		for (int j = 0; j < rows; j++) {
			int row = j;
			median[j] = lowerMedian(
					IntStream.range(0, runs.size()).mapToObj(i -> outcomes.get(i * rows + row).capacity()).toList());
			representative.add(outcomes.get(median[j] * rows + j));
		}
		double fixed = CapacityBenchmark.fixedRate(plan.policies(), representative);
		List<RunResult> atFixed = CapacityBenchmark.parallel(IntStream.range(0, rows).boxed().toList(), plan.threads(),
				j -> benchmarks.get(median[j]).runCharted(runs.get(median[j]).policies().get(j), fixed, progress));
		List<BenchmarkReport.PolicyReport> reports = new ArrayList<>();
		for (int j = 0; j < rows; j++) {
			List<BenchmarkReport.Replicate> replicates = new ArrayList<>();
			for (int i = 0; i < runs.size(); i++) {
				replicates
					.add(new BenchmarkReport.Replicate(runs.get(i).seed(), outcomes.get(i * rows + j).capacity()));
			}
			reports.add(new BenchmarkReport.PolicyReport(plan.policies().get(j).name(), representative.get(j),
					atFixed.get(j), replicates));
		}
		SimulationConfig config = plan.config();
		String name = plan.replicates().traceName() + (plan.repeat() == 1 ? "" : " x" + plan.repeat());
		return new BenchmarkReport(name, config.instances(), config.routers(), config.slo().toNanos() / 1e9, fixed,
				reports, config.targetAttainment(), config.promptTokenTarget(), config.sizeFloor());
	}

	/**
	 * The median of {@code values}: the middle one, or for an even count the mean of the
	 * two middle ones.
	 */
	public static double median(List<Double> values) {
		if (values.isEmpty()) {
			throw new IllegalArgumentException("no values");
		}
		double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
		int n = sorted.length;
		return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	}

	/**
	 * The replicate standing for a row: the first (in seed order) whose capacity is the
	 * lower median of {@code capacities}, the middle one for an odd count and the lower
	 * of the two middle ones for an even count.
	 */
	static int lowerMedian(List<Double> capacities) {
		if (capacities.isEmpty()) {
			throw new IllegalArgumentException("no replicates");
		}
		double[] sorted = capacities.stream().mapToDouble(Double::doubleValue).sorted().toArray();
		double value = sorted[(sorted.length - 1) / 2];
		return capacities.indexOf(value);
	}

}

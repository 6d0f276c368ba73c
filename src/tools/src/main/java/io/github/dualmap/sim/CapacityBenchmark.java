package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs the capacity search (or one fixed rate) for every policy on one workload, policies
 * in parallel on a fixed pool of threads. Every run builds its own engines, pools and
 * policy objects, so the report does not depend on how runs are scheduled.
 */
public final class CapacityBenchmark {

	private final Workload workload;

	private final SimulationConfig config;

	private final int threads;

	private final boolean stopEarly;

	public CapacityBenchmark(Workload workload, SimulationConfig config, int threads) {
		this(workload, config, threads, true);
	}

	/**
	 * @param stopEarly whether a run stops once more than 10 % of its measured requests
	 * have missed (see {@link Simulation#run}); capacities are the same either way
	 */
	public CapacityBenchmark(Workload workload, SimulationConfig config, int threads, boolean stopEarly) {
		if (threads <= 0) {
			throw new IllegalArgumentException("threads must be > 0 but was " + threads);
		}
		this.workload = workload;
		this.config = config;
		this.threads = threads;
		this.stopEarly = stopEarly;
	}

	/**
	 * Searches each policy's capacity, then runs all of them at the best peer's capacity.
	 */
	public BenchmarkReport search(List<PolicySpec> policies, CapacitySearch search, Runnable progress) {
		List<CapacitySearch.Outcome> outcomes = parallel(policies,
				p -> search.search(rate -> Simulation.run(workload, p, config, rate, false, stopEarly), progress));
		double fixed = fixedRate(policies, outcomes);
		List<RunResult> atFixed = parallel(policies, p -> {
			RunResult r = Simulation.run(workload, p, config, fixed, true, stopEarly);
			progress.run();
			return r;
		});
		return report(policies, outcomes, atFixed, fixed);
	}

	/** Evaluates every policy at {@code rate} only. */
	public BenchmarkReport atRate(List<PolicySpec> policies, double rate, Runnable progress) {
		List<RunResult> runs = parallel(policies, p -> {
			RunResult r = Simulation.run(workload, p, config, rate, true, stopEarly);
			progress.run();
			return r;
		});
		List<CapacitySearch.Outcome> outcomes = runs.stream()
			.map(r -> config.passes(r) ? new CapacitySearch.Outcome(rate, r, List.of(r))
					: new CapacitySearch.Outcome(0, null, List.of(r)))
			.toList();
		return report(policies, outcomes, runs, rate);
	}

	private BenchmarkReport report(List<PolicySpec> policies, List<CapacitySearch.Outcome> outcomes,
			List<RunResult> atFixed, double fixed) {
		List<BenchmarkReport.PolicyReport> rows = new ArrayList<>();
		for (int i = 0; i < policies.size(); i++) {
			rows.add(new BenchmarkReport.PolicyReport(policies.get(i).name(), outcomes.get(i), atFixed.get(i)));
		}
		return new BenchmarkReport(workload.trace().name(), config.instances(), config.routers(),
				config.slo().toNanos() / 1e9, fixed, rows, config.targetAttainment(), config.promptTokenTarget());
	}

	/**
	 * The rate of the CDF and load charts: the best capacity among policies outside the
	 * DualMap family (the strongest peer), else the best of all, else the lowest rate
	 * tried.
	 */
	static double fixedRate(List<PolicySpec> policies, List<CapacitySearch.Outcome> outcomes) {
		double peers = 0;
		double all = 0;
		double lowest = Double.MAX_VALUE;
		for (int i = 0; i < policies.size(); i++) {
			CapacitySearch.Outcome o = outcomes.get(i);
			all = Math.max(all, o.capacity());
			if (!policies.get(i).name().startsWith("dualmap")) {
				peers = Math.max(peers, o.capacity());
			}
			for (RunResult r : o.points()) {
				lowest = Math.min(lowest, r.rate());
			}
		}
		return peers > 0 ? peers : all > 0 ? all : lowest;
	}

	private <T> List<T> parallel(List<PolicySpec> policies, java.util.function.Function<PolicySpec, T> task) {
		return parallel(policies, threads, task);
	}

	/**
	 * Applies {@code task} to every policy on a fixed pool of at most {@code threads}
	 * threads and returns the results in the order of {@code policies}.
	 */
	static <T> List<T> parallel(List<PolicySpec> policies, int threads,
			java.util.function.Function<PolicySpec, T> task) {
		ExecutorService pool = Executors.newFixedThreadPool(Math.min(threads, Math.max(1, policies.size())));
		try {
			List<Future<T>> futures = new ArrayList<>();
			for (PolicySpec p : policies) {
				futures.add(pool.submit(() -> task.apply(p)));
			}
			List<T> out = new ArrayList<>();
			for (Future<T> f : futures) {
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

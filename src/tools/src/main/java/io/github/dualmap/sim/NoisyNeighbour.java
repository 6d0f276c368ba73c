package io.github.dualmap.sim;

import java.util.List;
import java.util.Locale;

import io.github.dualmap.core.FairnessSettings;
import io.github.dualmap.sim.trace.Trace;
import org.jspecify.annotations.Nullable;

/**
 * The noisy-neighbour benchmark of {@code sim --tenants noisy}: two tenants of equal
 * weight on the trace's conversations, one sending ten times the other's requests
 * ({@link TenantMix#NOISY}). For a policy behind the dispatch queues it searches the
 * pool's capacity on the mixed workload with fair queuing off and on (the headline
 * metric, as every capacity table), then runs the pool past capacity (at {@code --rate},
 * else {@value #OVERLOAD} times the capacity without fairness) three ways: the quiet
 * tenant alone at its own arrival times, both tenants without fairness, both with it.
 */
final class NoisyNeighbour {

	/** The overload of the comparison runs, over the capacity without fairness. */
	static final double OVERLOAD = 1.5;

	private NoisyNeighbour() {
	}

	/**
	 * Everything the table shows for one policy.
	 *
	 * @param policy the row's policy
	 * @param capacityOff capacity (req/s) on the mixed workload without fairness
	 * @param capacityOn and with it
	 * @param rate the overload rate of the three runs
	 * @param alone the quiet tenant alone
	 * @param off both tenants, no fairness
	 * @param on both tenants, fair queuing
	 */
	record Result(String policy, double capacityOff, double capacityOn, double rate, TenantRun alone, TenantRun off,
			TenantRun on) {

		/** Change of capacity with fairness against without, as a fraction. */
		double capacityChange() {
			return capacityOff > 0 ? capacityOn / capacityOff - 1 : 0;
		}

		/** The quiet tenant's attainment with fairness over its attainment alone. */
		double quietKept() {
			double a = alone.tenant(TenantMix.QUIET).attainment();
			return a > 0 ? on.tenant(TenantMix.QUIET).attainment() / a : 0;
		}

		/**
		 * The noisy tenant's weighted max-min fair share of the pool's service (the
		 * tokens the pool served without fairness, when both wanted more): what the quiet
		 * tenant does not take of it, the quiet tenant taking at most half.
		 */
		double noisyFairTokens() {
			double pool = off.tenants().stream().mapToLong(TenantRun.TenantResult::servedTokens).sum();
			double quietDemand = on.tenant(TenantMix.QUIET).demandTokens();
			return pool - Math.min(quietDemand, pool / 2);
		}

		/** The noisy tenant's service with fairness over its fair share. */
		double noisyOfFair() {
			double fair = noisyFairTokens();
			return fair > 0 ? on.tenant(TenantMix.NOISY_TENANT).servedTokens() / fair : 0;
		}

	}

	/**
	 * Runs the benchmark for {@code policy}.
	 * @param rate the overload rate, {@code null}: {@value #OVERLOAD} times the capacity
	 * without fairness
	 */
	static Result run(Trace base, int repeat, SimulationConfig config, int threads, PoolProfiles engine,
			double minWindowSeconds, PolicySpec policy, CapacitySearch search, @Nullable Double rate,
			Runnable progress) {
		if (policy.queue() == null) {
			throw new IllegalArgumentException(
					"--tenants needs a policy behind the dispatch queues (a dualmap row), not '" + policy.name() + "'");
		}
		TenantMix mix = TenantMix.NOISY;
		FairnessSettings on = FairnessSettings.ofDefaults();
		FairnessSettings off = on.withEnabled(false);
		CapacityBenchmark bench = new CapacityBenchmark(base, repeat, config, threads, true, engine, minWindowSeconds);
		List<FairnessSettings> both = List.of(off, on);
		List<CapacitySearch.Outcome> capacities = parallel(threads, both, f -> search.search(at -> {
			CapacityBenchmark.Replay r = bench.replay(at);
			return Simulation.run(r.workload(), r.yardstick(), policy, config, at, mix, f, true).result();
		}, progress));
		double capacityOff = capacities.get(0).capacity();
		double at = rate != null ? rate : OVERLOAD * capacityOff;
		if (!(at > 0)) {
			throw new IllegalArgumentException("no rate passed without fairness; give --rate for the overload runs");
		}
		CapacityBenchmark.Replay replay = bench.replay(at);
		Trace whole = replay.workload().trace();
		TenantMix.Alone alone = mix.alone(whole, mix.indexOf(TenantMix.QUIET), config.warmup(), config.seed());
		SimulationConfig aloneConfig = config.withWarmup(alone.warmup());
		List<Integer> runs = List.of(0, 1, 2);
		List<TenantRun> results = parallel(threads, runs, k -> {
			TenantRun r = k == 0
					? Simulation.run(Workload.of(alone.trace()), null, policy, aloneConfig, alone.rateFor(whole, at),
							mix, on, false)
					: Simulation.run(replay.workload(), replay.yardstick(), policy, config, at, mix, k == 1 ? off : on,
							false);
			progress.run();
			return r;
		});
		return new Result(policy.name(), capacityOff, capacities.get(1).capacity(), at, results.get(0), results.get(1),
				results.get(2));
	}

	private static <T, R> List<R> parallel(int threads, List<T> items, java.util.function.Function<T, R> task) {
		java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors
			.newFixedThreadPool(Math.max(1, Math.min(threads, items.size())));
		try {
			List<java.util.concurrent.Future<R>> futures = items.stream()
				.map(t -> pool.submit(() -> task.apply(t)))
				.toList();
			List<R> out = new java.util.ArrayList<>();
			for (java.util.concurrent.Future<R> f : futures) {
				out.add(f.get());
			}
			return out;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("simulation interrupted", ex);
		}
		catch (java.util.concurrent.ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException re) {
				throw re;
			}
			throw new IllegalStateException(ex.getCause());
		}
		finally {
			pool.shutdownNow();
		}
	}

	/** The markdown table of {@code results}. */
	static String markdown(String trace, int instances, double sloSeconds, List<Result> results) {
		StringBuilder out = new StringBuilder();
		out.append(String.format(Locale.ROOT,
				"Noisy neighbour on %s, %d instances, TTFT SLO %.1fs: tenants quiet (1/11 of the conversations) and "
						+ "noisy (10/11), equal weights%n%n",
				trace, instances, sloSeconds));
		out.append("| policy | capacity without fairness (req/s) | with fairness (req/s) | change |\n");
		out.append("|---|---:|---:|---:|\n");
		for (Result r : results) {
			out.append(String.format(Locale.ROOT, "| %s | %.2f | %.2f | %+.1f %% |%n", r.policy(), r.capacityOff(),
					r.capacityOn(), 100 * r.capacityChange()));
		}
		out.append('\n');
		for (Result r : results) {
			out.append(String.format(Locale.ROOT, "%s at %.2f req/s (%.2fx its capacity without fairness):%n%n",
					r.policy(), r.rate(), r.capacityOff() > 0 ? r.rate() / r.capacityOff() : 0));
			out.append("| run | tenant | requests | within SLO | attainment | served tokens | of the pool's |\n");
			out.append("|---|---|---:|---:|---:|---:|---:|\n");
			row(out, "quiet alone", r.alone(), TenantMix.QUIET);
			for (String tenant : List.of(TenantMix.QUIET, TenantMix.NOISY_TENANT)) {
				row(out, "no fairness", r.off(), tenant);
			}
			for (String tenant : List.of(TenantMix.QUIET, TenantMix.NOISY_TENANT)) {
				row(out, "fair queuing", r.on(), tenant);
			}
			out.append(String.format(Locale.ROOT,
					"%nQuiet tenant with fair queuing: %.1f %% of its attainment alone (no fairness: %.1f %%). "
							+ "Noisy tenant with fair queuing: %.1f %% of its max-min fair share of the pool's service "
							+ "(%d tokens: the pool's service without fairness less the quiet tenant's demand). "
							+ "Capacity with fairness: %+.1f %%.%n%n",
					100 * r.quietKept(), 100 * quietKeptOff(r), 100 * r.noisyOfFair(), Math.round(r.noisyFairTokens()),
					100 * r.capacityChange()));
		}
		return out.toString();
	}

	private static double quietKeptOff(Result r) {
		double a = r.alone().tenant(TenantMix.QUIET).attainment();
		return a > 0 ? r.off().tenant(TenantMix.QUIET).attainment() / a : 0;
	}

	private static void row(StringBuilder out, String run, TenantRun r, String tenant) {
		TenantRun.TenantResult t = r.tenant(tenant);
		long pool = r.tenants().stream().mapToLong(TenantRun.TenantResult::servedTokens).sum();
		out.append(String.format(Locale.ROOT, "| %s | %s | %d | %d | %.1f %% | %d | %.1f %% |%n", run, tenant,
				t.measured(), t.withinSlo(), 100 * t.attainment(), t.servedTokens(),
				pool > 0 ? 100.0 * t.servedTokens() / pool : 0));
	}

}

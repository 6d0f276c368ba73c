package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.github.dualmap.engine.EngineProfile;
import io.github.dualmap.sim.trace.Trace;
import org.jspecify.annotations.Nullable;

/**
 * Runs the capacity search (or one fixed rate) for every policy on one workload, policies
 * in parallel on a fixed pool of threads. Every run builds its own engines, pools and
 * policy objects, so the report does not depend on how runs are scheduled.
 * <p>
 * <b>Steady state.</b> Each rate replays the trace as many times as it takes (each copy
 * with its own prefixes, as {@link Trace#repeated} does) for the measured window to last
 * at least {@code minWindowSeconds} at that rate, so the engines' work, not the SLO's
 * slack, decides whether it passes; each run is judged on its replay's {@link Yardstick},
 * computed once per replay.
 */
public final class CapacityBenchmark {

	/** Replays kept at once; a search revisits only a few copy counts. */
	private static final int REPLAYS_KEPT = 4;

	/** The most requests a replay holds, whatever the window asks. */
	static final int MAX_REPLAY_REQUESTS = 4_000_000;

	private final Trace base;

	private final int minCopies;

	// The pool's engine profiles the Yardstick judges on; null: every request feasible.
	private final @Nullable PoolProfiles pool;

	private final double minWindowSeconds;

	private final Map<Integer, Replay> replays = new LinkedHashMap<>(8, 0.75f, true);

	private final String name;

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
		this(workload.trace(), 1, config, threads, stopEarly, (PoolProfiles) null, 0);
		replays.put(1, new Replay(workload, Yardstick.allFeasible(workload.trace(), config.warmup())));
	}

	/**
	 * @param base the trace one copy of the replay is
	 * @param minCopies copies every rate replays at least
	 * @param profile the engines' profile, for the {@link Yardstick}'s feasibility and
	 * work; {@code null}: every request feasible, no run transient
	 * @param minWindowSeconds the shortest measured window (first measured arrival to
	 * last arrival) a rate is run for, in virtual seconds; 0 for one pass of
	 * {@code minCopies}
	 */
	public CapacityBenchmark(Trace base, int minCopies, SimulationConfig config, int threads, boolean stopEarly,
			EngineProfile profile, double minWindowSeconds) {
		this(base, minCopies, config, threads, stopEarly, PoolProfiles.of(profile, config.instances()),
				minWindowSeconds);
	}

	/**
	 * As
	 * {@link #CapacityBenchmark(Trace, int, SimulationConfig, int, boolean, EngineProfile, double)}
	 * on a pool of {@code pool}'s profiles ({@code null}: every request feasible, no run
	 * transient): a request is feasible when an engine of one of them serves it in time
	 * ({@link Yardstick#of(Trace, PoolProfiles, int, java.util.function.IntToLongFunction, long)}).
	 */
	public CapacityBenchmark(Trace base, int minCopies, SimulationConfig config, int threads, boolean stopEarly,
			@Nullable PoolProfiles pool, double minWindowSeconds) {
		if (threads <= 0) {
			throw new IllegalArgumentException("threads must be > 0 but was " + threads);
		}
		if (minCopies <= 0) {
			throw new IllegalArgumentException("minCopies must be > 0 but was " + minCopies);
		}
		if (!(minWindowSeconds >= 0) || Double.isInfinite(minWindowSeconds)) {
			throw new IllegalArgumentException("minWindowSeconds must be >= 0 but was " + minWindowSeconds);
		}
		this.base = base;
		this.minCopies = minCopies;
		this.config = config;
		this.threads = threads;
		this.stopEarly = stopEarly;
		this.pool = pool;
		this.minWindowSeconds = minWindowSeconds;
		this.name = minCopies == 1 ? base.name() : base.name() + " x" + minCopies;
	}

	/** A workload replayed some number of times and its yardstick. */
	record Replay(Workload workload, Yardstick yardstick) {
	}

	/**
	 * Copies of the trace a run at {@code rate} replays: at least {@code minCopies}, and
	 * enough that the measured arrivals span {@code minWindowSeconds} (each copy adds
	 * about its size over the rate).
	 */
	int copiesFor(double rate) {
		int n = base.size();
		double needed = (minWindowSeconds * rate + 1 + config.warmup()) / n;
		int most = Math.max(minCopies, MAX_REPLAY_REQUESTS / n);
		return (int) Math.min(most, Math.max(minCopies, Math.ceil(needed)));
	}

	/** The replay for {@code rate}, built (hashed and judged) once per copy count. */
	Replay replay(double rate) {
		int copies = copiesFor(rate);
		synchronized (replays) {
			Replay r = replays.get(copies);
			if (r == null) {
				Trace t = base.repeated(copies);
				r = new Replay(Workload.of(t), yardstick(t));
				replays.put(copies, r);
				if (replays.size() > REPLAYS_KEPT) {
					replays.remove(replays.keySet().iterator().next());
				}
			}
			return r;
		}
	}

	/**
	 * The {@link Yardstick} runs of {@code trace} are judged on: its requests'
	 * objectives, the network delay and, without an engine profile, every request
	 * feasible.
	 */
	Yardstick yardstick(Trace trace) {
		return yardstick(trace, pool, config);
	}

	/**
	 * The {@link Yardstick} a run of {@code trace} under {@code config} on {@code pool}'s
	 * engines ({@code null}: every request feasible) is judged on: every run of the
	 * simulator, a capacity search's or a scheduled one's, judges alike.
	 */
	static Yardstick yardstick(Trace trace, @Nullable PoolProfiles pool, SimulationConfig config) {
		return pool == null ? Yardstick.allFeasible(trace, config.warmup())
				: Yardstick.of(trace, pool, config.warmup(), sloFunction(config), config.networkDelay().toNanos());
	}

	private static java.util.function.IntToLongFunction sloFunction(SimulationConfig config) {
		long slo = config.slo().toNanos();
		SloClasses classes = config.sloClasses();
		if (classes.isEmpty()) {
			return i -> slo;
		}
		return i -> classes.sloNanos(classes.classOf(i, config.seed()), slo);
	}

	private RunResult run(PolicySpec p, double rate, boolean recordTimeline) {
		Replay r = replay(rate);
		return Simulation.run(r.workload(), r.yardstick(), p, config, rate, recordTimeline, stopEarly);
	}

	/**
	 * Searches the capacity of {@code policy}, calling {@code progress} after each run.
	 */
	CapacitySearch.Outcome searchOne(PolicySpec policy, CapacitySearch search, Runnable progress) {
		return search.search(rate -> run(policy, rate, false), progress);
	}

	/**
	 * Runs {@code policy} at {@code rate} with its load timeline, as the charts show it,
	 * then calls {@code progress}.
	 */
	RunResult runCharted(PolicySpec policy, double rate, Runnable progress) {
		RunResult r = run(policy, rate, true);
		progress.run();
		return r;
	}

	/**
	 * Searches each policy's capacity, then runs all of them at the best peer's capacity.
	 */
	public BenchmarkReport search(List<PolicySpec> policies, CapacitySearch search, Runnable progress) {
		List<CapacitySearch.Outcome> outcomes = parallel(policies, p -> searchOne(p, search, progress));
		double fixed = fixedRate(policies, outcomes);
		List<RunResult> atFixed = parallel(policies, p -> runCharted(p, fixed, progress));
		return report(policies, outcomes, atFixed, fixed);
	}

	/** Evaluates every policy at {@code rate} only. */
	public BenchmarkReport atRate(List<PolicySpec> policies, double rate, Runnable progress) {
		List<RunResult> runs = parallel(policies, p -> runCharted(p, rate, progress));
		List<CapacitySearch.Outcome> outcomes = runs.stream()
			.map(r -> new CapacitySearch.Outcome(config.passes(r) ? rate : 0, config.passes(r) ? r : null, List.of(r),
					config.passesRequests(r) ? rate : 0))
			.toList();
		return report(policies, outcomes, runs, rate);
	}

	private BenchmarkReport report(List<PolicySpec> policies, List<CapacitySearch.Outcome> outcomes,
			List<RunResult> atFixed, double fixed) {
		List<BenchmarkReport.PolicyReport> rows = new ArrayList<>();
		for (int i = 0; i < policies.size(); i++) {
			rows.add(new BenchmarkReport.PolicyReport(policies.get(i).name(), outcomes.get(i), atFixed.get(i)));
		}
		return new BenchmarkReport(name, config.instances(), config.routers(), config.slo().toNanos() / 1e9, fixed,
				rows, config.targetAttainment(), config.promptTokenTarget(), config.sizeFloor());
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
	 * Applies {@code task} to every item (a policy, or a policy and a replicate) on a
	 * fixed pool of at most {@code threads} threads and returns the results in the order
	 * of {@code items}.
	 */
	static <I, T> List<T> parallel(List<I> items, int threads, java.util.function.Function<I, T> task) {
		ExecutorService pool = Executors.newFixedThreadPool(Math.min(threads, Math.max(1, items.size())));
		try {
			List<Future<T>> futures = new ArrayList<>();
			for (I p : items) {
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

package io.github.dualmap.sim;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import io.github.dualmap.sim.trace.Trace;
import org.jspecify.annotations.Nullable;

/**
 * What one {@code sim} invocation runs, its options checked and parsed by
 * {@link SimCommand}: {@link SimRun} runs it without looking at an option again.
 *
 * @param kind which benchmark the options ask for
 * @param base one copy of the workload (the trace or the synthetic workload, after
 * {@code --requests} and {@code --ties})
 * @param repeat copies of {@code base} replayed back to back ({@code --repeat})
 * @param workload {@code base} repeated {@code repeat} times
 * @param policies the rows, in the order {@code --policies} names them
 * @param engine the engines' profiles ({@code --profile}: one, or a mix)
 * @param config everything a simulated run needs besides the workload, the policy and the
 * rate
 * @param search how rates are searched and judged
 * @param rate the one rate to evaluate ({@code --rate}), or {@code null} to search
 * @param scaling the membership changes of a {@link Kind#MEMBERSHIP_CHANGES} run
 * @param threads runs in parallel
 * @param out the output directory, already made and checked writable
 * @param engineTimeline whether to write {@code engine_timeline.json}
 * @param replicates the runs of the capacity search ({@code --replicates}): the first is
 * this plan's own seed, workload, rows, engine and configuration, each next one all of
 * them as the next seed makes them
 */
record SimPlan(Kind kind, Trace base, int repeat, Trace workload, List<PolicySpec> policies, PoolProfiles engine,
		SimulationConfig config, Search search, @Nullable Double rate, Scaling scaling, int threads, Path out,
		boolean engineTimeline, Replicates replicates) {

	/** The benchmarks {@code sim} runs. */
	enum Kind {

		/** Each policy's capacity, or each policy at {@code --rate}. */
		CAPACITY,

		/** The noisy-neighbour benchmark ({@code --tenants noisy}). */
		NOISY_NEIGHBOUR,

		/**
		 * One run at {@code --rate} with instances joining and leaving ({@code --scale}).
		 */
		MEMBERSHIP_CHANGES

	}

	/**
	 * How a capacity search runs and judges a rate.
	 *
	 * @param tolerance relative width of the search's final bracket
	 * @param minWindowSeconds the shortest measured window a rate is run for
	 * @param stopEarly whether a failing run stops once more than 10 % of its measured
	 * requests have missed
	 */
	record Search(double tolerance, double minWindowSeconds, boolean stopEarly) {

	}

	/**
	 * The membership changes of a {@code --scale} run and its timeline's windows.
	 *
	 * @param membership when instances join and leave ({@link MembershipSchedule#NONE}
	 * without {@code --scale})
	 * @param window the timeline's window length
	 * @param windowOption {@code --window} as given, for the console's heading
	 */
	record Scaling(MembershipSchedule membership, Duration window, String windowOption) {

	}

	/**
	 * What one seed makes of the options: everything a run with {@code --seed seed} would
	 * replay, route and judge.
	 *
	 * @param seed the seed
	 * @param base one copy of the workload
	 * @param workload {@code base} repeated {@code --repeat} times
	 * @param policies the rows
	 * @param engine the engines' profiles, their jitter seeded by {@code seed}
	 * @param config the runs' configuration, seeded by {@code seed}
	 */
	record Replicate(long seed, Trace base, Trace workload, List<PolicySpec> policies, PoolProfiles engine,
			SimulationConfig config) {

	}

	/**
	 * The replicates of a capacity search.
	 *
	 * @param runs one per seed, the plan's own first
	 * @param traceName the workload's name in the report of more than one replicate,
	 * naming the seeds
	 */
	record Replicates(List<Replicate> runs, String traceName) {

		/** The number of replicates. */
		int count() {
			return this.runs.size();
		}

	}

	/**
	 * The capacity search of this plan: from {@link SimCommand#START_RATE_PER_INSTANCE}
	 * per instance to the plan's tolerance, judged as the configuration says.
	 */
	CapacitySearch capacitySearch() {
		return new CapacitySearch(SimCommand.START_RATE_PER_INSTANCE * this.config.instances(), this.search.tolerance(),
				10, this.config.targetAttainment(), this.config.promptTokenTarget(), this.config.sizeFloor());
	}

}

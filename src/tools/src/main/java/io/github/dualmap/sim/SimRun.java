package io.github.dualmap.sim;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.BooleanSupplier;

import io.github.dualmap.engine.EngineProfile;
import io.github.dualmap.sim.report.Charts;
import io.github.dualmap.sim.report.MarkdownTable;
import io.github.dualmap.sim.report.ResultsJson;
import io.github.dualmap.sim.report.ScalingReport;
import io.github.dualmap.sim.trace.Trace;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import org.jspecify.annotations.Nullable;

/**
 * Runs a {@link SimPlan} and writes what it found: the files in its output directory and
 * the tables on {@code stdout}, with a progress bar on stderr when that is a terminal.
 * Kept apart from {@link SimCommand} so that reading the options does not mean reading
 * the benchmarks, and the other way round.
 */
final class SimRun {

	private final SimPlan plan;

	private final PrintWriter stdout;

	SimRun(SimPlan plan, PrintWriter stdout) {
		this.plan = plan;
		this.stdout = stdout;
	}

	/** Runs the plan's benchmark and writes its outputs; returns the exit code. */
	int run() throws IOException {
		return switch (this.plan.kind()) {
			case NOISY_NEIGHBOUR -> noisyNeighbour();
			case MEMBERSHIP_CHANGES -> membershipChanges();
			case CAPACITY -> capacity();
		};
	}

	/**
	 * Each policy's capacity (or each at {@code --rate}): {@code results.json},
	 * {@code classes.json} with SLO classes, {@code engine_timeline.json} and
	 * {@code requests-<policy>.jsonl} when asked, the charts, and the markdown tables
	 * with the workload's bounds.
	 */
	private int capacity() throws IOException {
		SimPlan p = this.plan;
		SimulationConfig config = p.config();
		Path dir = p.out();
		CapacityBenchmark benchmark = new CapacityBenchmark(p.base(), p.repeat(), config, p.threads(),
				p.search().stopEarly(), p.engine(), p.search().minWindowSeconds());
		CapacitySearch search = p.capacitySearch();
		int replicates = p.replicates().count();
		long steps = p.rate() != null ? p.policies().size()
				: (long) p.policies().size() * (replicates * search.expectedEvaluations() + 1);
		BenchmarkReport report;
		try (ProgressBar bar = progressBar(steps)) {
			Runnable progress = bar == null ? () -> {
			} : bar::step;
			report = p.rate() != null ? benchmark.atRate(p.policies(), p.rate(), progress) : replicates > 1
					? ReplicatedCapacity.search(p, search, progress) : benchmark.search(p.policies(), search, progress);
			if (bar != null) {
				bar.maxHint(bar.getCurrent());
			}
		}
		ResultsJson.write(report, dir.resolve("results.json"));
		if (!config.sloClasses().isEmpty()) {
			ResultsJson.writeClasses(report, dir.resolve("classes.json"));
		}
		if (p.engineTimeline()) {
			ResultsJson.writeTimeline(report, dir.resolve("engine_timeline.json"));
		}
		ResultsJson.writeRequestLogs(report, dir);
		Charts.writeAll(report, dir);
		this.stdout.print(MarkdownTable.render(report));
		if (p.engine().mixed()) {
			// The bound costs every request on one profile; spread over a mix, what each
			// request costs depends on where it goes.
			this.stdout.printf(Locale.ROOT, "%nWork bound: not computed for a pool that mixes profiles (%s).%n",
					p.engine().name());
			this.stdout.flush();
			return 0;
		}
		EngineProfile engine = p.engine().first();
		Yardstick judged = benchmark.yardstick(p.workload());
		MarkdownTable.Ceilings ceilings = new MarkdownTable.Ceilings(
				judged.headlineCeiling(config.instances(), config.targetAttainment(), config.promptTokenTarget(),
						config.sizeFloor()),
				judged.withWork(WorkBound.pooledLruWorkSeconds(p.workload(), engine, config.instances()))
					.headlineCeiling(config.instances(), config.targetAttainment(), config.promptTokenTarget(),
							config.sizeFloor()));
		this.stdout.print(MarkdownTable.workBound(report, WorkBound.of(p.workload(), engine, config.warmup()),
				WorkBound.pooledLru(p.workload(), engine, config.warmup(), config.instances()), ceilings,
				engine.name()));
		this.stdout.flush();
		return 0;
	}

	/**
	 * The noisy-neighbour benchmark of every policy: {@code noisy.md} and the same table.
	 */
	private int noisyNeighbour() throws IOException {
		SimPlan p = this.plan;
		SimulationConfig config = p.config();
		CapacitySearch search = p.capacitySearch();
		List<NoisyNeighbour.Result> results = new ArrayList<>();
		try (ProgressBar bar = progressBar(
				(long) p.policies().size() * (2L * (search.expectedEvaluations() + 1) + 3))) {
			Runnable progress = bar == null ? () -> {
			} : bar::step;
			for (PolicySpec policy : p.policies()) {
				results.add(NoisyNeighbour.run(p.base(), p.repeat(), config, p.threads(), p.engine(),
						p.search().minWindowSeconds(), policy, search, p.rate(), progress));
			}
		}
		String table = NoisyNeighbour.markdown(p.base().name(), config.instances(), config.slo().toNanos() / 1e9,
				results);
		Files.writeString(p.out().resolve("noisy.md"), table);
		this.stdout.print(table);
		this.stdout.flush();
		return 0;
	}

	/**
	 * One run per policy at {@code --rate} with the {@code --scale} and
	 * {@code --slow-down} changes: the timeline file, its chart, the per-window table
	 * and, with {@code --request-log}, {@code requests-<policy>.jsonl}.
	 */
	private int membershipChanges() throws IOException {
		SimPlan p = this.plan;
		SimulationConfig config = p.config();
		SimPlan.Scaling scaling = p.scaling();
		double at = p.rate();
		Workload workload = Workload.of(p.workload());
		Trace t = workload.trace();
		List<ScalingTimeline> timelines = ScaledRuns.run(workload, CapacityBenchmark.yardstick(t, p.engine(), config),
				p.policies(), config, at, scaling.membership(), scaling.window().toNanos(), p.threads());
		MembershipSchedule changes = scaling.membership();
		ScalingReport.write(ScalingReport.toJson(t.name(), config.instances(), at, changes.toString(),
				changes.slowDowns(), config.slo().toNanos() / 1e9, timelines), timelines, p.out());
		for (ScalingTimeline timeline : timelines) {
			RequestLog log = timeline.summary().requestLog();
			if (log != null) {
				ResultsJson.writeRequestLog(timeline.policy(), log, p.out());
			}
		}
		String named = (changes.toString().isEmpty() ? "" : ", --scale " + changes)
				+ (changes.slowDowns().isEmpty() ? "" : ", --slow-down " + changes.slowDowns());
		this.stdout.printf(Locale.ROOT, "Trace %s, %d instances, %.2f req/s%s, windows of %s%n%n", t.name(),
				config.instances(), at, named, scaling.windowOption());
		this.stdout.print(ScalingReport.markdown(timelines));
		this.stdout.flush();
		return 0;
	}

	private @Nullable ProgressBar progressBar(long steps) {
		if (!stderrIsTerminal(Path.of("/proc/self/fd/2"), () -> System.console() != null)) {
			return null;
		}
		return new ProgressBarBuilder().setTaskName("sim")
			.setInitialMax(steps)
			.setUnit(" runs", 1)
			.setConsumer(new ConsoleProgressBarConsumer(System.err))
			.build();
	}

	/**
	 * Whether stderr, where the progress bar goes, is a terminal: on Linux, whether
	 * {@code stderrLink} ({@code /proc/self/fd/2}) links to a terminal device
	 * ({@code /dev/pts/*}, {@code /dev/tty*}); where there is no such link,
	 * {@code fallback} ({@code System.console() != null}, which asks about stdin and
	 * stdout, not stderr).
	 */
	static boolean stderrIsTerminal(Path stderrLink, BooleanSupplier fallback) {
		String target;
		try {
			target = Files.readSymbolicLink(stderrLink).toString();
		}
		catch (IOException | UnsupportedOperationException | SecurityException ex) {
			return fallback.getAsBoolean();
		}
		return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
	}

}

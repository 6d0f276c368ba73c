package io.github.dualmap.sim;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import io.github.dualmap.autoconfigure.DualMapProperties;
import io.github.dualmap.core.NanoClock;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.engine.EngineProfile;
import io.github.dualmap.sim.report.ScalingReport;
import io.github.dualmap.sim.trace.AzureTraceReader;
import io.github.dualmap.sim.trace.MooncakeTraceReader;
import io.github.dualmap.sim.trace.SyntheticWorkload;
import io.github.dualmap.sim.trace.Trace;
import io.github.dualmap.sim.trace.TraceFormatException;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The {@code sim} sub-command of the exec jar: replays a trace into every chosen policy,
 * searches each one's capacity, prints a markdown table and writes {@code results.json}
 * and PNG charts. This class holds the options and checks them into a {@link SimPlan};
 * {@link SimRun} runs the plan and writes its outputs. Bad input ends with exit code 2
 * and one line saying what is wrong.
 */
@Command(name = "sim", mixinStandardHelpOptions = true, sortOptions = false,
		description = "Discrete-event capacity benchmark of routing policies on a trace.")
public final class SimCommand extends ConsoleCommand<SimCommand> {

	/**
	 * Requests of a --quick run (warm-up included). The headline weighs prompt tokens, so
	 * a few very long prompts move it: on the conversation trace 2,000 requests reverse
	 * 12 of the 180 policy pairs the full run separates by more than the quick search's
	 * 10 %, and 6,000 keep all of them in order.
	 */
	public static final int QUICK_REQUESTS = 6000;

	/**
	 * Requests generated for a synthetic workload in a full run: enough for minutes of
	 * traffic at the rates these workloads reach, so capacity is a steady state. At
	 * 10,000 (15-30 s of traffic) backlogs had no time to build, and capacities were up
	 * to twice what a pool sustains.
	 */
	public static final int SYNTHETIC_REQUESTS = 50_000;

	/** Relative width of the search's final bracket in a full run. */
	static final double FULL_TOLERANCE = 0.02;

	/** Relative width of the search's final bracket with {@code --quick}. */
	static final double QUICK_TOLERANCE = 0.1;

	/** First rate of the search, per instance. */
	public static final double START_RATE_PER_INSTANCE = 1.0;

	@Option(names = "--trace", paramLabel = "FILE", description = "trace file (Mooncake JSONL or Azure CSV)")
	@Nullable Path trace;

	@Option(names = "--format", paramLabel = "mooncake|azure",
			description = "trace format (default: azure for .csv files, mooncake otherwise)")
	@Nullable String format;

	@Option(names = "--synthetic", paramLabel = "tenants|sessions|rag|no-reuse",
			description = "generate a synthetic workload instead of reading --trace")
	@Nullable String synthetic;

	@Option(names = "--tenants", paramLabel = "noisy",
			description = "the noisy-neighbour benchmark: the workload's conversations split between a quiet tenant "
					+ "and a noisy one sending ten times its requests; searches the capacity with the dispatch queues' "
					+ "fair queuing off and on, then runs past capacity (--rate, else 1.5x the capacity without "
					+ "fairness) with the quiet tenant alone, both without fairness and both with it (DualMap rows "
					+ "only; --policies defaults to dualmap)")
	@Nullable String tenants;

	@Option(names = "--instances", defaultValue = "8", description = "engine instances (default ${DEFAULT-VALUE})")
	int instances;

	@Option(names = "--profile", defaultValue = EngineProfile.DEFAULT,
			description = "engine profile: h100-8b (16-bit KV, 0.44 M tokens), h100-8b-fp8 (0.9 M) or a100-8b (default "
					+ "${DEFAULT-VALUE}); or a pool that mixes them, NAME:COUNT[:WEIGHT],... adding up to --instances, "
					+ "e.g. h100-8b:4,a100-8b:4 (instances in that order; WEIGHT their ring weight, as the "
					+ "dualmap.weight metadata gives it, default 1; a request is feasible when an idle engine of one "
					+ "of them serves it in time; no work bound is printed for a mix)")
	String profile = EngineProfile.DEFAULT;

	@Option(names = "--long-prefill-token-threshold", defaultValue = "0", paramLabel = "TOKENS",
			description = "the engines' long_prefill_token_threshold (vLLM): no prompt is scheduled more than TOKENS "
					+ "tokens in a step, so a long prefill leaves the rest of the step's budget to other prompts; "
					+ "0 for none, vLLM's default (default ${DEFAULT-VALUE})")
	int longPrefillTokenThreshold;

	@Option(names = "--engine-jitter", defaultValue = "0", paramLabel = "SHARE",
			description = "noise on every engine step's time, uniform within +-SHARE of it and seeded by --seed, "
					+ "so runs with other seeds are replicates: at least 0, below 0.5 (default ${DEFAULT-VALUE}: "
					+ "the profile's step times exactly)")
	double engineJitter;

	@Option(names = "--slo-ttft", defaultValue = "5s", paramLabel = "DURATION",
			description = "TTFT objective, e.g. 5s or 800ms (default ${DEFAULT-VALUE})")
	String sloTtft = "5s";

	@Option(names = "--slo-classes", paramLabel = "NAME=DURATION:SHARE[:PRIORITY][,...]",
			description = "TTFT objectives per request class, as dualmap.slo.classes give them, e.g. "
					+ "interactive=2s:0.2:1,batch=60s:0.3: that share of requests (a seeded random choice) has that "
					+ "objective (and, with a PRIORITY, that priority band in the dispatch queues, as "
					+ "dualmap.slo.classes.<name>.priority), the rest has --slo-ttft; capacity counts each request "
					+ "against its own; prints attainment per class and writes classes.json")
	@Nullable String sloClasses;

	@Option(names = "--policies", defaultValue = "all", description = "all, or a comma-separated list of policy names")
	String policies = "all";

	@Option(names = "--requests", description = "replay only the first N requests (warm-up included)")
	@Nullable Integer requests;

	@Option(names = "--repeat", defaultValue = "1", paramLabel = "K",
			description = "replay the trace K times back to back, each copy with its own prefixes (after --requests; "
					+ "the warm-up is the first copy's): a longer run in which an overloaded pool's backlog keeps "
					+ "growing (default ${DEFAULT-VALUE})")
	int repeat = 1;

	@Option(names = "--ties", defaultValue = "spread", paramLabel = "spread|stamped",
			description = "how requests that share a trace timestamp arrive: spread evenly over the gap to the next "
					+ "timestamp, or stamped, all at the same instant (the Mooncake traces stamp arrivals in 3 s "
					+ "steps, so as stamped each step's requests arrive together) (default ${DEFAULT-VALUE})")
	String ties = "spread";

	@Option(names = "--routers", defaultValue = "1", description = "gateway replicas (default ${DEFAULT-VALUE})")
	int routers;

	@Option(names = "--router-phases", defaultValue = "staggered", paramLabel = "staggered|aligned",
			description = "when each router scrapes the engines and, with --replica-sync, flushes to the others: "
					+ "staggered, router r of R r/R of an interval after router 0, as independent replicas' schedules "
					+ "run apart; or aligned, every router at the same instants (default ${DEFAULT-VALUE})")
	String routerPhases = "staggered";

	@Option(names = "--router-spread", defaultValue = "requests", paramLabel = "requests|sessions",
			description = "how the load balancer in front of the routers spreads the requests: requests, request i to "
					+ "router i mod R (round robin); or sessions, every turn of a conversation to one router, by a hash "
					+ "of the conversation (a load balancer hashing a session header; the conversations the workload "
					+ "records, the synthetic sessions' turns, else read from the prompts' blocks, simulator.md) "
					+ "(default ${DEFAULT-VALUE})")
	String routerSpread = "requests";

	@Option(names = "--seed", defaultValue = "42", description = "random seed (default ${DEFAULT-VALUE})")
	long seed;

	@Option(names = "--replicates", defaultValue = "1", paramLabel = "K",
			description = "search every row's capacity K times, the i-th (from 0) exactly as a run with --seed "
					+ "(seed + i) would: its own engine jitter, synthetic arrivals and SLO classes; prints and writes "
					+ "each replicate's capacity, their median, min and max, the other metrics from the replicate "
					+ "with the lower median capacity; 1 to " + SimCommand.MAX_REPLICATES + " (default "
					+ "${DEFAULT-VALUE}); a trace replay needs --engine-jitter (or --slo-classes) to differ; not with "
					+ "--rate, --scale or --tenants")
	int replicates = 1;

	@Option(names = "--quick",
			description = "the first " + QUICK_REQUESTS
					+ " requests, a 10 %% search tolerance and a 50s minimum window "
					+ "(about 2 minutes for all policies on the conversation trace on 2 cores)")
	boolean quick;

	@Option(names = "--out", required = true, paramLabel = "DIR", description = "output directory")
	@Nullable Path out;

	@Option(names = "--scrape-interval", paramLabel = "DURATION",
			description = "engine metrics scrape interval for every policy (default: per policy, 500ms; llmd-scorer 50ms)")
	@Nullable String scrapeInterval;

	@Option(names = "--network-delay", defaultValue = "0ms", paramLabel = "DURATION",
			description = "one-way router-engine delay (default ${DEFAULT-VALUE})")
	String networkDelay = "0ms";

	@Option(names = "--rate", description = "evaluate this one rate (req/s) instead of searching")
	@Nullable Double rate;

	@Option(names = "--target-attainment", defaultValue = "0.9",
			description = "the share of measured requests within the TTFT SLO that a rate must reach to pass; capacity "
					+ "is the highest such rate (default ${DEFAULT-VALUE}, the benchmark's definition; 0.95 or 0.99 for "
					+ "stricter objectives)")
	double targetAttainment;

	@Option(names = "--target-prompt-tokens", defaultValue = "0.9", paramLabel = "F",
			description = "also require this share of the feasible requests' prompt tokens to belong to requests "
					+ "within the TTFT SLO for a rate to pass (default ${DEFAULT-VALUE}; 0: none): attainment counts "
					+ "requests alike, so a policy that turns away long prompts would pass with less work served")
	double targetPromptTokens = 0.9;

	@Option(names = "--size-floor", defaultValue = "0.8", paramLabel = "F",
			description = "also require this share of each prompt-size quartile of the feasible requests within the "
					+ "TTFT SLO for a rate to pass (default ${DEFAULT-VALUE}; 0: none)")
	double sizeFloor = 0.8;

	@Option(names = "--min-duration", paramLabel = "DURATION",
			description = "the shortest measured window a rate is run for: the trace is replayed, each copy with its "
					+ "own prefixes, until its measured arrivals span this long (default: the TTFT SLO over the "
					+ "search tolerance, 250s in a full run and 50s with --quick at a 5s SLO)")
	@Nullable String minDuration;

	@Option(names = "--no-stop", description = "run every measured request to its end, even once more than 10 %% "
			+ "have missed (by default such a run stops there: the rate fails either way); slower at failing rates, "
			+ "but their attainment and TTFT percentiles are then what the whole trace reaches")
	boolean noStop;

	@Option(names = "--warmup", defaultValue = "500",
			description = "leading requests excluded from metrics (default ${DEFAULT-VALUE})")
	int warmup;

	@Option(names = "--threads", defaultValue = "2", description = "parallel runs (default ${DEFAULT-VALUE})")
	int threads;

	@Option(names = "--scale", paramLabel = "WHEN:DELTA[,...]",
			description = "membership changes during one run at --rate, e.g. 50%%:+2 or 600s:-1; writes "
					+ ScalingReport.TIMELINE_JSON + " and " + ScalingReport.CHART + " instead of a capacity search")
	@Nullable String scale;

	@Option(names = "--slow-down", paramLabel = "WHEN:INSTANCE:FACTOR[,...]",
			description = "engines that slow down during one run at --rate, e.g. 50%%:0:2: from half the trace "
					+ "every step of instance 0 takes twice its modelled time (1 restores it); the routers learn it "
					+ "only from what they observe; writes " + ScalingReport.TIMELINE_JSON + " and "
					+ ScalingReport.CHART + " as --scale does, and combines with it")
	@Nullable String slowDown;

	@Option(names = "--window", defaultValue = "30s", paramLabel = "DURATION",
			description = "timeline window of a --scale or --slow-down run (default ${DEFAULT-VALUE})")
	String window = "30s";

	@Option(names = "--slow-start", defaultValue = "0s", paramLabel = "DURATION",
			description = "a new instance's share ramps up over this period (default ${DEFAULT-VALUE}: off)")
	String slowStart = "0s";

	@Option(names = { "--replica-sync", "--shared-prefix-view" },
			description = "router replicas publish their releases to each other as the gateway's replica sync "
					+ "does (dualmap.replicas.*): every dualmap.replicas.flush-interval, arriving after "
					+ "--network-delay, with their load per instance unless --set "
					+ "dualmap.replicas.share-load=false (with --routers > 1)")
	boolean replicaSync;

	@Option(names = "--engine-timeline",
			description = "also write DIR/engine_timeline.json: every engine's running, waiting, KV usage, preemptions, "
					+ "requests in flight and queued at each scrape of the runs behind the load chart")
	boolean engineTimeline;

	@Option(names = "--request-log",
			description = "also write DIR/requests-<policy>.jsonl: every measured request of the row's headline run "
					+ "(at its capacity, at --rate, or its --scale / --slow-down run), with its router, prompt, "
					+ "instance, release and its reason, moves, cached tokens, TTFT, outcome and why it was turned away")
	boolean requestLog;

	@Option(names = "--set", paramLabel = "PROPERTY=VALUE",
			description = "a gateway property for the run, repeatable, e.g. dualmap.switch-hit-charge=2 or "
					+ "dualmap.dispatch.max-queued-per-pool=4096; scheduler properties apply to every row, "
					+ "dispatch properties to the DualMap rows")
	List<String> set = new ArrayList<>();

	private NanoClock decisionTimer = NanoClock.SYSTEM;

	public SimCommand() {
		super("sim");
	}

	/** Runs the command with {@code args}; returns the exit code. */
	public static int run(String... args) {
		return new SimCommand().runWith(args);
	}

	/**
	 * Sends output to {@code out} and {@code err} and times decisions with {@code timer}.
	 */
	SimCommand redirect(PrintWriter out, PrintWriter err, NanoClock timer) {
		this.decisionTimer = timer;
		return redirect(out, err);
	}

	@Override
	public Integer call() {
		try {
			return new SimRun(plan(), stdout).run();
		}
		catch (TraceFormatException | IllegalArgumentException | UncheckedIOException ex) {
			stderr.println("sim: " + ex.getMessage());
			return USAGE;
		}
		catch (IOException ex) {
			stderr.println("sim: cannot write results: " + ex.getClass().getSimpleName() + ": " + ex.getMessage());
			return USAGE;
		}
	}

	/**
	 * Checks the options, reads the workload and makes the output directory: what
	 * {@link SimRun} runs, with every replicate's seed. Checks come in a fixed order, so
	 * a command line with several mistakes is told about the same one each time.
	 * @throws IllegalArgumentException naming the first option that is wrong
	 */
	private SimPlan plan() {
		if (replicates < 1 || replicates > MAX_REPLICATES) {
			throw new IllegalArgumentException(
					"--replicates must be between 1 and " + MAX_REPLICATES + " but was " + replicates);
		}
		SimPlan first = plan(seed);
		if (replicates == 1) {
			return first;
		}
		if (tenants != null) {
			throw new IllegalArgumentException("--replicates is not supported with --tenants");
		}
		if (scale != null || slowDown != null) {
			throw new IllegalArgumentException(
					"--replicates is not supported with " + (scale != null ? "--scale" : "--slow-down"));
		}
		if (rate != null) {
			throw new IllegalArgumentException(
					"--replicates is not supported with --rate: it repeats the capacity search (run --rate once per "
							+ "--seed instead)");
		}
		if (synthetic == null && engineJitter == 0 && sloClasses == null) {
			throw new IllegalArgumentException("--replicates " + replicates + " on a trace replay would give identical "
					+ "copies: without engine jitter every seed replays the trace the same way; add --engine-jitter "
					+ "SHARE (e.g. 0.02)");
		}
		if (seed > Long.MAX_VALUE - (replicates - 1)) {
			throw new IllegalArgumentException(
					"--seed " + seed + " with --replicates " + replicates + " runs seeds past " + Long.MAX_VALUE
							+ "; give a --seed at most " + (Long.MAX_VALUE - (replicates - 1)));
		}
		List<SimPlan.Replicate> runs = new ArrayList<>(first.replicates().runs());
		for (int i = 1; i < replicates; i++) {
			runs.addAll(plan(seed + i).replicates().runs());
		}
		String seeds = "seeds " + seed + " to " + (seed + replicates - 1);
		return new SimPlan(first.kind(), first.base(), first.repeat(), first.workload(), first.policies(),
				first.engine(), first.config(), first.search(), first.rate(), first.scaling(), first.threads(),
				first.out(), first.engineTimeline(),
				new SimPlan.Replicates(runs, jittered(unseededName) + ", " + seeds));
	}

	/**
	 * The plan of a run with {@code --seed s}: every seeded part (the engines' jitter, a
	 * synthetic workload's arrivals, the SLO classes) drawn from {@code s}.
	 */
	private SimPlan plan(long s) {
		positive("--instances", instances);
		positive("--routers", routers);
		positive("--threads", threads);
		positive("--repeat", repeat);
		atMost("--instances", instances, MAX_INSTANCES);
		atMost("--routers", routers, MAX_ROUTERS);
		if (replicaSync && routers < 2) {
			throw new IllegalArgumentException("--replica-sync needs --routers 2 or more: one router has no peer");
		}
		if (warmup < 0) {
			throw new IllegalArgumentException("--warmup must be >= 0 but was " + warmup);
		}
		if (!(targetAttainment > 0 && targetAttainment <= 1)) {
			throw new IllegalArgumentException("--target-attainment must be in (0, 1] but was " + targetAttainment);
		}
		if (!(targetPromptTokens >= 0 && targetPromptTokens <= 1)) {
			throw new IllegalArgumentException(
					"--target-prompt-tokens must be in [0, 1] but was " + targetPromptTokens);
		}
		if (!(sizeFloor >= 0 && sizeFloor <= 1)) {
			throw new IllegalArgumentException("--size-floor must be in [0, 1] but was " + sizeFloor);
		}
		if (requests != null) {
			positive("--requests", requests);
		}
		if (rate != null && !(rate >= MIN_RATE && rate <= MAX_RATE)) {
			throw new IllegalArgumentException(
					"--rate must be between " + MIN_RATE + " and " + (long) MAX_RATE + " req/s but was " + rate);
		}
		if (rate != null && rate > MAX_RATE_PER_INSTANCE * instances) {
			throw new IllegalArgumentException("--rate " + rate + " is more than " + (long) MAX_RATE_PER_INSTANCE
					+ " req/s per instance of the " + instances + ": the queues would hold millions of requests "
					+ "before the run could tell that the pool fails");
		}
		Duration slo = DurationOption.parse("--slo-ttft", sloTtft);
		if (slo.isZero()) {
			throw new IllegalArgumentException("--slo-ttft must be > 0 but was " + sloTtft);
		}
		Duration delay = DurationOption.parse("--network-delay", networkDelay);
		Duration scrape = scrapeInterval == null ? null : DurationOption.parse("--scrape-interval", scrapeInterval);
		if (scrape != null && scrape.toNanos() < MIN_SCRAPE_INTERVAL.toNanos()) {
			throw new IllegalArgumentException("--scrape-interval must be at least " + MIN_SCRAPE_INTERVAL.toMillis()
					+ "ms but was " + scrapeInterval);
		}
		Duration rampUp = DurationOption.parse("--slow-start", slowStart);
		Duration windowLength = DurationOption.parse("--window", window);
		if (windowLength.isZero()) {
			throw new IllegalArgumentException("--window must be > 0 but was " + window);
		}
		MembershipSchedule membership = scale == null ? MembershipSchedule.NONE
				: MembershipSchedule.parse(scale, instances);
		if (scale != null && rate == null) {
			throw new IllegalArgumentException("--scale needs --rate: a membership change is watched at one rate");
		}
		if (slowDown != null) {
			if (rate == null) {
				throw new IllegalArgumentException("--slow-down needs --rate: a slowdown is watched at one rate");
			}
			membership = membership.plus(MembershipSchedule.parseSlowDowns(slowDown, instances));
		}
		if (!(engineJitter >= 0 && engineJitter < 0.5)) {
			throw new IllegalArgumentException(
					"--engine-jitter must be at least 0 and below 0.5 but was " + engineJitter);
		}
		if (longPrefillTokenThreshold < 0) {
			throw new IllegalArgumentException(
					"--long-prefill-token-threshold must be >= 0 but was " + longPrefillTokenThreshold);
		}
		PoolProfiles engine = PoolProfiles.parse(profile, instances)
			.map(e -> e.withJitter(engineJitter, s).withLongPrefillTokenThreshold(longPrefillTokenThreshold));
		DualMapProperties gateway = SetOptionBinder.bind(set);
		if (tenants != null) {
			TenantMix.fromCliName(tenants);
			if (scale != null || slowDown != null || sloClasses != null) {
				throw new IllegalArgumentException(
						"--tenants is not supported with --scale, --slow-down or --slo-classes");
			}
		}
		List<PolicySpec> specs = policySpecs(tenants != null && policies.strip().equals("all") ? "dualmap" : policies,
				gateway.toQueueSettings(), engine);
		if (engine.mixed() && specs.stream().anyMatch(spec -> spec.name().equals(PolicySpec.DUALMAP_ORACLE_TTFT))) {
			throw new IllegalArgumentException(PolicySpec.DUALMAP_ORACLE_TTFT
					+ " takes one engine profile's coefficients: it is not supported with a mix of --profile");
		}
		Trace baseTrace = loadTrace(s, engine);
		if ((long) baseTrace.size() * repeat > CapacityBenchmark.MAX_REPLAY_REQUESTS) {
			throw new IllegalArgumentException("--repeat " + repeat + " makes " + (long) baseTrace.size() * repeat
					+ " requests of the " + baseTrace.size() + " of the workload; at most "
					+ CapacityBenchmark.MAX_REPLAY_REQUESTS + " are replayed");
		}
		Trace workloadTrace = baseTrace.repeated(repeat);
		if (rate != null && !membership.steps().isEmpty()) {
			long span = workloadTrace.arrivalSpanNanos(rate);
			for (MembershipSchedule.Step step : membership.steps()) {
				if (step.at() >= span) {
					throw new IllegalArgumentException("--" + (step.slowDown() ? "slow-down" : "scale") + " step '"
							+ step.text() + "' comes after the last arrival: the workload's arrivals span "
							+ String.format(Locale.ROOT, "%.1f", span / 1e9) + " s at --rate " + rate
							+ " (give a time below that, or a share such as 50%)");
				}
			}
		}
		double tolerance = quick ? QUICK_TOLERANCE : FULL_TOLERANCE;
		// A pool loaded a share e above its capacity builds a backlog at e of its work
		// rate, which pushes waits past the SLO after about SLO / e: to tell a rate from
		// one a tolerance above it, a run must last at least SLO / tolerance.
		Duration steady = minDuration == null ? Duration.ofNanos(Math.round(slo.toNanos() / tolerance))
				: DurationOption.parse("--min-duration", minDuration);
		Path dir = out;
		if (dir == null) {
			throw new IllegalArgumentException("--out is required");
		}

		SchedulerSettings settings = gateway.toSchedulerSettings()
			.toBuilder()
			.blockTokens(workloadTrace.blockTokens())
			.defaultSlo(slo)
			.shadowCapacityTokens(engine.largestKvCapacityTokens())
			.slowStart(rampUp)
			.build();
		SimulationConfig config = SimulationConfig.builder()
			.instances(instances)
			.routers(routers)
			.slo(slo)
			.scrapeInterval(scrape)
			.networkDelay(delay)
			.warmup(warmup)
			.seed(s)
			.settings(settings)
			.instanceModels(EngineInstance.factory(engine, workloadTrace.blockTokens()))
			.decisionTimer(decisionTimer)
			.prefixShareInterval(replicaSync ? gateway.getReplicas().getFlushInterval() : null)
			.routerPhases(RouterPhases.fromCliName(routerPhases))
			.routerSpread(RouterSpread.fromCliName(routerSpread))
			.requestLog(requestLog)
			.build();
		SloClasses classes = sloClasses == null ? SloClasses.NONE : SloClasses.parse(sloClasses);
		if (!classes.isEmpty() && !membership.isEmpty()) {
			throw new IllegalArgumentException(
					"--slo-classes is not supported with " + (scale != null ? "--scale" : "--slow-down"));
		}
		if (engineTimeline && !membership.isEmpty()) {
			throw new IllegalArgumentException("--engine-timeline is not supported with "
					+ (scale != null ? "--scale" : "--slow-down") + " (its timeline.json has the windows)");
		}
		if (requestLog && tenants != null) {
			throw new IllegalArgumentException("--request-log is not supported with --tenants"
					+ ": it logs the runs of a capacity search, a --rate run or a --scale / --slow-down run");
		}
		if (engineTimeline && tenants != null) {
			throw new IllegalArgumentException("--engine-timeline is not supported with --tenants"
					+ ": it records the engines of a capacity search's or a --rate run's rows");
		}
		config = config.toBuilder()
			.sloClasses(classes)
			.targetAttainment(targetAttainment)
			.promptTokenTarget(targetPromptTokens)
			.sizeFloor(sizeFloor)
			.shareLoad(gateway.getReplicas().isShareLoad())
			.build();
		if (warmup >= workloadTrace.size()) {
			throw new IllegalArgumentException("the workload has " + workloadTrace.size()
					+ " requests, not more than --warmup " + warmup + "; nothing would be measured");
		}
		// Last, once every option has been checked: a refused run leaves no directory.
		writableDirectory("--out", dir);
		SimPlan.Kind kind = tenants != null ? SimPlan.Kind.NOISY_NEIGHBOUR
				: rate != null && !membership.isEmpty() ? SimPlan.Kind.MEMBERSHIP_CHANGES : SimPlan.Kind.CAPACITY;
		SimPlan.Replicate own = new SimPlan.Replicate(s, baseTrace, workloadTrace, specs, engine, config);
		return new SimPlan(kind, baseTrace, repeat, workloadTrace, specs, engine, config,
				new SimPlan.Search(tolerance, steady.toNanos() / 1e9, !noStop), rate,
				new SimPlan.Scaling(membership, windowLength, window), threads, dir, engineTimeline,
				new SimPlan.Replicates(List.of(own), baseTrace.name()));
	}

	/** The trace file as read, kept for the next replicate (it has no seeded part). */
	private @Nullable Trace fileTrace;

	/** The workload's name before engine jitter and a seed are added to it. */
	private String unseededName = "";

	/**
	 * The workload of a run with {@code --seed s} on {@code engines}, named with its
	 * engine jitter and seed when it has jitter.
	 */
	private Trace loadTrace(long s, PoolProfiles engines) {
		Trace replayed = replayed(s, engines);
		unseededName = replayed.name();
		return engineJitter == 0 ? replayed
				: new Trace(jittered(replayed.name()) + ", seed " + s, replayed.blockTokens(), replayed.requests());
	}

	private String jittered(String name) {
		return engineJitter == 0 ? name : name + ", engine step jitter " + engineJitter;
	}

	/**
	 * The workload of a run with {@code --seed s} before it is named: read or generated,
	 * cut to {@code --requests}, its ties replayed as {@code --ties} asks and, with
	 * several routers, their phases named, and a mix of {@code engines} named.
	 */
	private Trace replayed(long s, PoolProfiles engines) {
		if ((trace == null) == (synthetic == null)) {
			throw new IllegalArgumentException(
					"give exactly one of --trace FILE and --synthetic tenants|sessions|rag|no-reuse");
		}
		Trace t;
		if (synthetic != null) {
			int n = requests != null ? requests : quick ? QUICK_REQUESTS : SYNTHETIC_REQUESTS;
			t = SyntheticWorkload.fromCliName(synthetic).generate(n, s);
		}
		else if (fileTrace != null) {
			t = fileTrace;
		}
		else {
			Path file = trace;
			if (!Files.isReadable(file)) {
				throw new IllegalArgumentException("cannot read trace file " + file);
			}
			String fmt = format != null ? format.toLowerCase(Locale.ROOT)
					: file.toString().toLowerCase(Locale.ROOT).endsWith(".csv") ? "azure" : "mooncake";
			t = switch (fmt) {
				case "mooncake" -> MooncakeTraceReader.read(file);
				case "azure" -> AzureTraceReader.read(file);
				default -> throw new IllegalArgumentException("unknown --format '" + format + "' (mooncake or azure)");
			};
			Integer n = requests != null ? requests : quick ? Integer.valueOf(QUICK_REQUESTS) : null;
			if (n != null) {
				t = t.first(n);
			}
			fileTrace = t;
		}
		Trace tied = switch (ties) {
			case "spread" -> t.spreadTies();
			case "stamped" -> t;
			default -> throw new IllegalArgumentException("unknown --ties '" + ties + "' (spread or stamped)");
		};
		// Several routers' results depend on their phases, and every row on the engines'
		// scheduling: the label names them.
		String name = tied.name() + (routers < 2 ? "" : ", router phases " + routerPhases)
				+ (routers < 2 || routerSpread.equals("requests") ? "" : ", spread by " + routerSpread)
				+ (longPrefillTokenThreshold == 0 ? ""
						: ", engine long-prefill-token-threshold " + longPrefillTokenThreshold)
				+ (engines.mixed() ? ", engines " + engines.name() : "");
		return name.equals(tied.name()) ? tied : new Trace(name, tied.blockTokens(), tied.requests());
	}

	/**
	 * The rows named in {@code list} ({@code --policies}); DualMap rows start from
	 * {@code queue}, the oracle row takes {@code engine}'s coefficients.
	 */
	private static List<PolicySpec> policySpecs(String list, QueueSettings queue, PoolProfiles pool) {
		EngineProfile engine = pool.first();
		List<String> names = list.strip().equals("all") ? PolicySpec.names()
				: Arrays.stream(list.split(",")).map(String::strip).filter(s -> !s.isEmpty()).toList();
		if (names.isEmpty()) {
			throw new IllegalArgumentException("--policies names no policy: '" + list + "'");
		}
		List<PolicySpec> out = new ArrayList<>();
		for (String name : names) {
			if (out.stream().anyMatch(p -> p.name().equals(name))) {
				throw new IllegalArgumentException("--policies names '" + name + "' twice");
			}
			out.add(PolicySpec.named(name, queue, engine));
		}
		return out;
	}

	/**
	 * {@code --rate} bounds, req/s: below 0.01 the reports, which give rates to two
	 * decimals, would print 0.00 (and a replay of a long trace nears what the
	 * simulation's nanosecond clock holds); above a million no engine serves it.
	 */
	static final double MIN_RATE = 0.01;

	static final double MAX_RATE = 1_000_000;

	/**
	 * The most {@code --rate} per instance: a hundred times what an engine of the
	 * profiles serves at best, and below what the simulator's memory holds while a run
	 * that fails waits out the SLO before it stops.
	 */
	static final double MAX_RATE_PER_INSTANCE = 1_000;

	/** The most {@code --instances}: a pool larger than any the benchmarks size. */
	static final int MAX_INSTANCES = 1024;

	/** The most {@code --routers}: gateway replicas in front of one pool. */
	static final int MAX_ROUTERS = 64;

	/**
	 * The shortest {@code --scrape-interval}: every router scrapes every engine each
	 * interval, and shorter than the engines' steps says nothing new.
	 */
	static final Duration MIN_SCRAPE_INTERVAL = Duration.ofMillis(1);

	/** The most {@code --replicates}: a median of more says little more. */
	static final int MAX_REPLICATES = 32;

	private static void atMost(String option, int value, int most) {
		if (value > most) {
			throw new IllegalArgumentException(option + " must be at most " + most + " but was " + value);
		}
	}

	private static void positive(String option, int value) {
		if (value <= 0) {
			throw new IllegalArgumentException(option + " must be > 0 but was " + value);
		}
	}

}

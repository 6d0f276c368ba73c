package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.github.dualmap.sim.trace.TraceRequest;
import org.jspecify.annotations.Nullable;

/**
 * What a run measures of its requests past the warm-up, and how it judges them: each
 * one's TTFT against its objective, misses and rejections, prompt tokens served from
 * cache, the time {@code choose()} took, and the yardstick's headline (feasible requests,
 * their prompt tokens, each size quartile). Knows when the run may stop early: every
 * measured request resolved, or neither the headline nor the request-only target still
 * reachable.
 */
final class Measurement {

	private final Workload workload;

	private final RequestObjectives objectives;

	private final long[] arrival;

	private final int warmup;

	private final int measured;

	private final boolean stopEarly;

	private final Yardstick yardstick;

	private final int missBudget;

	// Misses the headline allows before it can no longer be met: of the feasible
	// requests, of their prompt tokens and per size quartile.
	private final int feasibleMissBudget;

	private final double feasibleTokenMissBudget;

	private final int[] quartileMissBudget = new int[Yardstick.QUARTILES];

	// Per request: TTFT (-1 before the first token), whether judged, whether the queues'
	// rescue placed it, the engine slot it was sent to (-1 before, and once turned away),
	// cached tokens at its first token (-1 before).
	private final long[] ttft;

	private final boolean[] resolved;

	private final boolean[] rescued;

	private final int[] sentTo;

	private final int[] cachedOf;

	// Only with the request log (SimulationConfig.requestLog).
	private final @Nullable Releases releases;

	// The router each request arrived at.
	private final int[] routerOf;

	private int feasibleWithin;

	private int feasibleMissed;

	private long feasibleWithinTokens;

	private long feasibleMissedTokens;

	private final int[] quartileWithin = new int[Yardstick.QUARTILES];

	private final int[] quartileMissed = new int[Yardstick.QUARTILES];

	private double inTimeWork;

	private int withinSlo;

	private int missed;

	private int rejected;

	private long withinSloPromptTokens;

	private long rejectedPromptTokens;

	private int resolvedCount;

	private int deadlineCursor;

	private final long[] decisionNanos;

	private int decisions;

	private long cachedTokens;

	private long promptTokens;

	private boolean stoppedEarly;

	Measurement(Workload workload, SimulationConfig config, RequestObjectives objectives, long[] arrival,
			int[] routerOf, @Nullable Yardstick yardstick, boolean stopEarly) {
		int n = workload.size();
		this.workload = workload;
		this.objectives = objectives;
		this.arrival = arrival;
		this.warmup = config.warmup();
		this.measured = n - this.warmup;
		this.stopEarly = stopEarly;
		this.missBudget = budget(this.measured, config.targetAttainment());
		this.yardstick = yardstick != null ? yardstick : Yardstick.allFeasible(workload.trace(), this.warmup);
		if (this.yardstick.warmup() != this.warmup) {
			throw new IllegalArgumentException(
					"yardstick warm-up " + this.yardstick.warmup() + " is not the run's " + this.warmup);
		}
		this.feasibleMissBudget = budget(this.yardstick.feasibleCount(), config.targetAttainment());
		this.feasibleTokenMissBudget = this.yardstick.feasibleTokens() * (1 - config.promptTokenTarget())
				+ 1e-9 * this.yardstick.feasibleTokens();
		for (int q = 0; q < Yardstick.QUARTILES; q++) {
			this.quartileMissBudget[q] = budget(this.yardstick.quartileCount(q), config.sizeFloor());
		}
		this.ttft = new long[n];
		Arrays.fill(this.ttft, -1);
		this.resolved = new boolean[n];
		this.rescued = new boolean[n];
		this.sentTo = new int[n];
		Arrays.fill(this.sentTo, -1);
		this.cachedOf = new int[n];
		Arrays.fill(this.cachedOf, -1);
		this.routerOf = routerOf;
		this.releases = config.requestLog() ? new Releases(n) : null;
		this.decisionNanos = new long[this.measured];
	}

	/** Whether the run has nothing left to measure. */
	boolean done() {
		return this.resolvedCount >= this.measured || this.stoppedEarly;
	}

	/**
	 * Whether {@code now} is within the measured window (the first measured arrival on).
	 */
	boolean measuring(long now) {
		return now >= this.arrival[this.warmup];
	}

	/** A {@code choose()} for measured request {@code i} took {@code nanos}. */
	void decided(int i, long nanos) {
		this.decisionNanos[this.decisions++] = nanos;
	}

	/**
	 * Request {@code i} was sent to engine slot {@code slot} at {@code now}, placed by
	 * the queues' rescue or not, for {@code reason} (the decision's reason header) after
	 * {@code moves} moves in the queues.
	 */
	void placed(int i, int slot, boolean byRescue, long now, String reason, int moves) {
		this.rescued[i] = byRescue;
		this.sentTo[i] = slot;
		Releases r = this.releases;
		if (r != null) {
			r.at[i] = now;
			r.reason[i] = reason;
			r.moves[i] = moves;
		}
	}

	/**
	 * An engine computed request {@code i}'s first token with {@code cached} prompt
	 * tokens cached.
	 */
	void firstTokenComputed(int i, int cached) {
		if (this.cachedOf[i] < 0) {
			this.cachedOf[i] = cached;
		}
		if (i >= this.warmup && this.ttft[i] < 0) {
			this.cachedTokens += cached;
			this.promptTokens += this.workload.trace().requests().get(i).inputTokens();
		}
	}

	/**
	 * Request {@code i}'s first token reached its router at {@code now}.
	 * @return false if one already had (the TTFT stands)
	 */
	boolean firstTokenSeen(int i, long now) {
		if (this.ttft[i] >= 0) {
			return false;
		}
		this.ttft[i] = now - this.arrival[i];
		return true;
	}

	/** Judges request {@code i}, which has its first token, against its objective. */
	void judgeFirstToken(int i) {
		if (i < this.warmup || this.resolved[i]) {
			return;
		}
		if (this.ttft[i] > this.objectives.sloOf(i)) {
			miss(i);
			return;
		}
		this.resolved[i] = true;
		this.resolvedCount++;
		this.withinSlo++;
		int prompt = this.workload.trace().requests().get(i).inputTokens();
		this.withinSloPromptTokens += prompt;
		this.inTimeWork += this.yardstick.workSeconds(i);
		if (this.yardstick.feasible(i)) {
			this.feasibleWithin++;
			this.feasibleWithinTokens += prompt;
			int quartile = this.yardstick.quartile(i);
			if (quartile >= 0) {
				this.quartileWithin[quartile]++;
			}
		}
	}

	/**
	 * Request {@code i} was turned away (by the queues, its router, or the engine it was
	 * sent to) for {@code reason}, on or by {@code instance} when one is concerned: a
	 * miss if measured, and sent to no engine.
	 */
	void rejected(int i, String reason, @Nullable String instance) {
		this.sentTo[i] = -1;
		Releases r = this.releases;
		if (r != null) {
			r.rejection[i] = reason;
			r.rejectedAt[i] = instance;
		}
		if (i >= this.warmup) {
			this.rejected++;
			this.rejectedPromptTokens += this.workload.trace().requests().get(i).inputTokens();
			miss(i);
		}
	}

	/**
	 * Requests whose deadline passed by {@code now} without a first token have missed:
	 * resolved now, so a saturated run stops without waiting for its queues to drain.
	 */
	void expireDeadlines(long now) {
		long maxSlo = this.objectives.maxSloNanos();
		while (this.deadlineCursor < this.measured && this.arrival[this.warmup + this.deadlineCursor] + maxSlo < now) {
			int i = this.warmup + this.deadlineCursor++;
			if (this.ttft[i] < 0) {
				miss(i);
			}
		}
	}

	private void miss(int i) {
		if (this.resolved[i]) {
			return;
		}
		this.resolved[i] = true;
		this.resolvedCount++;
		this.missed++;
		if (this.yardstick.feasible(i)) {
			this.feasibleMissed++;
			this.feasibleMissedTokens += this.workload.trace().requests().get(i).inputTokens();
			int q = this.yardstick.quartile(i);
			if (q >= 0) {
				this.quartileMissed[q]++;
			}
		}
		if (this.stopEarly && !this.stoppedEarly && this.missed > this.missBudget && headlineLost()) {
			// Neither the headline nor the request-only target can be reached: the rest
			// of the run would not change either verdict, only cost time.
			this.stoppedEarly = this.resolvedCount < this.measured;
		}
	}

	/** Whether one of the headline's criteria can no longer be met. */
	private boolean headlineLost() {
		if (this.feasibleMissed > this.feasibleMissBudget || this.feasibleMissedTokens > this.feasibleTokenMissBudget) {
			return true;
		}
		for (int q = 0; q < Yardstick.QUARTILES; q++) {
			if (this.quartileMissed[q] > this.quartileMissBudget[q]) {
				return true;
			}
		}
		return false;
	}

	/** Every request's TTFT in nanoseconds, -1 for one without a first token. */
	long[] ttfts() {
		return this.ttft.clone();
	}

	/** Every request's cached prompt tokens at its first token, -1 for one without. */
	int[] cachedTokensOf() {
		return this.cachedOf.clone();
	}

	/**
	 * Whether request {@code i} had arrived by {@code now}: a run stopped early ends
	 * before its last requests arrive, and those have no TTFT to censor (not a wait of
	 * 0).
	 */
	private boolean arrivedBy(int i, long now) {
		return this.ttft[i] >= 0 || this.arrival[i] <= now;
	}

	/**
	 * The run's result at {@code now}: a request without a first token counts with the
	 * time it has waited, one that had not arrived yet (a run stopped early) not at all
	 * in the percentiles; {@code slots} engine slots were taken, with the instance ids
	 * {@code slotIds}.
	 */
	RunResult result(String policyName, double rate, long now, int instances, int slots, String[] slotIds,
			EngineScrapes scrapes, long migrations) {
		double[] seconds = new double[this.measured];
		int arrivedCount = 0;
		double[] served = new double[this.measured];
		int servedCount = 0;
		long measuredPromptTokens = 0;
		for (int j = 0; j < this.measured; j++) {
			int i = this.warmup + j;
			measuredPromptTokens += this.workload.trace().requests().get(i).inputTokens();
			if (!arrivedBy(i, now)) {
				continue;
			}
			long t = this.ttft[i] >= 0 ? this.ttft[i] : now - this.arrival[i];
			seconds[arrivedCount++] = t / 1e9;
			if (this.ttft[i] >= 0) {
				served[servedCount++] = t / 1e9;
			}
		}
		seconds = Arrays.copyOf(seconds, arrivedCount);
		Arrays.sort(seconds);
		served = Arrays.copyOf(served, servedCount);
		Arrays.sort(served);
		long[] took = Arrays.copyOf(this.decisionNanos, this.decisions);
		Arrays.sort(took);
		List<RunResult.SizeQuartile> quartiles = new ArrayList<>();
		for (int q = 0; q < Yardstick.QUARTILES; q++) {
			if (this.yardstick.quartileCount(q) > 0) {
				quartiles.add(new RunResult.SizeQuartile(this.yardstick.quartileMin(q), this.yardstick.quartileMax(q),
						this.yardstick.quartileCount(q), this.quartileWithin[q]));
			}
		}
		int rescuedCount = 0;
		int[] perInstance = new int[slots];
		for (int i = this.warmup; i < this.rescued.length; i++) {
			rescuedCount += this.rescued[i] ? 1 : 0;
			if (this.sentTo[i] >= 0) {
				perInstance[this.sentTo[i]]++;
			}
		}
		double engineSeconds = this.yardstick.knowsWork()
				? instances * Math.max(0, now - this.arrival[this.warmup]) / 1e9 : Double.POSITIVE_INFINITY;
		RunResult.Judged judged = new RunResult.Judged(this.yardstick.feasibleCount(), this.feasibleWithin,
				this.yardstick.feasibleTokens(), this.feasibleWithinTokens, quartiles, rescuedCount, this.inTimeWork,
				engineSeconds);
		return RunResult.builder(policyName, rate)
			.requests(this.measured, this.withinSlo, this.rejected, this.stoppedEarly)
			.ttftPercentiles(percentile(seconds, 0.50), percentile(seconds, 0.90), percentile(seconds, 0.99))
			.ttftSeconds(seconds)
			.hitRate(this.promptTokens == 0 ? 0 : (double) this.cachedTokens / this.promptTokens)
			.loadCv(scrapes.meanLoadSpread())
			.migrations(migrations)
			.decisionNanosP99(took.length == 0 ? 0 : percentile(took, 0.99))
			.timeline(scrapes.timeline())
			.engines(scrapes.engineLoad())
			.classes(classResults(now))
			.prompts(new RunResult.PromptTokens(measuredPromptTokens, this.withinSloPromptTokens,
					this.rejectedPromptTokens))
			.served(servedCount == 0 ? RunResult.Served.NONE
					: new RunResult.Served(servedCount, percentile(served, 0.90), percentile(served, 0.99)))
			.judged(judged)
			.requestsPerInstance(perInstance)
			.requestLog(requestLog(slotIds))
			.build();
	}

	/** Every measured request's outcome, when the run keeps them; else {@code null}. */
	private @Nullable RequestLog requestLog(String[] slotIds) {
		Releases r = this.releases;
		if (r == null) {
			return null;
		}
		List<RequestLog.Entry> entries = new ArrayList<>(this.measured);
		for (int i = this.warmup; i < this.ttft.length; i++) {
			long t = this.ttft[i];
			long slo = this.objectives.sloOf(i);
			boolean released = r.at[i] >= 0;
			RequestLog.Outcome outcome = r.rejection[i] != null ? RequestLog.Outcome.REJECTED : t < 0
					? RequestLog.Outcome.UNSERVED : t <= slo ? RequestLog.Outcome.WITHIN_SLO : RequestLog.Outcome.LATE;
			int slot = this.sentTo[i];
			entries.add(new RequestLog.Entry(i, this.routerOf[i], this.arrival[i] / 1e9,
					this.workload.trace().requests().get(i).inputTokens(), this.yardstick.feasible(i), slo / 1e9,
					slot >= 0 && slot < slotIds.length ? slotIds[slot] : null, released ? r.at[i] / 1e9 : Double.NaN,
					released ? r.reason[i] : null, released ? r.moves[i] : 0, this.rescued[i], this.cachedOf[i],
					t >= 0 ? t / 1e9 : Double.NaN, outcome, r.rejection[i], r.rejectedAt[i]));
		}
		return new RequestLog(entries);
	}

	/**
	 * Attainment and TTFT per SLO class of the measured requests; none without classes.
	 */
	private List<RunResult.ClassResult> classResults(long now) {
		if (!this.objectives.hasClasses()) {
			return List.of();
		}
		SloClasses classes = this.objectives.classes();
		List<RunResult.ClassResult> out = new ArrayList<>();
		for (int c = 0; c < classes.count(); c++) {
			List<Double> seconds = new ArrayList<>();
			int within = 0;
			for (int j = 0; j < this.measured; j++) {
				int i = this.warmup + j;
				if (this.objectives.classOf(i) != c) {
					continue;
				}
				if (arrivedBy(i, now)) {
					seconds.add((this.ttft[i] >= 0 ? this.ttft[i] : now - this.arrival[i]) / 1e9);
				}
				within += this.ttft[i] >= 0 && this.ttft[i] <= this.objectives.sloOf(i) ? 1 : 0;
			}
			double[] sorted = seconds.stream().mapToDouble(Double::doubleValue).sorted().toArray();
			out.add(new RunResult.ClassResult(classes.name(c), this.objectives.classSloNanos(c) / 1e9, sorted.length,
					within, percentile(sorted, 0.90), percentile(sorted, 0.99)));
		}
		return out;
	}

	/**
	 * Per tenant of {@code mix} ({@code tenantOf} each request's), of the measured
	 * requests: how many, how many made their objective, the tokens (prompt and output)
	 * they asked for and those of the ones served (that got a first token).
	 */
	List<TenantRun.TenantResult> tenantResults(TenantMix mix, int[] tenantOf) {
		List<TenantRun.TenantResult> out = new ArrayList<>();
		for (int t = 0; t < mix.count(); t++) {
			int count = 0;
			int within = 0;
			long demand = 0;
			long served = 0;
			for (int j = 0; j < this.measured; j++) {
				int i = this.warmup + j;
				if (tenantOf[i] != t) {
					continue;
				}
				TraceRequest r = this.workload.trace().requests().get(i);
				count++;
				demand += r.inputTokens() + r.outputTokens();
				if (this.ttft[i] >= 0) {
					served += r.inputTokens() + r.outputTokens();
					within += this.ttft[i] <= this.objectives.sloOf(i) ? 1 : 0;
				}
			}
			out.add(new TenantRun.TenantResult(mix.tenant(t).name(), count, within, demand, served));
		}
		return out;
	}

	/**
	 * Misses {@code count} requests allow while at least {@code target} of them stay
	 * within the objective.
	 */
	static int budget(int count, double target) {
		return count - (int) Math.ceil(target * count - 1e-9);
	}

	/** Nearest-rank percentile of sorted values. */
	static double percentile(double[] sorted, double q) {
		if (sorted.length == 0) {
			return 0;
		}
		int rank = (int) Math.ceil(q * sorted.length);
		return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
	}

	static long percentile(long[] sorted, double q) {
		int rank = (int) Math.ceil(q * sorted.length);
		return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
	}

	/**
	 * Per request, what only the request log keeps: when it was last sent (-1 before),
	 * that release's decision reason and the queues' moves of it by then; why it was
	 * turned away, and on which instance.
	 */
	private static final class Releases {

		final long[] at;

		final @Nullable String[] reason;

		final int[] moves;

		final @Nullable String[] rejection;

		final @Nullable String[] rejectedAt;

		Releases(int n) {
			this.at = new long[n];
			Arrays.fill(this.at, -1);
			this.reason = new String[n];
			this.moves = new int[n];
			this.rejection = new String[n];
			this.rejectedAt = new String[n];
		}

	}

}

package io.github.dualmap.sim;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The outcome of one policy at one arrival rate. TTFTs of requests that never got a first
 * token (rejected, or still waiting when the run ended) are censored at the end of the
 * run, so percentiles are lower bounds once they reach such requests; the requests a run
 * stopped early never saw arrive are left out of them. Build one with {@link #builder},
 * which names every field it sets.
 *
 * @param policy policy name
 * @param rate arrival rate in requests per second
 * @param requests the measured requests (the trace minus the warm-up): how many, how they
 * fared, and whether the run stopped early
 * @param ttft the measured requests' TTFT percentiles
 * @param hitRate engine prefix-cache hit tokens over prompt tokens of measured requests
 * @param loadCv mean over scrape ticks of the coefficient of variation of per-instance
 * running + waiting requests
 * @param migrations requests moved between instances by the late-binding queue
 * @param decisionNanosP99 99th percentile of the real time one {@code choose()} took
 * @param ttftSeconds sorted TTFTs of the measured requests, censored, but for those a run
 * stopped early never saw arrive (for the CDF chart)
 * @param timeline per-instance load at each scrape tick, when recorded
 * @param engines what the engines went through while measured requests arrived and ran
 * @param classes attainment per SLO class ({@code --slo-classes}), the default class
 * last; empty when every request had the run's objective
 * @param prompts prompt tokens of the measured requests, of those within the SLO and of
 * the rejected: whether the requests a policy serves in time, or turns away, are the
 * cheap or the expensive ones
 * @param served TTFT percentiles of the measured requests that got a first token, so not
 * censored: what the clients that were served saw
 * @param judged the run on the {@link Yardstick}: the feasible requests, the prompt-size
 * quartiles, the rescues and the work served in time
 * @param requestsPerInstance per engine slot (instance {@code engine-000} first, one
 * entry per instance that took part in the run), the measured requests its router sent
 * there, after any moves of the dispatch queues; a request turned away (by the queues or
 * by its engine) or not yet sent when the run ended counts for none
 * @param requestLog every measured request's outcome, when the run kept them
 * ({@link SimulationConfig#requestLog()}); else {@code null}
 */
public record RunResult(String policy, double rate, Requests requests, Ttft ttft, double hitRate, double loadCv,
		long migrations, long decisionNanosP99, double[] ttftSeconds, @Nullable Timeline timeline, EngineLoad engines,
		List<ClassResult> classes, PromptTokens prompts, Served served, Judged judged, int[] requestsPerInstance,
		@Nullable RequestLog requestLog) {

	/**
	 * This result without its {@link #requestLog()}, which holds every measured request:
	 * for the runs a report keeps only as points.
	 */
	public RunResult withoutRequestLog() {
		return requestLog == null ? this
				: new RunResult(policy, rate, requests, ttft, hitRate, loadCv, migrations, decisionNanosP99,
						ttftSeconds, timeline, engines, classes, prompts, served, judged, requestsPerInstance, null);
	}

	/**
	 * A builder for a result of {@code policy} at {@code rate}: each field is set by
	 * name, so a result reads as what it holds. Unset fields are zero or empty, and an
	 * unset {@link Judged} counts every measured request feasible (no quartiles, no
	 * rescue, no work known, so never transient).
	 */
	public static Builder builder(String policy, double rate) {
		return new Builder(policy, rate);
	}

	/** Builds a {@link RunResult} field by field; see {@link RunResult#builder}. */
	public static final class Builder {

		private final String policy;

		private final double rate;

		private Requests requests = Requests.NONE;

		private Ttft ttft = Ttft.NONE;

		private double hitRate;

		private double loadCv;

		private long migrations;

		private long decisionNanosP99;

		private double[] ttftSeconds = new double[0];

		private @Nullable Timeline timeline;

		private EngineLoad engines = new EngineLoad(0, 0, 0, 0, 0);

		private List<ClassResult> classes = List.of();

		private PromptTokens prompts = new PromptTokens(0, 0, 0);

		private Served served = Served.NONE;

		private @Nullable Judged judged;

		private int[] requestsPerInstance = new int[0];

		private @Nullable RequestLog requestLog;

		private Builder(String policy, double rate) {
			this.policy = policy;
			this.rate = rate;
		}

		/**
		 * The measured requests: how many, how many had a first token within the SLO, how
		 * many no instance accepted, and whether the run stopped early.
		 */
		public Builder requests(int measured, int withinSlo, int rejected, boolean stoppedEarly) {
			this.requests = new Requests(measured, withinSlo, rejected, stoppedEarly);
			return this;
		}

		/** The measured requests' TTFT percentiles, censored as the record says. */
		public Builder ttftPercentiles(double p50Seconds, double p90Seconds, double p99Seconds) {
			this.ttft = new Ttft(p50Seconds, p90Seconds, p99Seconds);
			return this;
		}

		/** The measured requests' TTFTs, sorted (for the CDF chart). */
		public Builder ttftSeconds(double[] sorted) {
			this.ttftSeconds = sorted;
			return this;
		}

		/** Engine prefix-cache hit tokens over the measured requests' prompt tokens. */
		public Builder hitRate(double hitRate) {
			this.hitRate = hitRate;
			return this;
		}

		/** Mean coefficient of variation of per-instance load over scrape ticks. */
		public Builder loadCv(double loadCv) {
			this.loadCv = loadCv;
			return this;
		}

		/** Requests the late-binding queue moved between instances. */
		public Builder migrations(long migrations) {
			this.migrations = migrations;
			return this;
		}

		/** 99th percentile of the real time one {@code choose()} took. */
		public Builder decisionNanosP99(long nanos) {
			this.decisionNanosP99 = nanos;
			return this;
		}

		/** Per-instance state at each scrape tick, when recorded. */
		public Builder timeline(@Nullable Timeline timeline) {
			this.timeline = timeline;
			return this;
		}

		/** What the engines went through while measured requests arrived and ran. */
		public Builder engines(EngineLoad engines) {
			this.engines = engines;
			return this;
		}

		/** Attainment per SLO class, the default class last. */
		public Builder classes(List<ClassResult> classes) {
			this.classes = classes;
			return this;
		}

		/** Prompt tokens of the measured, within-SLO and rejected requests. */
		public Builder prompts(PromptTokens prompts) {
			this.prompts = prompts;
			return this;
		}

		/** TTFT percentiles of the measured requests that got a first token. */
		public Builder served(Served served) {
			this.served = served;
			return this;
		}

		/** The run on the {@link Yardstick}. */
		public Builder judged(Judged judged) {
			this.judged = judged;
			return this;
		}

		/**
		 * The measured requests sent to each engine slot, instance {@code engine-000}
		 * first.
		 */
		public Builder requestsPerInstance(int[] counts) {
			this.requestsPerInstance = counts;
			return this;
		}

		/** Every measured request's outcome ({@code --request-log}). */
		public Builder requestLog(@Nullable RequestLog log) {
			this.requestLog = log;
			return this;
		}

		public RunResult build() {
			Judged j = this.judged != null ? this.judged
					: new Judged(this.requests.measured(), this.requests.withinSlo(), this.prompts.measured(),
							this.prompts.withinSlo(), List.of(), 0, 0, Double.POSITIVE_INFINITY);
			return new RunResult(this.policy, this.rate, this.requests, this.ttft, this.hitRate, this.loadCv,
					this.migrations, this.decisionNanosP99, this.ttftSeconds, this.timeline, this.engines, this.classes,
					this.prompts, this.served, j, this.requestsPerInstance, this.requestLog);
		}

	}

	/**
	 * The measured requests of a run: the trace minus the warm-up.
	 *
	 * @param measured how many were measured
	 * @param withinSlo those whose first token came within the SLO
	 * @param rejected those no instance accepted
	 * @param stoppedEarly whether the run stopped once more than 10 % of them had missed
	 * (the remaining ones count as misses)
	 */
	public record Requests(int measured, int withinSlo, int rejected, boolean stoppedEarly) {

		/** No request measured. */
		public static final Requests NONE = new Requests(0, 0, 0, false);

		/** Share of the measured requests within the SLO. */
		public double attainment() {
			return measured == 0 ? 0 : (double) withinSlo / measured;
		}

	}

	/**
	 * TTFT percentiles of a run's measured requests, censored as the record says.
	 *
	 * @param p50Seconds median TTFT
	 * @param p90Seconds 90th percentile TTFT
	 * @param p99Seconds 99th percentile TTFT
	 */
	public record Ttft(double p50Seconds, double p90Seconds, double p99Seconds) {

		/** No request measured. */
		public static final Ttft NONE = new Ttft(0, 0, 0);

	}

	/**
	 * The run on the {@link Yardstick}. Misses include rejections and, in a run that
	 * stopped early, the requests it never resolved.
	 *
	 * @param feasible feasible measured requests
	 * @param feasibleWithin those whose first token came within their objective
	 * @param feasibleTokens prompt tokens of the feasible measured requests
	 * @param feasibleWithinTokens prompt tokens of those within their objective
	 * @param quartiles the feasible requests by prompt size, shortest first (empty when
	 * not judged by size)
	 * @param rescued measured requests whose final placement the dispatch queue's rescue
	 * made
	 * @param inTimeWorkSeconds engine seconds ({@link WorkBound} cost) of the measured
	 * requests served within their objective
	 * @param engineSeconds what the engines can do over the measured window: instances x
	 * (from the first measured arrival to the end of the run); infinite when the work is
	 * unknown
	 */
	public record Judged(int feasible, int feasibleWithin, long feasibleTokens, long feasibleWithinTokens,
			List<SizeQuartile> quartiles, int rescued, double inTimeWorkSeconds, double engineSeconds) {

		/** Share of the feasible requests within their objective. */
		public double requestShare() {
			return feasible == 0 ? 0 : (double) feasibleWithin / feasible;
		}

		/** Share of the feasible requests' prompt tokens within their objective. */
		public double tokenShare() {
			return feasibleTokens == 0 ? 0 : (double) feasibleWithinTokens / feasibleTokens;
		}

		/** The lowest quartile attainment, 1 when there are no quartiles. */
		public double worstQuartile() {
			return quartiles.stream().mapToDouble(SizeQuartile::attainment).min().orElse(1);
		}

		/**
		 * Whether the requests served in time need more engine time than the engines had
		 * over the run: a burst absorbed by the SLO's slack, not a steady state.
		 */
		public boolean isTransient() {
			return inTimeWorkSeconds > engineSeconds;
		}

	}

	/**
	 * One prompt-size quartile of the feasible measured requests.
	 *
	 * @param minPromptTokens its shortest prompt
	 * @param maxPromptTokens its longest prompt
	 * @param requests its requests
	 * @param withinSlo those within their objective
	 */
	public record SizeQuartile(int minPromptTokens, int maxPromptTokens, int requests, int withinSlo) {

		public double attainment() {
			return requests == 0 ? 1 : (double) withinSlo / requests;
		}

	}

	/**
	 * Whether the rate passes the headline: of the feasible requests, at least
	 * {@code requestShare} and at least {@code tokenShare} of their prompt tokens within
	 * the objective, no prompt-size quartile below {@code sizeFloor}, and not transient.
	 */
	public boolean passesHeadline(double requestShare, double tokenShare, double sizeFloor) {
		return judged.requestShare() >= requestShare && judged.tokenShare() >= tokenShare
				&& judged.worstQuartile() >= sizeFloor && !judged.isTransient();
	}

	/**
	 * Whether the rate passes on requests alone: at least {@code target} of all measured
	 * requests within the objective, and not transient.
	 */
	public boolean passesRequests(double target) {
		return passes(target) && !judged.isTransient();
	}

	/** Share of the measured requests that are feasible. */
	public double feasibleShare() {
		return requests.measured() == 0 ? 0 : (double) judged.feasible() / requests.measured();
	}

	/** Share of the measured requests turned away. */
	public double rejectedShare() {
		return requests.measured() == 0 ? 0 : (double) requests.rejected() / requests.measured();
	}

	/** Share of the measured requests whose final placement the queue's rescue made. */
	public double rescueShare() {
		return requests.measured() == 0 ? 0 : (double) judged.rescued() / requests.measured();
	}

	/**
	 * TTFT of the measured requests that got a first token. The run's percentiles count
	 * rejected and unfinished requests at their censored wait (up to the end of the run,
	 * hundreds of seconds for a request turned away early), so a policy that turns some
	 * away shows a p99 no client saw; these leave them out.
	 *
	 * @param count measured requests that got a first token
	 * @param ttftP90Seconds their 90th percentile TTFT, 0 when there are none
	 * @param ttftP99Seconds their 99th percentile TTFT, 0 when there are none
	 */
	public record Served(int count, double ttftP90Seconds, double ttftP99Seconds) {

		/** No measured request got a first token. */
		public static final Served NONE = new Served(0, 0, 0);

	}

	/**
	 * Prompt tokens of measured requests. Attainment counts requests alike; a policy that
	 * turns away or delays mostly long prompts reaches it with less engine work than one
	 * that serves all sizes alike, and these sums show it.
	 *
	 * @param measured of all measured requests
	 * @param withinSlo of those whose first token came within the SLO
	 * @param rejected of those no instance accepted
	 */
	public record PromptTokens(long measured, long withinSlo, long rejected) {

		/** Share of the measured prompt tokens that belong to requests within the SLO. */
		public double withinSloShare() {
			return measured == 0 ? 0 : (double) withinSlo / measured;
		}

	}

	/**
	 * The measured requests of one SLO class. TTFTs are censored as the run's are.
	 *
	 * @param name the class ({@link SloClasses#DEFAULT} for requests of no named class)
	 * @param sloSeconds its objective
	 * @param measured its measured requests
	 * @param withinSlo those whose first token came within its objective
	 * @param ttftP90Seconds 90th percentile TTFT
	 * @param ttftP99Seconds 99th percentile TTFT
	 */
	public record ClassResult(String name, double sloSeconds, int measured, int withinSlo, double ttftP90Seconds,
			double ttftP99Seconds) {

		/** Share of the class's measured requests within its objective. */
		public double attainment() {
			return measured == 0 ? 0 : (double) withinSlo / measured;
		}

	}

	/** Share of measured requests within the SLO. */
	public double attainment() {
		return requests.attainment();
	}

	/** Whether at least {@code target} of measured requests met the SLO. */
	public boolean passes(double target) {
		return attainment() >= target;
	}

	/**
	 * Whether at least {@code target} of measured requests met the SLO and requests
	 * within it hold at least {@code promptTokenTarget} of the measured prompt tokens.
	 */
	public boolean passes(double target, double promptTokenTarget) {
		return passes(target) && prompts.withinSloShare() >= promptTokenTarget;
	}

	/** Requests within the SLO per second of arrivals: rate x attainment. */
	public double goodput() {
		return rate * attainment();
	}

	/**
	 * Engine-side state from the first measured arrival to the end of the run: why a
	 * capacity is where it is (a congested engine runs many sequences, fills its KV
	 * cache, preempts and evicts cached prefixes).
	 *
	 * @param runningPerInstance mean over scrape ticks and member instances of requests
	 * running (prefill or decode)
	 * @param kvUsageMean mean over the same samples of the fraction of KV blocks held by
	 * requests
	 * @param kvUsagePeak highest sampled KV usage of any instance
	 * @param preemptions requests preempted by the engines
	 * @param evictedBlocks cached KV blocks evicted for reuse
	 */
	public record EngineLoad(double runningPerInstance, double kvUsageMean, double kvUsagePeak, long preemptions,
			long evictedBlocks) {
	}

	/**
	 * Per-instance state over time, one sample per scrape tick; every array but
	 * {@code seconds} and {@code instances} is indexed {@code [instance][sample]}, and an
	 * instance that has not joined yet (or has left) samples as zero.
	 *
	 * @param seconds virtual time of each sample
	 * @param load running + waiting requests (the load chart's)
	 * @param instances the instances' ids, in slot order
	 * @param running requests running in the engine
	 * @param waiting requests waiting in the engine's queue
	 * @param kvUsage fraction of the engine's KV blocks held by requests
	 * @param preemptions requests the engine has preempted so far (cumulative)
	 * @param inFlight requests the routers have sent to it and not seen end, summed over
	 * routers
	 * @param queued requests the routers' dispatch queues hold for it (0 without queues)
	 */
	public record Timeline(double[] seconds, double[][] load, String[] instances, int[][] running, int[][] waiting,
			double[][] kvUsage, long[][] preemptions, int[][] inFlight, int[][] queued) {
	}

}

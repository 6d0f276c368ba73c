package io.github.dualmap.sim;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The outcome of one policy at one arrival rate. TTFTs of requests that never got a first
 * token (rejected, or still waiting when the run ended) are censored at the end of the
 * run, so percentiles are lower bounds once they reach such requests.
 *
 * @param policy policy name
 * @param rate arrival rate in requests per second
 * @param measured requests counted (the trace minus the warm-up)
 * @param withinSlo measured requests whose first token came within the SLO
 * @param rejected measured requests no instance accepted
 * @param stoppedEarly whether the run stopped once more than 10 % of measured requests
 * had missed (the remaining ones count as misses)
 * @param ttftP50Seconds median TTFT
 * @param ttftP90Seconds 90th percentile TTFT
 * @param ttftP99Seconds 99th percentile TTFT
 * @param hitRate engine prefix-cache hit tokens over prompt tokens of measured requests
 * @param loadCv mean over scrape ticks of the coefficient of variation of per-instance
 * running + waiting requests
 * @param migrations requests moved between instances by the late-binding queue
 * @param decisionNanosP99 99th percentile of the real time one {@code choose()} took
 * @param ttftSeconds sorted TTFTs of measured requests (for the CDF chart)
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
 */
public record RunResult(String policy, double rate, int measured, int withinSlo, int rejected, boolean stoppedEarly,
		double ttftP50Seconds, double ttftP90Seconds, double ttftP99Seconds, double hitRate, double loadCv,
		long migrations, long decisionNanosP99, double[] ttftSeconds, @Nullable Timeline timeline, EngineLoad engines,
		List<ClassResult> classes, PromptTokens prompts, Served served, Judged judged) {

	/**
	 * A result judged with every measured request feasible, no quartiles, no rescue and
	 * no work known (never transient).
	 */
	public RunResult(String policy, double rate, int measured, int withinSlo, int rejected, boolean stoppedEarly,
			double ttftP50Seconds, double ttftP90Seconds, double ttftP99Seconds, double hitRate, double loadCv,
			long migrations, long decisionNanosP99, double[] ttftSeconds, @Nullable Timeline timeline,
			EngineLoad engines, List<ClassResult> classes, PromptTokens prompts, Served served) {
		this(policy, rate, measured, withinSlo, rejected, stoppedEarly, ttftP50Seconds, ttftP90Seconds, ttftP99Seconds,
				hitRate, loadCv, migrations, decisionNanosP99, ttftSeconds, timeline, engines, classes, prompts, served,
				new Judged(measured, withinSlo, prompts.measured(), prompts.withinSlo(), List.of(), 0, 0,
						Double.POSITIVE_INFINITY));
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
		return measured == 0 ? 0 : (double) judged.feasible() / measured;
	}

	/** Share of the measured requests turned away. */
	public double rejectedShare() {
		return measured == 0 ? 0 : (double) rejected / measured;
	}

	/** Share of the measured requests whose final placement the queue's rescue made. */
	public double rescueShare() {
		return measured == 0 ? 0 : (double) judged.rescued() / measured;
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
		return measured == 0 ? 0 : (double) withinSlo / measured;
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

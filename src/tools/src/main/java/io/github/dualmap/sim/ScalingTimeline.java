package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.sim.trace.Trace;

/**
 * One policy's scheduled run cut into windows of virtual time by arrival: per window the
 * SLO attainment and the engine prefix-cache hit rate of the measured requests that
 * arrived in it, the share of them sent to instances that joined during the run, and the
 * headline's view of them: the feasible ones ({@link Yardstick}) and their prompt tokens
 * within the SLO. Windows are aligned so the first membership change starts one.
 *
 * @param policy policy name
 * @param windowSeconds window length
 * @param changeSeconds virtual time of each membership change
 * @param windows the windows in time order, covering every measured arrival
 * @param summary the whole run's summary
 */
public record ScalingTimeline(String policy, double windowSeconds, double[] changeSeconds, List<Window> windows,
		RunResult summary) {

	/**
	 * The measured requests that arrived in one window.
	 *
	 * @param startSeconds virtual start of the window
	 * @param requests measured arrivals
	 * @param withinSlo of them, with a first token within the SLO
	 * @param firstTokens of them, with a first token at all before the run ended
	 * @param cachedTokens prompt tokens found in the engine's prefix cache, over those
	 * with a first token
	 * @param promptTokens prompt tokens of those with a first token
	 * @param toNewInstances of them, sent to an instance that joined during the run
	 * @param feasible of them, feasible ({@link Yardstick#feasible(int)})
	 * @param feasibleWithinSlo of the feasible, with a first token within the SLO
	 * @param feasibleTokens prompt tokens of the feasible
	 * @param feasibleTokensWithinSlo prompt tokens of the feasible within the SLO
	 * @param coldTtftEstimates router 0's estimate, in seconds, of a cold reference
	 * prompt on each instance slot at the window's end
	 * ({@link ScheduledRun#coldTtftEstimatesAt}); NaN for a slot without one
	 */
	public record Window(double startSeconds, int requests, int withinSlo, int firstTokens, long cachedTokens,
			long promptTokens, int toNewInstances, int feasible, int feasibleWithinSlo, long feasibleTokens,
			long feasibleTokensWithinSlo, double[] coldTtftEstimates) {

		/** Share within the SLO; NaN for an empty window. */
		public double attainment() {
			return requests == 0 ? Double.NaN : (double) withinSlo / requests;
		}

		/** Cached over prompt tokens; NaN when nothing got a first token. */
		public double hitRate() {
			return promptTokens == 0 ? Double.NaN : (double) cachedTokens / promptTokens;
		}

		/**
		 * Share of the feasible requests within the SLO; NaN when none is feasible.
		 */
		public double feasibleAttainment() {
			return feasible == 0 ? Double.NaN : (double) feasibleWithinSlo / feasible;
		}

		/**
		 * Share of the feasible requests' prompt tokens within the SLO, the headline's
		 * work in time; NaN when none is feasible.
		 */
		public double tokenAttainment() {
			return feasibleTokens == 0 ? Double.NaN : (double) feasibleTokensWithinSlo / feasibleTokens;
		}

		/**
		 * Share sent to instances that joined during the run; NaN for an empty window.
		 */
		public double newInstanceShare() {
			return requests == 0 ? Double.NaN : (double) toNewInstances / requests;
		}

	}

	/**
	 * Cuts {@code run} (a replay of {@code trace}, judged on {@code yardstick}) into
	 * windows of {@code windowNanos} with a TTFT objective of {@code sloNanos}.
	 */
	public static ScalingTimeline of(ScheduledRun run, Trace trace, Yardstick yardstick, long windowNanos,
			long sloNanos) {
		if (windowNanos <= 0) {
			throw new IllegalArgumentException("window must be > 0 ns but was " + windowNanos);
		}
		long[] arrival = run.arrivalNanos();
		int first = run.warmup();
		long anchor = run.changeNanos().length > 0 ? run.changeNanos()[0] : arrival[first];
		long lo = Math.floorDiv(arrival[first] - anchor, windowNanos);
		long hi = Math.floorDiv(arrival[arrival.length - 1] - anchor, windowNanos);
		int n = (int) (hi - lo + 1);
		int[] requests = new int[n];
		int[] within = new int[n];
		int[] firsts = new int[n];
		long[] cached = new long[n];
		long[] prompt = new long[n];
		int[] toNew = new int[n];
		int[] feasible = new int[n];
		int[] feasibleWithin = new int[n];
		long[] feasibleTokens = new long[n];
		long[] feasibleTokensWithin = new long[n];
		for (int i = first; i < arrival.length; i++) {
			int w = (int) (Math.floorDiv(arrival[i] - anchor, windowNanos) - lo);
			requests[w]++;
			long t = run.ttftNanos()[i];
			int tokens = trace.requests().get(i).inputTokens();
			boolean inTime = t >= 0 && t <= sloNanos;
			if (t >= 0) {
				firsts[w]++;
				within[w] += inTime ? 1 : 0;
				cached[w] += Math.max(0, run.cachedTokens()[i]);
				prompt[w] += tokens;
			}
			if (yardstick.feasible(i)) {
				feasible[w]++;
				feasibleTokens[w] += tokens;
				if (inTime) {
					feasibleWithin[w]++;
					feasibleTokensWithin[w] += tokens;
				}
			}
			toNew[w] += run.sentToNewInstance(i) ? 1 : 0;
		}
		List<Window> windows = new ArrayList<>(n);
		int slots = run.instanceIds().size();
		for (int w = 0; w < n; w++) {
			long start = anchor + (lo + w) * windowNanos;
			windows.add(new Window(start / 1e9, requests[w], within[w], firsts[w], cached[w], prompt[w], toNew[w],
					feasible[w], feasibleWithin[w], feasibleTokens[w], feasibleTokensWithin[w],
					run.coldTtftEstimatesAt(start + windowNanos, slots)));
		}
		double[] changes = new double[run.changeNanos().length];
		for (int c = 0; c < changes.length; c++) {
			changes[c] = run.changeNanos()[c] / 1e9;
		}
		return new ScalingTimeline(run.policy(), windowNanos / 1e9, changes, List.copyOf(windows), run.result());
	}

}

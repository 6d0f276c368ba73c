package io.github.dualmap.sim;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Every measured request of one run, in arrival order, with what happened to it
 * ({@code --request-log}): the per-request view behind a run's attainment, for finding
 * which requests a change of policy or of deployment serves or loses.
 *
 * @param entries one per measured request, warm-up excluded
 */
public record RequestLog(List<Entry> entries) {

	public RequestLog {
		entries = List.copyOf(entries);
	}

	/** How a measured request ended by the end of the run. */
	public enum Outcome {

		/** Its first token reached its router within its TTFT objective. */
		WITHIN_SLO("within_slo"),

		/** Its first token reached its router after its objective. */
		LATE("late"),

		/** Turned away: by the dispatch queues, by its router, or by its engine. */
		REJECTED("rejected"),

		/**
		 * Neither: no first token when the run ended (a run stops once it is decided).
		 */
		UNSERVED("unserved");

		private final String jsonName;

		Outcome(String jsonName) {
			this.jsonName = jsonName;
		}

		/** The name {@code requests-<policy>.jsonl} gives it. */
		public String jsonName() {
			return this.jsonName;
		}

	}

	/**
	 * One measured request.
	 *
	 * @param index its position in the workload as run (warm-up requests included, and
	 * the copies the steady-state rule adds)
	 * @param router the router replica it arrived at (arrival {@code i} goes to router
	 * {@code i mod R})
	 * @param arrivalSeconds its arrival on the simulation's clock
	 * @param promptTokens its prompt length
	 * @param feasible whether the yardstick counts it ({@link Yardstick}: an idle engine
	 * holding every prefix an earlier request computed serves it within its objective)
	 * @param sloSeconds its TTFT objective
	 * @param instance the instance it was last sent to, {@code null} if none (never
	 * released, or turned away by its engine)
	 * @param releasedSeconds when its router last sent it, on the simulation's clock;
	 * {@code NaN} if never
	 * @param reason why it went there: the reason of the decision it was last sent with,
	 * as the gateway's {@code x-dualmap-reason} header names it ({@code affinity},
	 * {@code slo-switch}, {@code hotspot}, {@code idle-pull}, {@code rescue}, ...);
	 * {@code null} if never sent
	 * @param moves how often the dispatch queues had moved it to another instance by then
	 * (hotspot moves and idle pulls)
	 * @param rescued whether the queues' rescue placed it
	 * @param cachedTokens prompt tokens its engine found cached at its first token; -1
	 * without one
	 * @param ttftSeconds arrival to first token at its router; {@code NaN} without one
	 * @param outcome how it ended
	 * @param rejection why it was turned away ({@code <status>: <message>} from the
	 * queues), {@code null} if it was not
	 * @param rejectedAt the instance the rejection concerns (where it was queued, or the
	 * engine that refused it), {@code null} if none or not rejected
	 */
	public record Entry(int index, int router, double arrivalSeconds, int promptTokens, boolean feasible,
			double sloSeconds, @Nullable String instance, double releasedSeconds, @Nullable String reason, int moves,
			boolean rescued, int cachedTokens, double ttftSeconds, Outcome outcome, @Nullable String rejection,
			@Nullable String rejectedAt) {

	}

}

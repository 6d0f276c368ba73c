package io.github.dualmap.sim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * When instances join, leave or slow down during a simulated run. From {@code --scale}: a
 * comma-separated list of {@code WHEN:DELTA} steps, where {@code WHEN} is a virtual time
 * ({@code 600s}, {@code 10m}, {@code 90000ms}) or a share of the trace's arrival span
 * ({@code 50%}) and {@code DELTA} a signed instance count ({@code +2}, {@code -1}). New
 * instances start with cold caches; a removed instance takes nothing new, finishes what
 * it holds, then disappears. From {@code --slow-down} ({@link #parseSlowDowns}):
 * {@code WHEN:INSTANCE:FACTOR} steps, from which on every step of instance
 * {@code INSTANCE} (from 0) takes {@code FACTOR} times its modelled time (a GPU that
 * throttles, or a job sharing it; {@code 1} restores it). The router learns of a slowdown
 * only from what it observes.
 *
 * @param steps the changes in the order they are given
 */
public record MembershipSchedule(List<Step> steps) {

	/** No change during the run. */
	public static final MembershipSchedule NONE = new MembershipSchedule(List.of());

	private static final Pattern STEP = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)\\s*(%|ms|s|m)?\\s*:\\s*([+-][0-9]+)");

	public MembershipSchedule {
		steps = List.copyOf(steps);
	}

	private static final Pattern SLOW_STEP = Pattern
		.compile("([0-9]+(?:\\.[0-9]+)?)\\s*(%|ms|s|m)?\\s*:\\s*([0-9]+)\\s*:\\s*([0-9]+(?:\\.[0-9]+)?)");

	/**
	 * One change.
	 *
	 * @param at virtual time in nanoseconds, or -1 when {@code share} applies
	 * @param share share of the arrival span in (0, 1), or NaN when {@code at} applies
	 * @param delta instances added (positive) or removed (negative); 0 for a slowdown
	 * @param instance the instance that slows down (from 0), or -1 for a membership step
	 * @param factor a slowdown's step time factor (> 0), or NaN for a membership step
	 * @param text the step as written
	 */
	public record Step(long at, double share, int delta, int instance, double factor, String text) {

		public Step {
			if (instance < 0 && delta == 0) {
				throw new IllegalArgumentException("--scale step '" + text + "' changes nothing (delta 0)");
			}
			if (instance >= 0 && (delta != 0 || !(factor > 0) || Double.isInfinite(factor))) {
				throw new IllegalArgumentException("--slow-down step '" + text
						+ "' needs a factor above 0 and changes no membership, but has factor " + factor + " and delta "
						+ delta);
			}
		}

		/** A membership step. */
		public Step(long at, double share, int delta, String text) {
			this(at, share, delta, -1, Double.NaN, text);
		}

		/** Whether this step slows an instance down (or speeds it back up). */
		public boolean slowDown() {
			return instance >= 0;
		}

		/** Virtual time of the change in a run whose arrivals span {@code spanNanos}. */
		public long nanos(long spanNanos) {
			return at >= 0 ? at : Math.round(share * spanNanos);
		}

	}

	/**
	 * When a step happens: a virtual time in nanoseconds ({@code share} NaN), or a share
	 * of the trace's arrival span ({@code at} -1).
	 */
	private record When(long at, double share) {

		/**
		 * {@code number} with {@code unit} ({@code %}, {@code ms}, {@code s}, {@code m};
		 * {@code null} for seconds) of {@code step}, an entry of {@code option}.
		 */
		static When of(String option, String step, String number, @Nullable String unit) {
			if ("%".equals(unit)) {
				double value = Double.parseDouble(number);
				if (!(value > 0 && value < 100)) {
					throw new IllegalArgumentException(
							option + " step '" + step + "' must happen between 0 % and 100 % of the trace, exclusive");
				}
				return new When(-1, value / 100);
			}
			Duration at = DurationOption.parse(option, number + (unit == null ? "s" : unit));
			return new When(at.toNanos(), Double.NaN);
		}

	}

	/**
	 * Parses {@code text} (e.g. {@code 50%:+2} or {@code 600s:+2,900s:-1}) for a pool
	 * that starts with {@code instances} instances.
	 * @throws IllegalArgumentException naming the bad step when a step does not parse, a
	 * share is outside (0 %, 100 %), or the pool would drop below one instance
	 */
	public static MembershipSchedule parse(String text, int instances) {
		if (text.isBlank()) {
			throw new IllegalArgumentException("--scale is empty; give steps like 50%:+2 or 600s:-1");
		}
		List<Step> steps = new ArrayList<>();
		for (String part : text.split(",", -1)) {
			String s = part.strip();
			Matcher m = STEP.matcher(s.toLowerCase(Locale.ROOT));
			if (!m.matches()) {
				throw new IllegalArgumentException(
						"--scale step '" + s + "' must look like 600s:+2, 10m:-1 or 50%:+2 (WHEN:DELTA)");
			}
			int delta;
			try {
				delta = Integer.parseInt(m.group(3));
			}
			catch (NumberFormatException ex) {
				throw new IllegalArgumentException("--scale step '" + s + "' adds or removes more instances than a "
						+ "pool can have (" + m.group(3) + ")");
			}
			When when = When.of("--scale", s, m.group(1), m.group(2));
			steps.add(new Step(when.at(), when.share(), delta, s));
		}
		if (mixesKinds(steps)) {
			throw new IllegalArgumentException(
					"--scale '" + text + "' mixes times and shares of the trace; use one kind");
		}
		MembershipSchedule schedule = new MembershipSchedule(steps);
		schedule.slots(instances);
		return schedule;
	}

	/**
	 * Parses {@code --slow-down} {@code text} (e.g. {@code 50%:0:2} or
	 * {@code 300s:0:2,600s:0:1}) for a pool that starts with {@code instances} instances:
	 * only those may slow down.
	 * @throws IllegalArgumentException naming the bad step when a step does not parse, a
	 * share is outside (0 %, 100 %), the instance is not one of the pool's or the factor
	 * is not above 0, or when the steps mix times and shares of the trace (their order
	 * would depend on the rate)
	 */
	public static MembershipSchedule parseSlowDowns(String text, int instances) {
		if (text.isBlank()) {
			throw new IllegalArgumentException("--slow-down is empty; give steps like 50%:0:2 or 600s:3:1.5");
		}
		List<Step> steps = new ArrayList<>();
		for (String part : text.split(",", -1)) {
			String s = part.strip();
			Matcher m = SLOW_STEP.matcher(s.toLowerCase(Locale.ROOT));
			if (!m.matches()) {
				throw new IllegalArgumentException(
						"--slow-down step '" + s + "' must look like 600s:0:2 or 50%:3:1.5 (WHEN:INSTANCE:FACTOR)");
			}
			int instance;
			try {
				instance = Integer.parseInt(m.group(3));
			}
			catch (NumberFormatException ex) {
				instance = Integer.MAX_VALUE;
			}
			if (instance >= instances) {
				throw new IllegalArgumentException("--slow-down step '" + s + "' names instance " + m.group(3)
						+ ", but the pool's instances are 0 to " + (instances - 1));
			}
			double factor = Double.parseDouble(m.group(4));
			if (!(factor > 0) || factor > 1000) {
				throw new IllegalArgumentException(
						"--slow-down step '" + s + "' needs a factor above 0 and at most 1000 but has " + m.group(4));
			}
			When when = When.of("--slow-down", s, m.group(1), m.group(2));
			steps.add(new Step(when.at(), when.share(), 0, instance, factor, s));
		}
		if (mixesKinds(steps)) {
			throw new IllegalArgumentException(
					"--slow-down '" + text + "' mixes times and shares of the trace; use one kind");
		}
		return new MembershipSchedule(steps);
	}

	/**
	 * This schedule's steps followed by {@code other}'s.
	 * @throws IllegalArgumentException when one gives times and the other shares of the
	 * trace (their order would depend on the rate)
	 */
	public MembershipSchedule plus(MembershipSchedule other) {
		List<Step> all = new ArrayList<>(steps);
		all.addAll(other.steps);
		if (mixesKinds(all)) {
			throw new IllegalArgumentException("--scale and --slow-down mix times and shares of the trace ('" + this
					+ "' and '" + other.slowDowns() + "'); use one kind");
		}
		return new MembershipSchedule(all);
	}

	/**
	 * Whether {@code steps} give both virtual times and shares of the trace: their order
	 * would depend on the rate the trace is replayed at.
	 */
	private static boolean mixesKinds(List<Step> steps) {
		return steps.stream().map(st -> st.at() >= 0).distinct().count() > 1;
	}

	public boolean isEmpty() {
		return steps.isEmpty();
	}

	/**
	 * Instance slots a run needs: the initial ones plus every instance ever added.
	 * @throws IllegalArgumentException when a removal, in time order, would leave no
	 * instance
	 */
	public int slots(int instances) {
		if (instances <= 0) {
			throw new IllegalArgumentException("instances must be > 0 but was " + instances);
		}
		int slots = instances;
		int live = instances;
		List<Step> ordered = new ArrayList<>(steps);
		ordered.sort(Comparator.comparingDouble(st -> st.at() >= 0 ? st.at() : st.share()));
		for (Step st : ordered) {
			live += st.delta();
			if (st.delta() > 0) {
				slots += st.delta();
			}
			if (live < 1) {
				throw new IllegalArgumentException("--scale step '" + st.text() + "' would leave " + live
						+ " instances of the " + instances + " the run starts with");
			}
		}
		return slots;
	}

	/** The membership steps as {@code --scale} takes them. */
	@Override
	public String toString() {
		return String.join(",", steps.stream().filter(st -> !st.slowDown()).map(Step::text).toList());
	}

	/** The slowdowns as {@code --slow-down} takes them. */
	public String slowDowns() {
		return String.join(",", steps.stream().filter(Step::slowDown).map(Step::text).toList());
	}

}

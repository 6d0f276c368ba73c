package io.github.dualmap.sim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * When instances join or leave during a simulated run, parsed from {@code --scale}: a
 * comma-separated list of {@code WHEN:DELTA} steps, where {@code WHEN} is a virtual time
 * ({@code 600s}, {@code 10m}, {@code 90000ms}) or a share of the trace's arrival span
 * ({@code 50%}) and {@code DELTA} a signed instance count ({@code +2}, {@code -1}). New
 * instances start with cold caches; a removed instance takes nothing new, finishes what
 * it holds, then disappears.
 *
 * @param steps the changes in the order they happen
 */
public record MembershipSchedule(List<Step> steps) {

	/** No change during the run. */
	public static final MembershipSchedule NONE = new MembershipSchedule(List.of());

	private static final Pattern STEP = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)\\s*(%|ms|s|m)?\\s*:\\s*([+-][0-9]+)");

	public MembershipSchedule {
		steps = List.copyOf(steps);
	}

	/**
	 * One change.
	 *
	 * @param at virtual time in nanoseconds, or -1 when {@code share} applies
	 * @param share share of the arrival span in (0, 1), or NaN when {@code at} applies
	 * @param delta instances added (positive) or removed (negative), never 0
	 * @param text the step as written
	 */
	public record Step(long at, double share, int delta, String text) {

		public Step {
			if (delta == 0) {
				throw new IllegalArgumentException("--scale step '" + text + "' changes nothing (delta 0)");
			}
		}

		/** Virtual time of the change in a run whose arrivals span {@code spanNanos}. */
		public long nanos(long spanNanos) {
			return at >= 0 ? at : Math.round(share * spanNanos);
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
		for (String part : text.split(",")) {
			String s = part.strip();
			Matcher m = STEP.matcher(s.toLowerCase(Locale.ROOT));
			if (!m.matches()) {
				throw new IllegalArgumentException(
						"--scale step '" + s + "' must look like 600s:+2, 10m:-1 or 50%:+2 (WHEN:DELTA)");
			}
			double value = Double.parseDouble(m.group(1));
			String unit = m.group(2) == null ? "s" : m.group(2);
			int delta = Integer.parseInt(m.group(3));
			if (unit.equals("%")) {
				if (!(value > 0 && value < 100)) {
					throw new IllegalArgumentException(
							"--scale step '" + s + "' must happen between 0 % and 100 % of the trace, exclusive");
				}
				steps.add(new Step(-1, value / 100, delta, s));
			}
			else {
				Duration at = DurationOption.parse("--scale", m.group(1) + unit);
				steps.add(new Step(at.toNanos(), Double.NaN, delta, s));
			}
		}
		if (steps.stream().map(st -> st.at() >= 0).distinct().count() > 1) {
			// Their order would depend on the rate the trace is replayed at.
			throw new IllegalArgumentException(
					"--scale '" + text + "' mixes times and shares of the trace; use one kind");
		}
		MembershipSchedule schedule = new MembershipSchedule(steps);
		schedule.slots(instances);
		return schedule;
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

	@Override
	public String toString() {
		return String.join(",", steps.stream().map(Step::text).toList());
	}

}

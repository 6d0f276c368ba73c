package io.github.dualmap.sim;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a duration the simulator's options take ({@code 5s}, {@code 800ms}, {@code 1.5s},
 * {@code 2m}, or bare seconds), at most a day, so every option that takes one accepts the
 * same forms and names itself when it rejects one.
 */
final class DurationOption {

	private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m)?");

	/**
	 * The longest duration an option takes: a day. Longer ones mean nothing for a TTFT, a
	 * delay or a scrape interval, and added to arrival times in nanoseconds they once
	 * wrapped the simulation's clock.
	 */
	static final double MAX_NANOS = 86_400e9;

	private DurationOption() {
	}

	/**
	 * The duration {@code text} gives for {@code option}.
	 * @throws IllegalArgumentException naming {@code option} when {@code text} is not a
	 * duration or is longer than a day
	 */
	static Duration parse(String option, String text) {
		Matcher m = DURATION.matcher(text.strip().toLowerCase(Locale.ROOT));
		if (!m.matches()) {
			throw new IllegalArgumentException(
					option + " must be a duration like 5s, 800ms or 2m but was '" + text + "'");
		}
		double value = Double.parseDouble(m.group(1));
		String unit = m.group(2) == null ? "s" : m.group(2);
		double nanos = switch (unit) {
			case "ms" -> value * 1e6;
			case "m" -> value * 60e9;
			default -> value * 1e9;
		};
		if (nanos > MAX_NANOS) {
			throw new IllegalArgumentException(
					option + " must be at most 1 day (86400s or 1440m) but was '" + text + "'");
		}
		return Duration.ofNanos(Math.round(nanos));
	}

}

package io.github.dualmap.tenant;

/**
 * The rate-limit headers OpenAI clients read, and OpenAI's duration format for
 * {@code x-ratelimit-reset-tokens} (Go's: {@code 6m0s}, {@code 1s}, {@code 20ms},
 * {@code 1h2m3.5s}).
 */
public final class RateLimitHeaders {

	/** The tokens the binding budget holds when full. */
	public static final String LIMIT = "x-ratelimit-limit-tokens";

	/** The tokens left in the binding budget. */
	public static final String REMAINING = "x-ratelimit-remaining-tokens";

	/** How long until the binding budget is full again. */
	public static final String RESET = "x-ratelimit-reset-tokens";

	private RateLimitHeaders() {
	}

	/** {@code millis} in OpenAI's (Go's) duration format. */
	public static String duration(long millis) {
		if (millis <= 0) {
			return "0s";
		}
		if (millis < 1000) {
			return millis + "ms";
		}
		StringBuilder out = new StringBuilder();
		long hours = millis / 3_600_000;
		long minutes = millis / 60_000 % 60;
		long ms = millis % 60_000;
		if (hours > 0) {
			out.append(hours).append('h');
		}
		if (hours > 0 || minutes > 0) {
			out.append(minutes).append('m');
		}
		out.append(ms / 1000);
		if (ms % 1000 != 0) {
			String fraction = String.format("%03d", ms % 1000).replaceAll("0+$", "");
			out.append('.').append(fraction);
		}
		return out.append('s').toString();
	}

}

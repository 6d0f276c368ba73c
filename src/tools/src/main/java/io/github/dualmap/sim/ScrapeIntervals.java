package io.github.dualmap.sim;

import java.time.Duration;
import java.util.Map;

/**
 * How often each policy's real counterpart scrapes engine metrics, so the simulator gives
 * every policy the staleness it would have in production. llm-d's endpoint picker
 * refreshes its metrics every 50 ms; a Prometheus-style scrape by the gateway (and every
 * other policy) every 500 ms.
 */
public final class ScrapeIntervals {

	/** Interval of policies not in the table. */
	public static final Duration DEFAULT = Duration.ofMillis(500);

	private static final Map<String, Duration> BY_POLICY = Map.of("llmd-scorer", Duration.ofMillis(50), "llmd-precise",
			Duration.ofMillis(50));

	private ScrapeIntervals() {
	}

	/** The scrape interval of {@code policy}. */
	public static Duration of(String policy) {
		return BY_POLICY.getOrDefault(policy, DEFAULT);
	}

}

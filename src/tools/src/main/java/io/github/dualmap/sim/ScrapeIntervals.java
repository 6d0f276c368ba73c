package io.github.dualmap.sim;

import java.time.Duration;
import java.util.Map;

import io.github.dualmap.core.LlmdTokenLoadPolicy;

/**
 * How often each policy's real counterpart scrapes engine metrics, so the simulator gives
 * every policy the staleness it would have in production. llm-d's endpoint picker
 * refreshes its metrics every 50 ms (every llm-d row, variants included); a
 * Prometheus-style scrape by the gateway (and every other policy) every 500 ms.
 */
public final class ScrapeIntervals {

	/** Interval of policies not in the table. */
	public static final Duration DEFAULT = Duration.ofMillis(500);

	private static final Duration LLMD = Duration.ofMillis(50);

	private static final Map<String, Duration> BY_POLICY = Map.of("llmd-scorer", LLMD,
			PolicySpec.LLMD_OPTIMIZED_BASELINE, LLMD, PolicySpec.LLMD_SCORER_WHOLE_PROMPT, LLMD,
			PolicySpec.LLMD_SCORER_NO_PREFIX, LLMD, "llmd-precise", LLMD, PolicySpec.LLMD_PRECISE_MIN_MAX, LLMD,
			PolicySpec.LLMD_PRECISE_NO_FLOW_CONTROL, LLMD, LlmdTokenLoadPolicy.NAME, LLMD);

	private ScrapeIntervals() {
	}

	/** The scrape interval of {@code policy}. */
	public static Duration of(String policy) {
		return BY_POLICY.getOrDefault(policy, DEFAULT);
	}

}

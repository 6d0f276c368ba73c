package io.github.dualmap.core;

import java.time.Duration;

/**
 * How the dispatch queues share a pool between tenants ({@link Tenant}), in the manner of
 * the Virtual Token Counter (Sheng et al., "Fairness in Serving Large Language Models",
 * OSDI 2024). A request's service is counted in tokens: each uncached prompt token counts
 * 1, each cached prompt token {@code cachedPromptWeight}, each output token
 * {@code outputWeight}; a tenant's counter grows by that service divided by its weight.
 *
 * @param enabled whether releases follow the tenants' counters and priorities; off, the
 * queues serve in their own order and still count each tenant's service (for its share)
 * @param cachedPromptWeight the service of a prompt token found in the instance's cache,
 * in [0, 1]
 * @param outputWeight the service of an output token, {@code >= 0}
 * @param windowNanos the recent window a tenant's share of the served tokens is measured
 * over
 * @param initialOutputTokens output tokens charged at release for a request before any
 * request of the pool has finished (at most the request's own cap); afterwards the
 * tenant's running mean is charged (the pool's while none of the tenant's requests has
 * finished), and every request is corrected to its actual output when it finishes
 */
public record FairnessSettings(boolean enabled, double cachedPromptWeight, double outputWeight, long windowNanos,
		int initialOutputTokens) {

	/** Default weight of a cached prompt token. */
	public static final double DEFAULT_CACHED_PROMPT_WEIGHT = 0.1;

	/**
	 * Default weight of an output token: 2, the Virtual Token Counter's choice (a decode
	 * token costs an engine more than a prefilled one).
	 */
	public static final double DEFAULT_OUTPUT_WEIGHT = 2.0;

	/** Default share window. */
	public static final Duration DEFAULT_WINDOW = Duration.ofMinutes(1);

	/** Default output estimate of a tenant without history. */
	public static final int DEFAULT_INITIAL_OUTPUT_TOKENS = 256;

	public FairnessSettings {
		if (!(cachedPromptWeight >= 0 && cachedPromptWeight <= 1)) {
			throw new IllegalArgumentException("cachedPromptWeight must be in [0, 1] but was " + cachedPromptWeight);
		}
		if (!(outputWeight >= 0) || Double.isInfinite(outputWeight)) {
			throw new IllegalArgumentException("outputWeight must be >= 0 but was " + outputWeight);
		}
		if (windowNanos < 1_000_000) {
			throw new IllegalArgumentException("windowNanos must be at least 1 ms but was " + windowNanos);
		}
		if (initialOutputTokens < 0) {
			throw new IllegalArgumentException("initialOutputTokens must be >= 0 but was " + initialOutputTokens);
		}
	}

	/** Fair queuing on, with the default weights. */
	public static FairnessSettings ofDefaults() {
		return new FairnessSettings(true, DEFAULT_CACHED_PROMPT_WEIGHT, DEFAULT_OUTPUT_WEIGHT, DEFAULT_WINDOW.toNanos(),
				DEFAULT_INITIAL_OUTPUT_TOKENS);
	}

	/** These settings with fair queuing on or off. */
	public FairnessSettings withEnabled(boolean on) {
		return new FairnessSettings(on, cachedPromptWeight, outputWeight, windowNanos, initialOutputTokens);
	}

}

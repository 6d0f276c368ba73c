package io.github.dualmap.stats;

import java.time.Duration;

/**
 * How often and how patiently instances are scraped.
 *
 * @param interval time between the end of one scrape of a target and the start of the
 * next, before jitter
 * @param timeout longest a scrape may take, connect to last body byte; kept below the
 * interval so a slow instance is reported failed before its next turn
 * @param jitter fraction of the interval by which each wait varies at random, either way,
 * so scrapes of many instances do not synchronise
 * @param maxBodyBytes largest metrics body accepted
 */
public record ScrapeSettings(Duration interval, Duration timeout, double jitter, int maxBodyBytes) {

	/** 500 ms between scrapes. */
	public static final Duration DEFAULT_INTERVAL = Duration.ofMillis(500);

	/**
	 * 400 ms: a scrape that takes longer reports the instance unknown before its next
	 * turn.
	 */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(400);

	/** 20 % jitter. */
	public static final double DEFAULT_JITTER = 0.2;

	/** 4 MiB: a vLLM body with every histogram is a few hundred KiB. */
	public static final int DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

	public ScrapeSettings {
		if (interval.isNegative() || interval.isZero()) {
			throw new IllegalArgumentException("interval must be > 0 but was " + interval);
		}
		if (timeout.isNegative() || timeout.isZero()) {
			throw new IllegalArgumentException("timeout must be > 0 but was " + timeout);
		}
		if (!(jitter >= 0 && jitter < 1)) {
			throw new IllegalArgumentException("jitter must be in [0, 1) but was " + jitter);
		}
		if (maxBodyBytes <= 0) {
			throw new IllegalArgumentException("maxBodyBytes must be > 0 but was " + maxBodyBytes);
		}
	}

	public static ScrapeSettings defaults() {
		return new ScrapeSettings(DEFAULT_INTERVAL, DEFAULT_TIMEOUT, DEFAULT_JITTER, DEFAULT_MAX_BODY_BYTES);
	}

}

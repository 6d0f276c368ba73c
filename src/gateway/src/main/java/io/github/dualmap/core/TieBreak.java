package io.github.dualmap.core;

import java.util.Locale;

/**
 * How {@code dualmap} chooses between candidates that hold the same cached prefix of a
 * request, typically none ({@link SchedulerSettings#tieBreak()}). The SLO switch still
 * applies after either choice.
 */
public enum TieBreak {

	/**
	 * {@link #RING_ORDER} while the engine of either tied candidate, as last scraped and
	 * still fresh, holds requests this gateway did not send (other gateway replicas
	 * without replica sync, or clients that bypass it) and no peer publishes its load
	 * there; else {@link #ESTIMATE}. One gateway alone, or replicas that share their
	 * load, place a cold prompt on the less loaded candidate; replicas that cannot see
	 * each other's load place it, and so a conversation's later turns, alike.
	 */
	AUTO,

	/** The candidate with the lower TTFT estimate, then ring order. */
	ESTIMATE,

	/**
	 * The first candidate in ring order: a function of the prompt and the membership
	 * alone, so every replica makes the same choice.
	 */
	RING_ORDER;

	/** The configuration value ({@code auto}, {@code estimate}, {@code ring-order}). */
	public String value() {
		return name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

}

package io.github.dualmap.core;

/**
 * Which TTFT model the scheduler's estimates come from
 * ({@link SchedulerSettings#ttftModel()}).
 */
public enum TtftModel {

	/**
	 * Prefill cost per uncached token plus the attention term: each instance's
	 * {@link AttentionTtftModel}, with the work ahead kept as cost.
	 */
	ATTENTION,

	/**
	 * One rate per uncached token for the whole pool, ahead and own tokens alike
	 * ({@link TtftEstimator}): it understates long prompts with a long cached prefix.
	 */
	LINEAR

}

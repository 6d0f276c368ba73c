package io.github.dualmap.autoconfigure;

import io.github.dualmap.core.SchedulerSettings;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import org.jspecify.annotations.Nullable;

/**
 * {@code dualmap.cold.*}, cold requests: those none of whose first ring instances holds
 * much of the prompt go to the least occupied of their first d ring instances.
 */
public class ColdProperties {

	/**
	 * A request is cold when none of its first candidates-max ring instances is believed
	 * (by its shadow index) to hold at least this share of the prompt; a cold request
	 * goes to the one of its first d ring instances with the fewest requests in flight
	 * and queued (the engine's scraped count when larger) among those whose TTFT estimate
	 * is within the switch budget. 0 turns the rule off: every request chooses between
	 * its two candidates; 0.3 is the share measured. Unset, 0.3 for a pool whose dispatch
	 * mode is pass-through and 0 (off) behind the queue.
	 */
	@DecimalMin(value = "0", message = "dualmap.cold.cached-share must be in [0, 1]")
	@DecimalMax(value = "1", message = "dualmap.cold.cached-share must be in [0, 1]")
	private @Nullable Double cachedShare;

	/**
	 * The most ring instances a cold request considers (walking both rings from its key,
	 * alternating; the two candidates first); warm requests look for their prompt on as
	 * many.
	 */
	@Min(value = 2, message = "dualmap.cold.candidates-max must be in [2, 16]")
	@Max(value = SchedulerSettings.MAX_COLD_CANDIDATES, message = "dualmap.cold.candidates-max must be in [2, 16]")
	private int candidatesMax = SchedulerSettings.DEFAULT_COLD_CANDIDATES_MAX;

	/**
	 * A cold request considers two ring instances, plus one per this many pending
	 * uncached tokens on the pool's mean instance, up to candidates-max.
	 */
	@Min(value = 1, message = "dualmap.cold.load-step-tokens must be >= 1")
	private long loadStepTokens = SchedulerSettings.DEFAULT_COLD_LOAD_STEP_TOKENS;

	public @Nullable Double getCachedShare() {
		return this.cachedShare;
	}

	public void setCachedShare(@Nullable Double cachedShare) {
		this.cachedShare = cachedShare;
	}

	public int getCandidatesMax() {
		return this.candidatesMax;
	}

	public void setCandidatesMax(int candidatesMax) {
		this.candidatesMax = candidatesMax;
	}

	public long getLoadStepTokens() {
		return this.loadStepTokens;
	}

	public void setLoadStepTokens(long loadStepTokens) {
		this.loadStepTokens = loadStepTokens;
	}

}

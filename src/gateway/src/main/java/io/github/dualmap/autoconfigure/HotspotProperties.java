package io.github.dualmap.autoconfigure;

import java.time.Duration;

import io.github.dualmap.core.SchedulerSettings;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

/** {@code dualmap.hotspot.*}: hotspot detection. */
public class HotspotProperties {

	/**
	 * An instance is a hotspot above this factor times the pool's mean pending tokens.
	 */
	@DecimalMin(value = "1", message = "dualmap.hotspot.factor must be >= 1")
	private double factor = SchedulerSettings.DEFAULT_HOTSPOT_FACTOR;

	/** And above this absolute number of pending uncached tokens. */
	@Min(value = 0, message = "dualmap.hotspot.floor-tokens must be >= 0")
	private long floorTokens = SchedulerSettings.DEFAULT_HOTSPOT_FLOOR_TOKENS;

	/** Or when its oldest queued request has waited this long. */
	@NotNull(message = "dualmap.hotspot.max-queue-wait must be set")
	private Duration maxQueueWait = SchedulerSettings.DEFAULT_HOTSPOT_MAX_WAIT;

	@AssertTrue(message = "dualmap.hotspot.max-queue-wait must be > 0")
	private boolean isMaxQueueWaitPositive() {
		return this.maxQueueWait.toNanos() > 0;
	}

	public double getFactor() {
		return this.factor;
	}

	public void setFactor(double factor) {
		this.factor = factor;
	}

	public long getFloorTokens() {
		return this.floorTokens;
	}

	public void setFloorTokens(long floorTokens) {
		this.floorTokens = floorTokens;
	}

	public Duration getMaxQueueWait() {
		return this.maxQueueWait;
	}

	public void setMaxQueueWait(Duration maxQueueWait) {
		this.maxQueueWait = maxQueueWait;
	}

}

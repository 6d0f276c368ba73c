package io.github.dualmap.autoconfigure;

import io.github.dualmap.core.SchedulerSettings;
import jakarta.validation.constraints.Min;

/** {@code dualmap.shadow.*}: the router's shadow of each instance's KV cache. */
public class ShadowProperties {

	/** Assumed KV capacity of an instance in tokens until the engine reports one. */
	@Min(value = 1, message = "dualmap.shadow.capacity-tokens must be >= 1")
	private long capacityTokens = SchedulerSettings.DEFAULT_SHADOW_CAPACITY_TOKENS;

	public long getCapacityTokens() {
		return this.capacityTokens;
	}

	public void setCapacityTokens(long capacityTokens) {
		this.capacityTokens = capacityTokens;
	}

}

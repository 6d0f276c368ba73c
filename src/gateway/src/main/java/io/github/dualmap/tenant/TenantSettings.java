package io.github.dualmap.tenant;

import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * One tenant's effective settings: its own where it sets them, else
 * {@code dualmap.tenants.default}'s, else the defaults.
 *
 * @param weight its weight in fair queuing between tenants
 * @param priority its priority band in fair queuing, higher first
 * @param tokensPerMinute its budget per minute, {@code null}: none
 * @param tokensPerDay its budget per day, {@code null}: none
 * @param models its budgets per model
 */
public record TenantSettings(double weight, int priority, @Nullable Long tokensPerMinute, @Nullable Long tokensPerDay,
		Map<String, ModelLimits> models) {

	/** A tenant's budgets for one model. */
	public record ModelLimits(@Nullable Long tokensPerMinute, @Nullable Long tokensPerDay) {

	}

}

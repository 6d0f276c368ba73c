/**
 * Many tenants on one pool: who a request belongs to, their token budgets (kept in memory
 * or shared through Redis), the usage read from engine answers and the OpenTelemetry
 * GenAI meters. The gateway filters that apply them are
 * {@code io.github.dualmap.gateway.TenantBudgetFilter} and
 * {@code io.github.dualmap.gateway.TokenUsageFilter}.
 */
@NullMarked
package io.github.dualmap.tenant;

import org.jspecify.annotations.NullMarked;

package io.github.dualmap.sim;

import java.util.List;

/**
 * A run with tenants: its result as any run's, and each tenant's part of it.
 *
 * @param result the whole run
 * @param tenants per tenant, in the order of the run's {@link TenantMix}
 */
public record TenantRun(RunResult result, List<TenantResult> tenants) {

	public TenantRun {
		tenants = List.copyOf(tenants);
	}

	/** The part of tenant {@code name}. */
	public TenantResult tenant(String name) {
		return tenants.stream()
			.filter(t -> t.tenant().equals(name))
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("no tenant '" + name + "' in the run"));
	}

	/**
	 * One tenant's measured requests.
	 *
	 * @param tenant its name
	 * @param measured its measured requests
	 * @param withinSlo of them, those whose first token came within their objective
	 * @param demandTokens the prompt and output tokens of its measured requests
	 * @param servedTokens the prompt and output tokens of those served (a first token,
	 * late or not)
	 */
	public record TenantResult(String tenant, int measured, int withinSlo, long demandTokens, long servedTokens) {

		/** Share of its measured requests within their objective. */
		public double attainment() {
			return measured == 0 ? 0 : (double) withinSlo / measured;
		}

	}

}

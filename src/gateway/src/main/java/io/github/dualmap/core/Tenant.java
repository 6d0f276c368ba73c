package io.github.dualmap.core;

/**
 * Who a request is served for, as the dispatch queues share a pool between tenants: its
 * name, its weight in the pool's service when several tenants wait, and its priority
 * band.
 *
 * @param name the tenant's name
 * @param weight its weight in fair queuing, {@code > 0}: a tenant of weight 2 gets twice
 * the service of a tenant of weight 1 while both wait
 * @param priority its band, higher first: a band is served before any lower one, and
 * under overload the lowest band is shed first
 */
public record Tenant(String name, double weight, int priority) {

	/** The tenant of requests that name none. */
	public static final Tenant DEFAULT = new Tenant("default", 1.0, 0);

	public Tenant {
		if (name == null || name.isBlank()) {
			throw new IllegalArgumentException("a tenant needs a name");
		}
		if (!(weight > 0) || Double.isInfinite(weight)) {
			throw new IllegalArgumentException("tenant '" + name + "' needs a weight > 0 but has " + weight);
		}
	}

}

package io.github.dualmap.actuate;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.dualmap.core.InstanceState;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.ServicePool;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * Health of the DualMap pools ({@code dualMap}): per pool, the instances known and those
 * accepting work (breaker not open, answering, not draining); {@code DOWN} when a pool
 * has none able to take a request. It is in no probe group by default; add it to the
 * readiness group
 * ({@code management.endpoint.health.group.readiness.include=readinessState,dualMap}) to
 * take a gateway out of its load balancer while it cannot serve a pool.
 */
public class DualMapHealthIndicator implements HealthIndicator {

	private final DualMapRegistry registry;

	public DualMapHealthIndicator(DualMapRegistry registry) {
		this.registry = registry;
	}

	@Override
	public Health health() {
		boolean up = true;
		Map<String, Object> pools = new LinkedHashMap<>();
		for (ServicePool service : this.registry.services().values()) {
			int known = 0;
			int accepting = 0;
			for (InstanceState instance : service.instancePool().instances()) {
				known++;
				if (instance.acceptsNewWork()) {
					accepting++;
				}
			}
			Map<String, Object> details = new LinkedHashMap<>();
			details.put("instances", known);
			details.put("accepting", accepting);
			pools.put(service.serviceId(), details);
			up &= accepting > 0;
		}
		return (up ? Health.up() : Health.down()).withDetail("pools", pools).build();
	}

}

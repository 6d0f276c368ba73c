package io.github.dualmap.autoconfigure;

import java.time.Duration;

import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.NotNull;

/** {@code dualmap.discovery.*}: how the gateway follows discovery. */
public class DiscoveryProperties {

	/**
	 * How often each service's instance list is read, from startup on, so rings and
	 * scraping exist before the first request and a removed instance's queue is re-routed
	 * without waiting for traffic. The list itself may be cached by Spring's load
	 * balancer (spring.cloud.loadbalancer.cache.ttl).
	 */
	@NotNull(message = "dualmap.discovery.refresh-interval must be set")
	private Duration refreshInterval = Duration.ofSeconds(1);

	@AssertTrue(message = "dualmap.discovery.refresh-interval must be >= 1ms")
	private boolean isRefreshIntervalPositive() {
		return this.refreshInterval.toMillis() >= 1;
	}

	public Duration getRefreshInterval() {
		return this.refreshInterval;
	}

	public void setRefreshInterval(Duration refreshInterval) {
		this.refreshInterval = refreshInterval;
	}

	/**
	 * How long a pool keeps its last known instances while discovery lists none. Spring's
	 * load balancer answers a failed or timed-out discovery read with an empty list (and
	 * may cache it for spring.cloud.loadbalancer.cache.ttl, 35s by default); taken at its
	 * word, it would reject every queued request and forget drains, requests in flight
	 * and breakers. A pool really scaled to zero empties after this long. 0 applies an
	 * empty list at once.
	 */
	@NotNull(message = "dualmap.discovery.empty-list-grace must be set")
	private Duration emptyListGrace = Duration.ofSeconds(60);

	@AssertTrue(message = "dualmap.discovery.empty-list-grace must be >= 0")
	private boolean isEmptyListGraceNotNegative() {
		return !this.emptyListGrace.isNegative();
	}

	public Duration getEmptyListGrace() {
		return this.emptyListGrace;
	}

	public void setEmptyListGrace(Duration emptyListGrace) {
		this.emptyListGrace = emptyListGrace;
	}

}

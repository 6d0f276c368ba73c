package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dualmap.core.NanoClock;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Takes an empty instance list for a failed discovery read for a while, and keeps the
 * last membership meanwhile: Spring's discovery supplier answers an error or a timeout
 * with an empty list, which would otherwise reject every queued request and forget every
 * instance's state (drains, requests in flight, breakers).
 *
 * <p>
 * A decorator of the {@link InstanceMembership} it hands lists on to, in the manner of
 * Spring Cloud LoadBalancer's {@code DelegatingServiceInstanceListSupplier}s. It
 * decorates where the list enters the service rather than the application's
 * {@code ServiceInstanceListSupplier}: lists come to one service from each request's load
 * balancer and from {@link DiscoveryMembership}'s refresh, both reading the application's
 * own supplier chain, and the grace is one state per service whichever brought the list.
 */
final class EmptyListGrace {

	// The category operators know these lines under.
	private static final Log logger = LogFactory.getLog(ServicePool.class);

	private static final long NOT_EMPTY = Long.MIN_VALUE;

	/** {@link #emptySince} once an empty list was applied after the grace. */
	private static final long EMPTY_APPLIED = Long.MIN_VALUE + 1;

	private final String serviceId;

	private final NanoClock clock;

	private final InstanceMembership delegate;

	/** See {@link #grace}; zero until configured. */
	private volatile long graceNanos;

	/**
	 * Clock reading of the first empty list in a row while the service had instances,
	 * else {@link #NOT_EMPTY}.
	 */
	private final AtomicLong emptySince = new AtomicLong(NOT_EMPTY);

	EmptyListGrace(String serviceId, NanoClock clock, InstanceMembership delegate) {
		this.serviceId = serviceId;
		this.clock = clock;
		this.delegate = delegate;
	}

	/**
	 * How long an empty list is taken for a failed discovery read; zero applies an empty
	 * list at once.
	 */
	void grace(Duration grace) {
		if (grace.isNegative()) {
			throw new IllegalArgumentException("empty list grace must be >= 0 but was " + grace);
		}
		this.graceNanos = grace.toNanos();
	}

	/**
	 * Hands {@code instances} on to the membership, unless it is an empty list within the
	 * grace.
	 * @return whether the membership changed
	 */
	boolean update(List<ServiceInstance> instances) {
		if (!instances.isEmpty()) {
			if (this.emptySince.get() != NOT_EMPTY) {
				listedAgain(instances.size());
			}
		}
		else if (!this.delegate.lastListEmpty() && keepsLastMembership()) {
			return false;
		}
		return this.delegate.update(instances);
	}

	/** Whether an empty list is ignored now: within the grace since the first one. */
	private boolean keepsLastMembership() {
		long grace = this.graceNanos;
		int known = this.delegate.size();
		if (grace <= 0 || known == 0) {
			return false;
		}
		long now = this.clock.nanos();
		long since = this.emptySince.get();
		if (since == NOT_EMPTY) {
			if (this.emptySince.compareAndSet(NOT_EMPTY, now)) {
				logger.warn("Discovery lists no instance of " + this.serviceId + " (or could not be read): keeping its "
						+ known + " known instances for up to " + Duration.ofNanos(grace)
						+ " (dualmap.discovery.empty-list-grace)");
			}
			return true;
		}
		if (now - since < grace) {
			return true;
		}
		// Once, by the caller that applies it (request threads and the refresher race).
		if (this.emptySince.compareAndSet(since, EMPTY_APPLIED)) {
			logger.warn("Discovery has listed no instance of " + this.serviceId + " for "
					+ Duration.ofNanos(now - since) + ": the pool is empty");
		}
		return false;
	}

	/**
	 * How long discovery has listed no instance while the last known ones are kept, or
	 * {@code null} when they are not.
	 */
	@Nullable Duration keptThroughEmptyLists() {
		long since = this.emptySince.get();
		if (since == NOT_EMPTY || since == EMPTY_APPLIED || this.delegate.size() == 0) {
			return null;
		}
		return Duration.ofNanos(Math.max(0, this.clock.nanos() - since));
	}

	private void listedAgain(int listed) {
		long since = this.emptySince.getAndSet(NOT_EMPTY);
		if (since != NOT_EMPTY && since != EMPTY_APPLIED && this.delegate.size() != 0) {
			logger.info("Discovery lists " + listed + " instances of " + this.serviceId + " again after "
					+ Duration.ofNanos(Math.max(0, this.clock.nanos() - since)) + " without");
		}
	}

}

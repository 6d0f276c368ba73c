package io.github.dualmap.gateway;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.circuitbreaker.IllegalStateTransitionException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * One Resilience4j circuit breaker per instance of a pool. A breaker's state is mirrored
 * into {@link InstanceState#healthy(boolean)}, so every policy skips an instance whose
 * breaker is open without knowing about breakers; so is an instance taken out as
 * unresponsive (it answers neither scrapes nor requests), whatever its breaker says.
 */
public final class InstanceBreakers {

	private static final Log logger = LogFactory.getLog(InstanceBreakers.class);

	private final InstancePool pool;

	private final CircuitBreakerRegistry registry;

	private final Set<String> unresponsive = ConcurrentHashMap.newKeySet();

	/** Instances whose half-open breaker refused a call: every permit is out probing. */
	private final Set<String> probing = ConcurrentHashMap.newKeySet();

	/** Instances whose last scrape failed (no answer, or no usable one). */
	private final Set<String> scrapeFailed = ConcurrentHashMap.newKeySet();

	/** The last failure each breaker recorded, for the line logged when it opens. */
	private final Map<String, Throwable> lastFailure = new ConcurrentHashMap<>();

	public InstanceBreakers(InstancePool pool, CircuitBreakerConfig config) {
		this.pool = pool;
		// An open breaker hides its instance from the policies, so nothing would ever ask
		// it for a permission again: it has to move to half open by itself.
		this.registry = CircuitBreakerRegistry
			.of(CircuitBreakerConfig.from(config).automaticTransitionFromOpenToHalfOpenEnabled(true).build());
	}

	/** The breaker of {@code instanceId}, created closed on first use. */
	public CircuitBreaker breaker(String instanceId) {
		return this.registry.find(instanceId).orElseGet(() -> create(instanceId));
	}

	private synchronized CircuitBreaker create(String instanceId) {
		return this.registry.find(instanceId).orElseGet(() -> {
			CircuitBreaker breaker = this.registry.circuitBreaker(instanceId);
			breaker.getEventPublisher()
				.onError(event -> this.lastFailure.put(instanceId, event.getThrowable()))
				.onStateTransition(event -> {
					this.probing.remove(instanceId);
					updateHealth(instanceId);
					log(instanceId, breaker, event.getStateTransition());
				});
			return breaker;
		});
	}

	/**
	 * One line when a breaker takes its instance out and one when it puts it back: the
	 * clients' 503s ({@code no_instance_available}) while no instance accepts work have
	 * their cause in the log. A failed probe (half open to open again) keeps an instance
	 * out that was already reported, so it logs at debug level only.
	 */
	private void log(String instanceId, CircuitBreaker breaker, CircuitBreaker.StateTransition transition) {
		String instance = "Instance " + instanceId + " of " + this.pool.name();
		CircuitBreaker.State from = transition.getFromState();
		CircuitBreaker.State to = transition.getToState();
		if (!acceptsCalls(to) && from != CircuitBreaker.State.HALF_OPEN) {
			CircuitBreaker.Metrics metrics = breaker.getMetrics();
			float rate = metrics.getFailureRate();
			Throwable last = this.lastFailure.get(instanceId);
			logger.warn(instance + ": its circuit breaker opened ("
					+ (rate < 0 ? to : rate + " % of the last " + metrics.getNumberOfBufferedCalls() + " calls failed")
					+ (last == null ? "" : "; last: " + last)
					+ "): no new requests go to it, and its queued ones move, until a probe succeeds"
					+ " (dualmap.breaker.*)");
		}
		else if (to == CircuitBreaker.State.CLOSED) {
			this.lastFailure.remove(instanceId);
			logger.info(instance + ": its circuit breaker closed, it gets new requests");
		}
		else if (logger.isDebugEnabled()) {
			// Half open, probing; or a failed probe keeping it out.
			logger.debug(instance + ": its circuit breaker went from " + from + " to " + to);
		}
	}

	/** A scrape of {@code instanceId} failed (see {@link #scrapeSucceeded}). */
	public void scrapeFailed(String instanceId) {
		this.scrapeFailed.add(instanceId);
	}

	/**
	 * A scrape of {@code instanceId} succeeded. After failed ones, the instance is back
	 * (an engine restarted, a network partition healed): an open breaker moves to half
	 * open at once and lets its probes through, instead of keeping the instance out for
	 * the rest of {@code dualmap.breaker.wait-duration-in-open-state}. An instance whose
	 * scrapes never failed keeps its breaker's wait: its metrics endpoint answering says
	 * nothing about the requests that opened the breaker.
	 * @return whether the breaker moved to half open
	 */
	public boolean scrapeSucceeded(String instanceId) {
		if (!this.scrapeFailed.remove(instanceId)) {
			return false;
		}
		CircuitBreaker breaker = this.registry.find(instanceId).orElse(null);
		if (breaker == null || breaker.getState() != CircuitBreaker.State.OPEN) {
			return false;
		}
		try {
			breaker.transitionToHalfOpenState();
		}
		catch (IllegalStateTransitionException ex) {
			// It moved by itself meanwhile (its wait ended): nothing left to do.
			return false;
		}
		logger.info("Instance " + instanceId + " of " + this.pool.name()
				+ " answers its scrapes again: its circuit breaker lets probes through now");
		return true;
	}

	/**
	 * Takes {@code instanceId} out of rotation as unresponsive, whatever its breaker
	 * says.
	 * @return whether it was responsive
	 */
	public boolean markUnresponsive(String instanceId) {
		return changed(instanceId, this.unresponsive.add(instanceId));
	}

	/**
	 * Puts {@code instanceId} back after {@link #markUnresponsive}: its breaker's state
	 * counts again.
	 * @return whether it was unresponsive
	 */
	public boolean markResponsive(String instanceId) {
		return changed(instanceId, this.unresponsive.remove(instanceId));
	}

	private boolean changed(String instanceId, boolean changed) {
		if (changed) {
			updateHealth(instanceId);
		}
		return changed;
	}

	/**
	 * The breaker of {@code instanceId} refused a call: while it is half open, its probes
	 * hold every permit, so the instance takes no work until its breaker moves (closes,
	 * or opens again). Otherwise it would look idle to the policies and the queues' idle
	 * pull and rebalancing, each choice of it refused in turn, until a request ran out of
	 * tries beside instances that accept work.
	 */
	public void refused(String instanceId) {
		if (breaker(instanceId).getState() == CircuitBreaker.State.HALF_OPEN && this.probing.add(instanceId)) {
			updateHealth(instanceId);
			// A transition between the state read and the flag clears it, under the
			// same lock as this check.
			synchronized (this) {
				if (breaker(instanceId).getState() != CircuitBreaker.State.HALF_OPEN
						&& this.probing.remove(instanceId)) {
					updateHealth(instanceId);
				}
			}
		}
	}

	/**
	 * A call on {@code instanceId} ended, whatever its outcome: a half-open breaker may
	 * have a permit free again (a cancelled probe gives its permit back without moving
	 * the breaker), so the instance is chosen again, and refused again if none is free.
	 */
	public void permitReturned(String instanceId) {
		if (this.probing.remove(instanceId)) {
			updateHealth(instanceId);
		}
	}

	/** Whether {@code instanceId} was not taken out as unresponsive. */
	public boolean responsive(String instanceId) {
		return !this.unresponsive.contains(instanceId);
	}

	/**
	 * Both inputs read under one lock (a breaker publishes its transition after taking
	 * the new state), so the last update always sees both current.
	 */
	private synchronized void updateHealth(String instanceId) {
		InstanceState state = this.pool.instance(instanceId);
		if (state != null) {
			state.healthy(acceptsCalls(breaker(instanceId).getState()) && !this.unresponsive.contains(instanceId)
					&& !this.probing.contains(instanceId));
		}
	}

	private static boolean acceptsCalls(CircuitBreaker.State state) {
		return switch (state) {
			case CLOSED, HALF_OPEN, DISABLED, METRICS_ONLY -> true;
			case OPEN, FORCED_OPEN -> false;
		};
	}

	/** Forgets the breakers of instances that left the pool. */
	public synchronized void retain(Collection<String> instanceIds) {
		Set<String> keep = Set.copyOf(instanceIds);
		this.unresponsive.retainAll(keep);
		this.probing.retainAll(keep);
		this.scrapeFailed.retainAll(keep);
		this.lastFailure.keySet().retainAll(keep);
		for (CircuitBreaker b : this.registry.getAllCircuitBreakers()) {
			if (!keep.contains(b.getName())) {
				this.registry.remove(b.getName());
			}
		}
	}

	/** Every live breaker, for the actuator view. */
	public Set<CircuitBreaker> all() {
		return this.registry.getAllCircuitBreakers();
	}

}

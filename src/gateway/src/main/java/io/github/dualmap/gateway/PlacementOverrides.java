package io.github.dualmap.gateway;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.Reason;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.RoutingRequest;
import org.jspecify.annotations.Nullable;

/**
 * The policy the dispatch queues of a {@link ServicePool} call: the configured policy for
 * a request's first placement, with two overrides while a request is being submitted. A
 * repeated placement (connect-failure retry, a breaker that refused, a route's retry
 * filter) gets a choice that avoids the instances already tried and does not record the
 * request in the hot-prefix table again, so each request counts once in the hot-prefix
 * statistics. A pinned request (it continues a stored response) goes to the instance that
 * holds that response while it accepts work ({@link Reason#PINNED}).
 */
final class PlacementOverrides implements RoutingPolicy {

	private final RoutingPolicy delegate;

	private final BiFunction<RoutingRequest, Set<String>, @Nullable Decision> alternative;

	// Request id -> instances to avoid, present only while that request is submitted:
	// the queues call choose synchronously from submit.
	private final Map<String, Set<String>> repeats = new ConcurrentHashMap<>();

	// Request id -> the instance it must go to, likewise only while it is submitted.
	private final Map<String, String> pins = new ConcurrentHashMap<>();

	PlacementOverrides(RoutingPolicy delegate,
			BiFunction<RoutingRequest, Set<String>, @Nullable Decision> alternative) {
		this.delegate = delegate;
		this.alternative = alternative;
	}

	/** Marks {@code requestId} as repeated until {@link #forget}. */
	void repeat(String requestId, Set<String> excluded) {
		this.repeats.put(requestId, Set.copyOf(excluded));
	}

	/** Sends {@code requestId} to {@code instanceId} until {@link #forget}. */
	void pin(String requestId, String instanceId) {
		this.pins.put(requestId, instanceId);
	}

	void forget(String requestId) {
		this.repeats.remove(requestId);
		this.pins.remove(requestId);
	}

	@Override
	public String name() {
		return this.delegate.name();
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		String pinned = this.pins.get(request.id());
		InstanceState holder = pinned == null ? null : pool.instance(pinned);
		if (holder != null && holder.acceptsNewWork()) {
			return Decision.of(holder.id(), Reason.PINNED, request);
		}
		Set<String> excluded = this.repeats.get(request.id());
		return excluded == null ? this.delegate.choose(request, pool) : this.alternative.apply(request, excluded);
	}

	@Override
	public void onDispatched(RoutingRequest request, Decision decision, InstancePool pool) {
		this.delegate.onDispatched(request, decision, pool);
	}

	@Override
	public void onFinished(RoutingRequest request, String instanceId, InstancePool pool) {
		this.delegate.onFinished(request, instanceId, pool);
	}

	@Override
	public void onMembershipChanged(InstancePool pool) {
		this.delegate.onMembershipChanged(pool);
	}

	@Override
	public String toString() {
		return "PlacementOverrides[" + this.delegate + "]";
	}

}

package io.github.dualmap.core;

import org.jspecify.annotations.Nullable;

/**
 * Chooses the instance for a request. DualMap and every baseline implement this, so the
 * gateway and the simulator run the same objects. A policy may keep learned state (an
 * approximate prefix tree, a round-robin cursor); it must be safe for concurrent calls.
 */
public interface RoutingPolicy {

	/** The name used in {@code dualmap.policy} and in simulator output. */
	String name();

	/**
	 * Chooses among the instances of {@code pool} that
	 * {@link InstanceState#acceptsNewWork()}. Returns {@code null} only when no instance
	 * accepts work.
	 */
	@Nullable Decision choose(RoutingRequest request, InstancePool pool);

	/** Called once the request was dispatched to {@code decision.instanceId()}. */
	default void onDispatched(RoutingRequest request, Decision decision, InstancePool pool) {
	}

	/** Called when the request is finished (success, error or cancel), exactly once. */
	default void onFinished(RoutingRequest request, String instanceId, InstancePool pool) {
	}

	/** Called after the pool's membership changed. */
	default void onMembershipChanged(InstancePool pool) {
	}

}

package io.github.dualmap.core;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A {@link RoutingPolicy} that forwards every call to another one; a decorator overrides
 * only what it changes (as Guava's {@code Forwarding*} classes do). The gateway's
 * pin-and-retry policy and the simulator's timing of decisions are such decorators.
 */
public abstract class ForwardingRoutingPolicy implements RoutingPolicy {

	private final RoutingPolicy delegate;

	protected ForwardingRoutingPolicy(RoutingPolicy delegate) {
		this.delegate = Objects.requireNonNull(delegate, "delegate");
	}

	/** The policy every call not overridden goes to. */
	protected final RoutingPolicy delegate() {
		return this.delegate;
	}

	@Override
	public String name() {
		return this.delegate.name();
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		return this.delegate.choose(request, pool);
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

}

package io.github.dualmap.gateway;

import java.util.Set;
import java.util.function.BiFunction;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.ForwardingRoutingPolicy;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.Reason;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.RoutingRequest;
import org.jspecify.annotations.Nullable;

/**
 * The policy the dispatch queues of a {@link ServicePool} call: the configured policy for
 * a request's first placement, with the two overrides its {@link RoutingRequest} may
 * carry. A request placed again ({@link RoutingRequest#retry()}: connect-failure retry, a
 * breaker that refused, a route's retry filter; or one with instances to
 * {@link RoutingRequest#avoid()}) gets a choice that avoids the instances already tried
 * and does not record the request in the hot-prefix table again, so each request counts
 * once in the hot-prefix statistics. A pinned request (it continues a stored response,
 * {@link RoutingRequest#livePin()}) goes to the instance that holds that response while
 * it accepts work ({@link Reason#PINNED}).
 */
final class PinAndRetryPolicy extends ForwardingRoutingPolicy {

	private final BiFunction<RoutingRequest, Set<String>, @Nullable Decision> alternative;

	PinAndRetryPolicy(RoutingPolicy delegate, BiFunction<RoutingRequest, Set<String>, @Nullable Decision> alternative) {
		super(delegate);
		this.alternative = alternative;
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		String pinned = request.livePin();
		InstanceState holder = pinned == null ? null : pool.instance(pinned);
		if (holder != null && holder.acceptsNewWork()) {
			return Decision.of(holder.id(), Reason.PINNED, request);
		}
		return request.retry() || !request.avoid().isEmpty() ? this.alternative.apply(request, request.avoid())
				: delegate().choose(request, pool);
	}

	@Override
	public String toString() {
		return "PinAndRetryPolicy[" + delegate() + "]";
	}

}

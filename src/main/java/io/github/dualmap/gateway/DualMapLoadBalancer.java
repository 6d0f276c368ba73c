package io.github.dualmap.gateway;

import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.github.dualmap.core.RoutingRequest;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.EmptyResponse;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.NoopServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

/**
 * The load balancer of one DualMap service: refreshes the pool's membership from the
 * {@link ServiceInstanceListSupplier}, asks the policy for an instance with the
 * {@link RoutingRequest} the body filter left in the exchange attributes, dispatches, and
 * leaves the {@link RoutedAttempt} in the attributes for the accounting filter.
 */
public class DualMapLoadBalancer implements ReactorServiceInstanceLoadBalancer {

	private final String serviceId;

	private final ObjectProvider<ServiceInstanceListSupplier> suppliers;

	private final ServicePool service;

	public DualMapLoadBalancer(String serviceId, ObjectProvider<ServiceInstanceListSupplier> suppliers,
			DualMapRegistry registry) {
		ServicePool pool = registry.pool(serviceId);
		if (pool == null) {
			throw new IllegalArgumentException(
					"service '" + serviceId + "' is not in dualmap.services " + registry.pools().keySet());
		}
		this.serviceId = serviceId;
		this.suppliers = suppliers;
		this.service = pool;
	}

	@Override
	@SuppressWarnings("rawtypes")
	public Mono<Response<ServiceInstance>> choose(Request request) {
		ServiceInstanceListSupplier supplier = this.suppliers.getIfAvailable(NoopServiceInstanceListSupplier::new);
		Map<String, Object> attributes = attributes(request);
		return supplier.get(request).next().map(instances -> {
			this.service.updateMembership(instances);
			return select(attributes);
		});
	}

	private Response<ServiceInstance> select(Map<String, Object> attributes) {
		Object routing = attributes.get(DualMapExchangeAttributes.ROUTING_REQUEST_ATTR);
		// A route that did not go through the body filter is routed by load alone.
		RoutingRequest request = routing instanceof RoutingRequest r ? r
				: new RoutingRequest(UUID.randomUUID().toString(), null,
						this.service.pool().settings().defaultSloNanos(), this.service.pool().now());
		Object excluded = attributes.get(DualMapExchangeAttributes.EXCLUDED_INSTANCES_ATTR);
		@SuppressWarnings("unchecked")
		Set<String> avoid = excluded instanceof Set<?> s ? (Set<String>) s : Set.of();
		RoutedAttempt attempt = this.service.choose(request, avoid);
		ServiceInstance instance = attempt == null ? null : this.service.serviceInstance(attempt.instanceId());
		if (attempt == null || instance == null) {
			if (attempt != null) {
				// The instance left between the decision and the lookup: give the slot
				// back.
				attempt.cancel();
			}
			return new EmptyResponse();
		}
		RoutedAttempt previous = (RoutedAttempt) attributes.put(DualMapExchangeAttributes.ATTEMPT_ATTR, attempt);
		if (previous != null) {
			// A retry filter of the route chose again without telling us how the last try
			// ended; it ended badly.
			previous.fail(new IllegalStateException("retried by the route"));
		}
		return new DefaultResponse(instance);
	}

	@SuppressWarnings("rawtypes")
	private static Map<String, Object> attributes(Request request) {
		if (request.getContext() instanceof RequestDataContext context && context.getClientRequest() != null
				&& context.getClientRequest().getAttributes() != null) {
			return context.getClientRequest().getAttributes();
		}
		return new java.util.HashMap<>();
	}

}

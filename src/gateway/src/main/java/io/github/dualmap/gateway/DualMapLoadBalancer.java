package io.github.dualmap.gateway;

import java.util.HashMap;
import java.util.Map;

import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.prompt.ParsedRequest;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.NoopServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

/**
 * The load balancer of one DualMap service: refreshes the pool's membership from the
 * {@link ServiceInstanceListSupplier}, submits the {@link RoutingRequest} the body filter
 * left in the exchange attributes to the pool's dispatch queues, and completes when the
 * request is released to its instance, leaving the {@link RoutedAttempt} in the
 * attributes for the accounting filter. A rejected request fails the {@code Mono} with a
 * {@link DispatchRejectedException}, which {@link ConnectFailoverFilter} turns into a 429
 * or 503; a subscriber that cancels (client gone) takes the request out of its queue.
 */
public class DualMapLoadBalancer implements ReactorServiceInstanceLoadBalancer {

	/** Name of the observation of a request's dispatch (a span, and a timer). */
	public static final String OBSERVATION = "dualmap.dispatch";

	private final ObjectProvider<ServiceInstanceListSupplier> suppliers;

	private final ServicePool service;

	private final ObservationRegistry observations;

	public DualMapLoadBalancer(String serviceId, ObjectProvider<ServiceInstanceListSupplier> suppliers,
			DualMapRegistry registry) {
		this(serviceId, suppliers, registry, ObservationRegistry.NOOP);
	}

	/**
	 * @param observations where the {@value #OBSERVATION} observation of each choice goes
	 */
	public DualMapLoadBalancer(String serviceId, ObjectProvider<ServiceInstanceListSupplier> suppliers,
			DualMapRegistry registry, ObservationRegistry observations) {
		ServicePool service = registry.service(serviceId);
		if (service == null) {
			throw new IllegalArgumentException(
					"service '" + serviceId + "' is not in dualmap.services " + registry.services().keySet());
		}
		this.suppliers = suppliers;
		this.service = service;
		this.observations = observations;
	}

	@Override
	@SuppressWarnings("rawtypes")
	public Mono<Response<ServiceInstance>> choose(Request request) {
		ServiceInstanceListSupplier supplier = this.suppliers.getIfAvailable(NoopServiceInstanceListSupplier::new);
		Map<String, Object> attributes = attributes(request);
		Mono<Response<ServiceInstance>> chosen = supplier.get(request).next().flatMap(instances -> {
			this.service.updateMembership(instances);
			return submit(attributes);
		});
		return this.observations.isNoop() ? chosen : observed(chosen, attributes);
	}

	/**
	 * The choice as an observation, a child of the request's server observation: from the
	 * load balancer's call to the release to an instance (the decision and the wait in
	 * the dispatch queue), with the service, the outcome ({@code released},
	 * {@code rejected}, {@code error}, {@code cancelled}: the client left while queued)
	 * and the decision's reason ({@code none} unless released) as low-cardinality keys
	 * (tags of its timer), the instance and request id as high-cardinality ones (span
	 * attributes only).
	 */
	private Mono<Response<ServiceInstance>> observed(Mono<Response<ServiceInstance>> chosen,
			Map<String, Object> attributes) {
		return Mono.deferContextual(context -> {
			Observation observation = Observation.createNotStarted(OBSERVATION, this.observations)
				.contextualName("dualmap dispatch")
				.parentObservation(context.getOrDefault(ObservationThreadLocalAccessor.KEY, null))
				.lowCardinalityKeyValue("pool", this.service.serviceId())
				.start();
			String[] outcome = { "cancelled", "none" };
			return chosen.doOnNext(response -> {
				outcome[0] = "released";
				DualMapExchange state = DualMapExchange.in(attributes);
				RoutedAttempt attempt = state.attempt();
				if (attempt != null) {
					outcome[1] = attempt.decision().reason().value();
					String id = state.requestId();
					observation.highCardinalityKeyValue("instance.id", attempt.instanceId())
						.highCardinalityKeyValue("request.id", id != null ? id : attempt.request().id());
				}
			}).doOnError(ex -> {
				outcome[0] = ex instanceof DispatchRejectedException ? "rejected" : "error";
				observation.error(ex);
			})
				.doFinally(signal -> observation.lowCardinalityKeyValue("outcome", outcome[0])
					.lowCardinalityKeyValue("reason", outcome[1])
					.stop());
		});
	}

	private Mono<Response<ServiceInstance>> submit(Map<String, Object> attributes) {
		DualMapExchange state = DualMapExchange.in(attributes);
		RoutingRequest routing = state.routingRequest();
		// A route that did not go through the body filter is routed by load alone.
		RoutingRequest request = routing != null ? routing : new RoutingRequest(RequestIds.next(), null,
				this.service.instancePool().settings().defaultSloNanos(), this.service.instancePool().now());
		ParsedRequest parsed = state.parsedRequest();
		boolean streaming = parsed != null && parsed.stream();
		boolean repeated = state.markPlaced();
		// A try after a failed one continues the queue wait of the tries before it.
		long waited = repeated ? state.queueWaitNanos() : 0;
		return this.service
			.submit(request.placed(state.excludedInstances(), state.pinnedInstance(), repeated), streaming, waited)
			.map(attempt -> {
				state.queueWaitNanos(attempt.queueWaitNanos());
				String sloClass = state.sloClass();
				if (sloClass != null) {
					attempt.sloClass(sloClass);
				}
				Sinks.Empty<Void> abandonment = state.abandonment();
				if (abandonment != null) {
					attempt.whenAbandoned(abandonment);
				}
				RoutedAttempt previous = state.attempt(attempt);
				if (previous != null && previous != attempt) {
					// A retry filter of the route chose again without telling us how the
					// last
					// try ended; it ended badly.
					previous.fail(new IllegalStateException("retried by the route"));
				}
				ServiceInstance instance = attempt.serviceInstance();
				return instance != null ? new DefaultResponse(instance)
						: new DefaultResponse(this.service.serviceInstance(attempt.instanceId()));
			});
	}

	@SuppressWarnings("rawtypes")
	private static Map<String, Object> attributes(Request request) {
		if (request.getContext() instanceof RequestDataContext context && context.getClientRequest() != null
				&& context.getClientRequest().getAttributes() != null) {
			return context.getClientRequest().getAttributes();
		}
		return new HashMap<>();
	}

}

package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.Reason;
import io.github.dualmap.core.RoutingPolicies;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.util.LinkedMultiValueMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The DualMap load balancer without Spring: membership from the supplier, decisions from
 * the routing request attribute, exclusion, breakers and accounting on every ending.
 */
class DualMapLoadBalancerTests {

	private final PrefixHasher hasher = PrefixHasher.ofDefaults();

	private final DualMapRegistry registry = DualMapRegistry.builder()
		.services("llm")
		.breakers(CircuitBreakerConfig.custom().minimumNumberOfCalls(2).slidingWindowSize(2).build())
		.build();

	private List<ServiceInstance> instances = List.of(instance("a", 1), instance("b", 2), instance("c", 3));

	private final DualMapLoadBalancer balancer = new DualMapLoadBalancer("llm", supplier(), this.registry);

	private static ServiceInstance instance(String id, int n) {
		return new DefaultServiceInstance(id, "llm", "10.0.0." + n, 8000, false, Map.of());
	}

	private ObjectProvider<ServiceInstanceListSupplier> supplier() {
		ServiceInstanceListSupplier supplier = new ServiceInstanceListSupplier() {
			@Override
			public String getServiceId() {
				return "llm";
			}

			@Override
			public Flux<List<ServiceInstance>> get() {
				return Flux.defer(() -> Flux.just(DualMapLoadBalancerTests.this.instances));
			}
		};
		return new ObjectProvider<>() {
			@Override
			public ServiceInstanceListSupplier getObject() {
				return supplier;
			}
		};
	}

	private Map<String, Object> routed(String prompt) {
		Map<String, Object> attributes = new HashMap<>();
		DualMapExchange.in(attributes)
			.routingRequest(new RoutingRequest(prompt, this.hasher.ofText("m", prompt), Duration.ofSeconds(5).toNanos(),
					System.nanoTime()));
		return attributes;
	}

	private Response<ServiceInstance> choose(Map<String, Object> attributes) {
		RequestData data = new RequestData(HttpMethod.POST, java.net.URI.create("http://llm/v1/completions"),
				new HttpHeaders(), new LinkedMultiValueMap<>(), attributes);
		return this.balancer.choose(new DefaultRequest<>(new RequestDataContext(data))).block();
	}

	private static RoutedAttempt attempt(Map<String, Object> attributes) {
		return DualMapExchange.in(attributes).attempt();
	}

	@Test
	void equalPromptsGoToOneInstanceAndAccountingReturnsToZero() {
		String first = null;
		for (int i = 0; i < 5; i++) {
			Map<String, Object> attributes = routed("the same prompt");
			Response<ServiceInstance> response = choose(attributes);
			RoutedAttempt attempt = attempt(attributes);
			assertThat(response.getServer().getInstanceId()).isEqualTo(attempt.instanceId());
			first = first == null ? attempt.instanceId() : first;
			assertThat(attempt.instanceId()).isEqualTo(first);
			assertThat(attempt.decision().reason()).isEqualTo(Reason.AFFINITY);
			// The failure comes last: two failures in this breaker's window would open
			// it.
			switch (i) {
				case 1 -> attempt.cancel();
				case 4 -> attempt.fail(new java.net.ConnectException("refused"));
				default -> attempt.complete(HttpStatus.OK);
			}
			// Every ending may be reported more than once.
			attempt.cancel();
			attempt.complete(HttpStatus.OK);
		}
		assertThat(this.registry.service("llm").instancePool().instances()).allSatisfy(s -> {
			assertThat(s.inFlight()).isZero();
			assertThat(s.prefillTokens()).isZero();
		});
	}

	@Test
	void excludedInstancesAreAvoidedForThatRequestOnly() {
		Map<String, Object> attributes = routed("prompt x");
		choose(attributes);
		RoutedAttempt first = attempt(attributes);
		first.fail(new java.net.ConnectException("refused"));
		Map<String, Object> retry = routed("prompt x");
		DualMapExchange.in(retry).excludedInstances().add(first.instanceId());
		choose(retry);
		assertThat(attempt(retry).instanceId()).isNotEqualTo(first.instanceId());
		assertThat(attempt(retry).decision().reason()).isEqualTo(Reason.FALLBACK);
		attempt(retry).complete(HttpStatus.OK);
		Map<String, Object> later = routed("prompt x");
		choose(later);
		assertThat(attempt(later).instanceId()).isEqualTo(first.instanceId());
	}

	@Test
	void anOpenBreakerTakesTheInstanceOutUntilItCloses() {
		Map<String, Object> attributes = routed("prompt y");
		choose(attributes);
		String home = attempt(attributes).instanceId();
		attempt(attributes).complete(HttpStatus.BAD_GATEWAY);
		Map<String, Object> second = routed("prompt y");
		choose(second);
		attempt(second).complete(HttpStatus.INTERNAL_SERVER_ERROR);
		CircuitBreaker breaker = this.registry.service("llm").breakers().breaker(home);
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(this.registry.service("llm").instancePool().instance(home).healthy()).isFalse();
		for (int i = 0; i < 5; i++) {
			Map<String, Object> next = routed("prompt y");
			choose(next);
			assertThat(attempt(next).instanceId()).isNotEqualTo(home);
			attempt(next).complete(HttpStatus.OK);
		}
		breaker.transitionToClosedState();
		assertThat(this.registry.service("llm").instancePool().instance(home).healthy()).isTrue();
	}

	@Test
	void aRequestWithoutRoutingAttributeIsRoutedByLoad() {
		Map<String, Object> attributes = new HashMap<>();
		Response<ServiceInstance> response = choose(attributes);
		assertThat(response.hasServer()).isTrue();
		assertThat(attempt(attributes).decision().reason()).isEqualTo(Reason.LOAD);
		attempt(attributes).complete(HttpStatus.OK);
	}

	@Test
	void membershipFollowsTheSupplierAndNoInstanceMeansNoServer() {
		choose(routed("p"));
		assertThat(this.registry.service("llm").instancePool().size()).isEqualTo(3);
		this.instances = List.of(instance("a", 1), instance("d", 4));
		choose(routed("p"));
		assertThat(this.registry.service("llm").instancePool().instances()).extracting(s -> s.id())
			.containsExactly("a", "d");
		this.instances = List.of();
		assertThatThrownBy(() -> choose(routed("p"))).isInstanceOfSatisfying(DispatchRejectedException.class, ex -> {
			assertThat(ex.rejection().status()).isEqualTo(503);
			assertThat(ex.code()).isEqualTo(DispatchRejectedException.NO_INSTANCE_AVAILABLE);
			assertThat(ex.rejection().retryAfterSeconds()).isPositive();
		});
	}

	@Test
	void aRetryOfTheSameExchangeIsPlacedWithoutCountingTheRequestAgain() {
		AtomicInteger choices = new AtomicInteger();
		DualMapRegistry counted = DualMapRegistry.builder().services("llm").policies(name -> {
			RoutingPolicy real = RoutingPolicies.create(name, SchedulerSettings.ofDefaults());
			return new RoutingPolicy() {
				@Override
				public String name() {
					return real.name();
				}

				@Override
				public Decision choose(RoutingRequest request, InstancePool pool) {
					// Only the configured policy records the request in the
					// hot-prefix table.
					choices.incrementAndGet();
					return real.choose(request, pool);
				}
			};
		}).build();
		DualMapLoadBalancer lb = new DualMapLoadBalancer("llm", supplier(), counted);
		Map<String, Object> attributes = routed("retried prompt");
		RequestData data = new RequestData(HttpMethod.POST, java.net.URI.create("http://llm/v1/completions"),
				new HttpHeaders(), new LinkedMultiValueMap<>(), attributes);
		lb.choose(new DefaultRequest<>(new RequestDataContext(data))).block();
		RoutedAttempt first = attempt(attributes);
		first.fail(new java.net.ConnectException("refused"));
		DualMapExchange state = DualMapExchange.in(attributes);
		state.clearAttempt();
		state.excludedInstances().add(first.instanceId());
		lb.choose(new DefaultRequest<>(new RequestDataContext(data))).block();
		RoutedAttempt second = attempt(attributes);
		assertThat(second.instanceId()).isNotEqualTo(first.instanceId());
		assertThat(second.decision().reason()).isEqualTo(Reason.FALLBACK);
		assertThat(choices).hasValue(1);
		// A route's own retry filter chooses again without excluding: still one count.
		second.complete(HttpStatus.OK);
		state.excludedInstances().clear();
		lb.choose(new DefaultRequest<>(new RequestDataContext(data))).block();
		assertThat(choices).hasValue(1);
		attempt(attributes).complete(HttpStatus.OK);
		// Each try records the queue wait so far; a try after a failure starts from it.
		assertThat(state.queueWaitNanos()).isEqualTo(attempt(attributes).queueWaitNanos());
		long earlier = Duration.ofSeconds(7).toNanos();
		state.queueWaitNanos(earlier);
		lb.choose(new DefaultRequest<>(new RequestDataContext(data))).block();
		assertThat(attempt(attributes).queueWaitNanos()).isGreaterThanOrEqualTo(earlier);
		assertThat(state.queueWaitNanos()).isGreaterThanOrEqualTo(earlier);
		attempt(attributes).complete(HttpStatus.OK);
		assertThat(counted.service("llm").instancePool().instances())
			.allSatisfy(s -> assertThat(s.inFlight()).isZero());
	}

}

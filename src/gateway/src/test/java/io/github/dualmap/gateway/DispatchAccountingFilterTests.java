package io.github.dualmap.gateway;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.RoutingRequest;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.channel.AbortedException;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The accounting filter without Spring: routing headers on or off, and the attempt ended
 * exactly once whatever way the exchange ends.
 */
class DispatchAccountingFilterTests {

	private static final Duration WAIT = Duration.ofSeconds(5);

	private final DualMapRegistry registry = DualMapRegistry.builder().services("llm").build();

	private final ServicePool service = pool(this.registry);

	private static ServicePool pool(DualMapRegistry registry) {
		ServicePool service = registry.service("llm");
		List<ServiceInstance> members = List.of(
				new DefaultServiceInstance("a", "llm", "10.0.0.1", 8000, false, Map.of()),
				new DefaultServiceInstance("b", "llm", "10.0.0.2", 8000, false, Map.of()),
				new DefaultServiceInstance("c", "llm", "10.0.0.3", 8000, false, Map.of()));
		service.updateMembership(members);
		return service;
	}

	private MockServerWebExchange routedExchange() {
		MockServerWebExchange exchange = MockServerWebExchange
			.from(MockServerHttpRequest.post("/v1/completions").build());
		Route route = Route.async().id("llm").uri(URI.create("lb://llm")).predicate(e -> true).build();
		exchange.getAttributes().put(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR, route);
		RoutingRequest request = new RoutingRequest("r1", PrefixHasher.ofDefaults().ofText("m", "hello ".repeat(100)),
				Duration.ofSeconds(5).toNanos(), System.nanoTime());
		RoutedAttempt attempt = this.service.submit(request, true).block(WAIT);
		DualMapExchange.of(exchange).attempt(attempt);
		return exchange;
	}

	private static GatewayFilterChain writing(String body) {
		return exchange -> {
			exchange.getResponse().setStatusCode(HttpStatus.OK);
			return exchange.getResponse()
				.writeWith(Mono.just(DefaultDataBufferFactory.sharedInstance.wrap(body.getBytes())));
		};
	}

	private static GatewayFilterChain answering(HttpStatus status, String body) {
		return exchange -> {
			exchange.getResponse().setStatusCode(status);
			// Slower than the model's base TTFT, or the model would ignore it anyway.
			return exchange.getResponse()
				.writeWith(Mono.delay(Duration.ofMillis(60))
					.map(tick -> DefaultDataBufferFactory.sharedInstance.wrap(body.getBytes())));
		};
	}

	/**
	 * The filter ends the attempt in doFinally, which runs just after block() returns.
	 */
	private static void awaitEnd(MockServerWebExchange exchange) {
		RoutedAttempt attempt = DualMapExchange.of(exchange).attempt();
		Awaitility.await().atMost(WAIT).until(attempt::isEnded);
	}

	private List<Long> firstTokens() {
		List<Long> ttfts = new CopyOnWriteArrayList<>();
		this.registry.addListener(new DualMapListener() {
			@Override
			public void onFirstToken(String service, String instanceId, long ttftNanos, long sloTtftNanos,
					String sloClass) {
				ttfts.add(ttftNanos);
			}
		});
		return ttfts;
	}

	@Test
	void aSuccessfulAnswersFirstByteIsItsFirstToken() {
		List<Long> ttfts = firstTokens();
		MockServerWebExchange exchange = routedExchange();
		new DispatchAccountingFilter(this.registry, true).filter(exchange, answering(HttpStatus.OK, "data: x\n\n"))
			.block(WAIT);
		assertThat(ttfts).hasSize(1);
	}

	@Test
	void anErrorAnswerIsNoFirstTokenAndTeachesTheTtftModelNothing() {
		List<Long> ttfts = firstTokens();
		double before = this.service.instancePool().estimator().nanosPerToken();
		for (HttpStatus status : List.of(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND, HttpStatus.UNAUTHORIZED,
				HttpStatus.INTERNAL_SERVER_ERROR)) {
			MockServerWebExchange exchange = routedExchange();
			new DispatchAccountingFilter(this.registry, true)
				.filter(exchange, answering(status, "{\"error\":{\"message\":\"no\"}}"))
				.block(WAIT);
			awaitEnd(exchange);
		}
		// Neither a TTFT nor an SLO outcome, and the model keeps its rate: an error
		// answered in a millisecond says nothing about how fast this instance prefills.
		assertThat(ttfts).isEmpty();
		assertThat(this.service.instancePool().estimator().nanosPerToken()).isEqualTo(before);
		assertThat(this.service.instancePool().instances()).allSatisfy(s -> {
			assertThat(s.inFlight()).isZero();
			assertThat(s.prefillRequests()).isZero();
		});
	}

	@Test
	void aClientGoneWhileItsAnswerIsWrittenIsNoFailureOfTheInstance() {
		// Reactor Netty reports a write to a client connection that closed as an
		// AbortedException error, not as a cancel: a burst of clients leaving opened a
		// healthy instance's breaker.
		for (int i = 0; i < 150; i++) {
			MockServerWebExchange exchange = routedExchange();
			GatewayFilterChain leaving = e -> {
				e.getResponse().setStatusCode(HttpStatus.OK);
				return e.getResponse()
					.writeWith(Mono.just(DefaultDataBufferFactory.sharedInstance.wrap("data: x\n\n".getBytes())))
					.then(Mono.error(new AbortedException("Connection has been closed")));
			};
			new DispatchAccountingFilter(this.registry, true).filter(exchange, leaving).onErrorComplete().block(WAIT);
			awaitEnd(exchange);
		}
		assertThat(this.service.instancePool().instances()).allSatisfy(s -> {
			CircuitBreaker breaker = this.service.breakers().breaker(s.id());
			assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isZero();
			assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
			assertThat(s.inFlight()).isZero();
		});
	}

	@Test
	void routingHeadersAreAddedWhenEnabled() {
		MockServerWebExchange exchange = routedExchange();
		new DispatchAccountingFilter(this.registry, true).filter(exchange, writing("data: x\n\n")).block(WAIT);
		RoutedAttempt attempt = DualMapExchange.of(exchange).attempt();
		assertThat(exchange.getResponse().getHeaders().getFirst(DispatchAccountingFilter.INSTANCE_HEADER))
			.isEqualTo(attempt.instanceId());
		assertThat(exchange.getResponse().getHeaders().getFirst(DispatchAccountingFilter.REASON_HEADER))
			.isEqualTo(attempt.decision().reason().value());
	}

	@Test
	void routingHeadersCanBeSwitchedOff() {
		MockServerWebExchange exchange = routedExchange();
		new DispatchAccountingFilter(this.registry, false).filter(exchange, writing("data: x\n\n")).block(WAIT);
		assertThat(exchange.getResponse().getHeaders().containsHeader(DispatchAccountingFilter.INSTANCE_HEADER))
			.isFalse();
		assertThat(exchange.getResponse().getHeaders().containsHeader(DispatchAccountingFilter.REASON_HEADER))
			.isFalse();
		// Accounting still runs: the request is over and nothing stays in flight.
		assertThat(this.service.instancePool().instances()).allSatisfy(s -> assertThat(s.inFlight()).isZero());
	}

}

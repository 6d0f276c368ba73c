package io.github.dualmap.gateway;

import java.net.URI;
import java.time.Duration;
import java.util.List;

import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.Rejection;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.NotFoundException;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The failover filter's answers when nothing could be sent, without Spring: both ways a
 * request finds no instance give the same OpenAI error.
 */
class ConnectFailoverFilterTests {

	private static final Duration WAIT = Duration.ofSeconds(5);

	private final DualMapRegistry registry = DualMapRegistry.builder().services("llm").build();

	private MockServerWebExchange routedExchange() {
		MockServerWebExchange exchange = MockServerWebExchange
			.from(MockServerHttpRequest.post("/v1/completions").build());
		Route route = Route.async().id("llm").uri(URI.create("lb://llm")).predicate(e -> true).build();
		exchange.getAttributes().put(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR, route);
		return exchange;
	}

	private String answer(Throwable failure) {
		MockServerWebExchange exchange = routedExchange();
		new ConnectFailoverFilter(this.registry, List.of()).filter(exchange, e -> Mono.error(failure)).block(WAIT);
		assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
		assertThat(exchange.getResponse().getHeaders().getFirst("Retry-After"))
			.isEqualTo(String.valueOf(QueueSettings.ofDefaults().unavailableRetryAfterSeconds()));
		return exchange.getResponse().getBodyAsString().block(WAIT);
	}

	@Test
	void loadBalancerWithoutInstanceAnswersLikeTheQueues() {
		// Spring Cloud Gateway's own "no instance" (NotFoundException) and the queues'
		// rejection carry the same type and code, so clients handle one error.
		String notFound = answer(NotFoundException.create(false, "Unable to find instance for llm"));
		String rejected = answer(new DispatchRejectedException(
				new Rejection(Rejection.SERVICE_UNAVAILABLE, "no instance of 'llm' accepts requests", 5),
				DispatchRejectedException.NO_INSTANCE_AVAILABLE));
		assertThat(notFound).contains("\"type\":\"service_unavailable\"")
			.contains("\"code\":\"no_instance_available\"")
			.contains("no instance of 'llm' is available");
		assertThat(rejected).contains("\"type\":\"service_unavailable\"")
			.contains("\"code\":\"no_instance_available\"");
	}

	@Test
	void otherFailuresPassThrough() {
		MockServerWebExchange exchange = routedExchange();
		IllegalStateException boom = new IllegalStateException("boom");
		assertThatThrownBy(
				() -> new ConnectFailoverFilter(this.registry, List.of()).filter(exchange, e -> Mono.error(boom))
					.block(WAIT))
			.isSameAs(boom);
		assertThat(exchange.getResponse().getStatusCode()).isNull();
	}

}

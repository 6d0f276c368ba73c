package io.github.dualmap.gateway;

import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;

/**
 * Answers 413 on any route for a request whose body the {@code Model} predicate found
 * over {@code dualmap.max-body-size} while the gateway chose the route (503 when it was
 * beyond {@code dualmap.max-buffered-size}, 408 when it did not arrive within
 * {@code dualmap.body-read-timeout}): a failing predicate does not stop the gateway from
 * trying the routes after it, and the body may be half read by then. First of all global
 * filters but the request id's.
 */
public class BodyTooLargeFilter implements GlobalFilter, Ordered {

	@Override
	public int getOrder() {
		// Right after the request id, so its answers carry one.
		return RequestIdFilter.ORDER + 1;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		DualMapExchange state = DualMapExchange.find(exchange);
		Throwable refused = state == null ? null : state.bodyRefused();
		Mono<Void> answer = refused == null ? null : OpenAiErrorResponses.refusedBody(exchange, refused);
		return answer == null ? chain.filter(exchange) : answer;
	}

}

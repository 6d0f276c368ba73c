package io.github.dualmap.gateway;

import reactor.core.Exceptions;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

/**
 * Answers the errors the gateway raises before a route is chosen with the OpenAI error
 * body its filters write, ahead of Spring Boot's default error handler (order -1): a body
 * the {@link ModelRoutePredicateFactory Model} predicate read over
 * {@code dualmap.max-body-size} (413, {@code request_too_large}), beyond
 * {@code dualmap.max-buffered-size} (503, {@code gateway_buffers_full}) or past
 * {@code dualmap.body-read-timeout} (408, {@code request_timeout}). Everything else goes
 * on to the next handler.
 */
public class OpenAiErrorWebExceptionHandler implements WebExceptionHandler, Ordered {

	@Override
	public int getOrder() {
		return -2;
	}

	@Override
	public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
		// The gateway delays a predicate's error until no route matched, several in one.
		for (Throwable error : Exceptions.unwrapMultiple(ex)) {
			Mono<Void> answer = OpenAiErrorResponses.refusedBody(exchange, error);
			if (answer != null) {
				return answer;
			}
		}
		return Mono.error(ex);
	}

}

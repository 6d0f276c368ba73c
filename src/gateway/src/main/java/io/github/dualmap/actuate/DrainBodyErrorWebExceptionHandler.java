package io.github.dualmap.actuate;

import java.util.Map;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.Ordered;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.WebExceptionHandler;

/**
 * Answers a drain request ({@code POST /actuator/dualmap/{service}/{instance}}) whose
 * body is no JSON object with the OpenAI-style 400 the drain operation gives for every
 * other bad request, instead of Spring Boot's generic error body. Spring Boot decodes a
 * write operation's body before the operation runs, so
 * {@link DualMapWebEndpointExtension} never sees such a body. Ahead of Boot's default
 * error handler (order -1); every other error goes on to the next handler.
 */
class DrainBodyErrorWebExceptionHandler implements WebExceptionHandler, Ordered {

	private final Supplier<@Nullable String> endpointPath;

	/**
	 * @param endpointPath the path of the {@code dualmap} endpoint within the application
	 * (with the actuator base path), {@code null} while it is not mapped
	 */
	DrainBodyErrorWebExceptionHandler(Supplier<@Nullable String> endpointPath) {
		this.endpointPath = endpointPath;
	}

	@Override
	public int getOrder() {
		return -2;
	}

	@Override
	public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
		String root = this.endpointPath.get();
		if (!(ex instanceof ServerWebInputException) || root == null
				|| !HttpMethod.POST.equals(exchange.getRequest().getMethod()) || exchange.getResponse().isCommitted()
				|| !exchange.getRequest().getPath().pathWithinApplication().value().startsWith(root + "/")) {
			return Mono.error(ex);
		}
		byte[] body = JsonMapper.shared()
			.writeValueAsBytes(Map.of("error",
					DualMapWebEndpointExtension.error(
							DualMapWebEndpointExtension.invalidDraining("is no JSON object with a draining value"),
							"draining", DualMapWebEndpointExtension.INVALID_DRAINING)));
		exchange.getResponse().setStatusCode(HttpStatus.BAD_REQUEST);
		exchange.getResponse().getHeaders().setContentType(MediaType.APPLICATION_JSON);
		return exchange.getResponse().writeWith(Mono.just(exchange.getResponse().bufferFactory().wrap(body)));
	}

}

package io.github.dualmap.gateway;

import io.github.dualmap.prompt.InvalidRequestException;
import io.github.dualmap.prompt.PromptParser;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Reads the body of JSON {@code POST} requests before the gateway picks a route, when a
 * route uses the {@link ModelRoutePredicateFactory Model} predicate: leaves the body and
 * its {@code model} in exchange attributes and replays the body to the chosen route. A
 * body over {@code dualmap.max-body-size} gets 413 here, whatever the route; other
 * requests pass untouched. Runs after security filters (order 0), so unauthenticated
 * requests are refused before their body is read.
 */
public class RequestModelWebFilter implements WebFilter, Ordered {

	private final ModelRoutePredicateFactory predicates;

	private final PromptParser parser;

	private final int maxBodyBytes;

	public RequestModelWebFilter(ModelRoutePredicateFactory predicates, PromptParser parser, int maxBodyBytes) {
		if (maxBodyBytes <= 0) {
			throw new IllegalArgumentException("maxBodyBytes must be > 0 but was " + maxBodyBytes);
		}
		this.predicates = predicates;
		this.parser = parser;
		this.maxBodyBytes = maxBodyBytes;
	}

	@Override
	public int getOrder() {
		return 0;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		ServerHttpRequest request = exchange.getRequest();
		if (!this.predicates.inUse() || !HttpMethod.POST.equals(request.getMethod()) || !json(request)
				|| exchange.getAttributes().containsKey(DualMapExchangeAttributes.REQUEST_BODY_ATTR)) {
			return chain.filter(exchange);
		}
		return RequestBodies.readThen(exchange, this.maxBodyBytes, body -> {
			exchange.getAttributes().put(DualMapExchangeAttributes.REQUEST_BODY_ATTR, body);
			String model = modelOf(request, body);
			if (model != null) {
				exchange.getAttributes().put(DualMapExchangeAttributes.REQUEST_MODEL_ATTR, model);
			}
			return chain.filter(exchange.mutate().request(RequestBodies.replaying(exchange, body)).build());
		});
	}

	private String modelOf(ServerHttpRequest request, byte[] body) {
		try {
			byte[] json = BodyEncodings.decoded(request.getHeaders(), body, this.maxBodyBytes);
			return json == null ? null : this.parser.modelOf(json);
		}
		catch (InvalidRequestException | DataBufferLimitException ex) {
			// The route's own filters answer for a body they cannot read.
			return null;
		}
	}

	/** OpenAI requests are JSON; a request without a content type is read as JSON too. */
	private static boolean json(ServerHttpRequest request) {
		MediaType type = request.getHeaders().getContentType();
		return type == null || MediaType.APPLICATION_JSON.isCompatibleWith(type) || type.getSubtype().endsWith("+json");
	}

}

package io.github.dualmap.gateway;

import java.util.List;

import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.headers.HttpHeadersFilter;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * Gives every request on a DualMap route a request id ({@code dualmap.request-id.header},
 * {@code x-request-id}) that follows it to the engine and back to the client: the
 * client's own when it sent one, else a new one (unique across gateway replicas). vLLM
 * takes this header as its request id (its logs, its {@code --enable-request-id-headers}
 * answer), so one id finds a request in the client's logs, the gateway's traces (the
 * {@code dualmap.dispatch} span's {@code request.id}) and the engine's logs. The response
 * carries it whatever answers: the engine, or the gateway itself with an error.
 * <p>
 * Two roles in one bean: the first global filter gives the id (an exchange attribute and
 * the response header), and, as an {@link HttpHeadersFilter}, it adds the header to the
 * request the gateway sends (every try of it), so nothing that replaces the exchange's
 * request on the way (the {@code Model} predicate's cached body) can drop it.
 */
public class RequestIdFilter implements GlobalFilter, HttpHeadersFilter, Ordered {

	/**
	 * First of all global filters, so that every answer on a DualMap route carries the
	 * id, {@link BodyTooLargeFilter}'s refusals included.
	 */
	public static final int ORDER = Ordered.HIGHEST_PRECEDENCE;

	private final DualMapRegistry registry;

	private final String header;

	public RequestIdFilter(DualMapRegistry registry, String header) {
		if (header.isBlank()) {
			throw new IllegalArgumentException("header must not be blank");
		}
		this.registry = registry;
		this.header = header;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		if (this.registry.serviceOf(exchange) == null || DualMapExchange.of(exchange).requestId() != null) {
			return chain.filter(exchange);
		}
		String id = RequestIds.orNew(exchange.getRequest().getHeaders().getFirst(this.header));
		DualMapExchange.of(exchange).requestId(id);
		ServerHttpResponse response = exchange.getResponse();
		response.beforeCommit(() -> {
			// One value, also when the engine echoes the header.
			response.getHeaders().set(this.header, id);
			return Mono.empty();
		});
		return chain.filter(exchange);
	}

	/** The headers sent to the instance: with the id, when the client sent none. */
	@Override
	public HttpHeaders filter(HttpHeaders input, ServerWebExchange exchange) {
		DualMapExchange state = DualMapExchange.find(exchange);
		String id = state == null ? null : state.requestId();
		// A client's copies beyond the first go: the engine gets the one id the client
		// gets back.
		if (id == null || List.of(id).equals(input.get(this.header))) {
			return input;
		}
		HttpHeaders sent = new HttpHeaders();
		sent.putAll(input);
		sent.set(this.header, id);
		return sent;
	}

}

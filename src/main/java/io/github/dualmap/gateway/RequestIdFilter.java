package io.github.dualmap.gateway;

import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.core.Ordered;
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
 */
public class RequestIdFilter implements GlobalFilter, Ordered {

	/**
	 * Just before {@link PromptRoutingFilter}, so its errors carry the id, and after the
	 * gateway's {@code AdaptCachedBodyGlobalFilter}, which replaces the request with the
	 * one the {@code Model} predicate cached (without the header added here).
	 */
	public static final int ORDER = PromptRoutingFilter.ORDER - 1;

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
		if (this.registry.poolOf(exchange) == null
				|| exchange.getAttributes().containsKey(DualMapExchangeAttributes.REQUEST_ID_ATTR)) {
			return chain.filter(exchange);
		}
		String sent = exchange.getRequest().getHeaders().getFirst(this.header);
		boolean made = sent == null || sent.isBlank();
		String id = made ? RequestIds.next() : sent;
		exchange.getAttributes().put(DualMapExchangeAttributes.REQUEST_ID_ATTR, id);
		ServerHttpResponse response = exchange.getResponse();
		response.beforeCommit(() -> {
			// One value, also when the engine echoes the header.
			response.getHeaders().set(this.header, id);
			return Mono.empty();
		});
		return chain.filter(!made ? exchange
				: exchange.mutate().request(request -> request.headers(h -> h.set(this.header, id))).build());
	}

}

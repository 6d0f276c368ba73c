package io.github.dualmap.gateway;

import java.io.ByteArrayInputStream;

import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.prompt.InvalidRequestException;
import io.github.dualmap.prompt.ParsedRequest;
import io.github.dualmap.prompt.PromptParser;
import io.github.dualmap.prompt.RequestKind;
import io.github.dualmap.tenant.RequestTokens;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;

/**
 * Reads the body of requests on DualMap routes (up to a limit, 413 beyond; a compressed
 * body is read decoded, under the same limit: {@link BodyEncodings}; a body is read as
 * JSON only when its {@code Content-Type} is JSON or absent, and a prompt endpoint's body
 * of another type gets a 415: {@link ContentTypes}), parses the prompt into its block
 * chain, resolves the request's SLO and leaves the {@link RoutingRequest} in an exchange
 * attribute for the load balancer. The backend gets the body byte for byte, as sent,
 * replayed on every subscription, so retries resend it.
 */
public class PromptRoutingFilter implements GlobalFilter, Ordered {

	/**
	 * Before {@code ConnectFailoverFilter}, so a failover reuses the parsed body, and
	 * before the gateway's {@code RouteToRequestUrlFilter} (10000) and load balancer
	 * filter (10150).
	 */
	public static final int ORDER = ReactiveLoadBalancerClientFilter.LOAD_BALANCER_CLIENT_FILTER_ORDER - 400;

	private final DualMapRegistry registry;

	private final PromptParser parser;

	private final SloResolver slos;

	private final BodyLimits limits;

	private final @Nullable StoredResponses stored;

	private final boolean tokenBudgets;

	/** A filter for a gateway without token budgets. */
	public PromptRoutingFilter(DualMapRegistry registry, PromptParser parser, SloResolver slos, int maxBodyBytes) {
		this(registry, parser, slos, BodyLimits.of(maxBodyBytes), null, false);
	}

	/**
	 * @param limits how bodies are read: size, the buffers they are reserved in until
	 * their exchange ends, read timeout
	 * @param stored where the instances that answered stored responses are remembered;
	 * {@code null}: continuations are routed like any request
	 * @param tokenBudgets whether {@link TenantBudgetFilter} follows: only then is the
	 * completion cap of a compressed body read from its decoded form, and the decoded
	 * form of a streamed completion kept for it ({@link DualMapExchange#decodedTokens()},
	 * {@link DualMapExchange#takeDecodedStreamBody()})
	 */
	public PromptRoutingFilter(DualMapRegistry registry, PromptParser parser, SloResolver slos, BodyLimits limits,
			@Nullable StoredResponses stored, boolean tokenBudgets) {
		this.registry = registry;
		this.parser = parser;
		this.slos = slos;
		this.limits = limits;
		this.stored = stored;
		this.tokenBudgets = tokenBudgets;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		ServicePool service = this.registry.serviceOf(exchange);
		if (service == null) {
			return chain.filter(exchange);
		}
		DualMapExchange state = DualMapExchange.of(exchange);
		if (state.routingRequest() != null) {
			return chain.filter(exchange);
		}
		ServerHttpRequest request = exchange.getRequest();
		if (HttpMethod.POST.equals(request.getMethod())
				&& PromptParser.kindOf(request.getPath().value()) != RequestKind.OTHER
				&& !ContentTypes.json(request.getHeaders())) {
			// A prompt is JSON: a body of another type is refused whatever it holds (as
			// OpenAI and vLLM refuse it), not routed as if it were JSON.
			InvalidRequestException unsupported = ContentTypes.unsupported(request.getHeaders(), "application/json");
			return state.requestBody() != null ? invalid(exchange, unsupported)
					: RequestBodies.dropThen(exchange, this.limits, () -> invalid(exchange, unsupported));
		}
		SloResolver.Slo slo;
		try {
			slo = this.slos.resolve(exchange.getRequest().getHeaders(),
					service.instancePool().settings().defaultSloNanos());
			state.sloClass(slo.sloClass());
		}
		catch (InvalidRequestException ex) {
			// Answered without its body: read and dropped first (within the deadline), so
			// the client reads the answer and the connection is not read without end.
			return state.requestBody() != null ? invalid(exchange, ex)
					: RequestBodies.dropThen(exchange, this.limits, () -> invalid(exchange, ex));
		}
		byte[] read = state.requestBody();
		if (read != null) {
			// Read before routing, for a Model predicate.
			return route(exchange, chain, service, read, slo);
		}
		return RequestBodies.readThen(exchange, this.limits, body -> route(exchange, chain, service, body, slo));
	}

	private Mono<Void> route(ServerWebExchange exchange, GatewayFilterChain chain, ServicePool service, byte[] body,
			SloResolver.Slo slo) {
		return BodyEncodings.offloaded(exchange.getRequest().getHeaders(), body, () -> parse(exchange, body))
			.onErrorResume(ex -> refused(exchange, ex).then(Mono.empty()))
			.flatMap(parsed -> route(exchange, chain, service, body, slo, parsed));
	}

	private ParsedRequest parse(ServerWebExchange exchange, byte[] body) {
		ServerHttpRequest request = exchange.getRequest();
		DualMapExchange state = DualMapExchange.of(exchange);
		byte[] decoded = state.takeDecodedBody();
		// Only a JSON body is read: an upload (multipart) or a body of another type
		// on an endpoint other than a prompt's is routed by load, judged by the engine.
		byte[] readable = !HttpMethod.POST.equals(request.getMethod()) || !ContentTypes.json(request.getHeaders())
				? null : decoded != null ? decoded : BodyEncodings.decoded(request.getHeaders(), body,
						this.limits.maxBytes(), this.limits.reserving(exchange));
		if (readable == null) {
			return new ParsedRequest(null, false, null, RequestKind.OTHER);
		}
		RequestTokens decodedTokens = null;
		if (readable != body && this.tokenBudgets) {
			// Decoded within the body limit: its completion cap, for a tenant's estimate.
			decodedTokens = RequestTokens.read(new ByteArrayInputStream(readable));
			state.decodedTokens(decodedTokens);
		}
		String path = request.getPath().value();
		if (PromptParser.kindOf(path) == RequestKind.OTHER) {
			// Scanned, not built into a tree: no working memory to speak of.
			return this.parser.parse(path, readable);
		}
		ParsedRequest parsed = this.limits.whileParsing(exchange, readable.length,
				() -> this.parser.parse(path, readable), () -> this.parser.withoutPrompt(path, readable));
		if (decodedTokens != null && !decodedTokens.usageRequested() && parsed.stream()
				&& (parsed.kind() == RequestKind.CHAT || parsed.kind() == RequestKind.COMPLETION)) {
			// A tenant's stream is asked for its usage: sent decoded
			// (TenantBudgetFilter).
			state.decodedStreamBody(readable);
		}
		return parsed;
	}

	/** The answer to a body that could not be parsed or decoded. */
	private Mono<Void> refused(ServerWebExchange exchange, Throwable ex) {
		if (ex instanceof InvalidRequestException invalid) {
			return invalid(exchange, invalid);
		}
		if (ex instanceof DataBufferLimitException) {
			// Decoded past the limit.
			return OpenAiErrorResponses.tooLarge(exchange, this.limits.maxBytes());
		}
		Mono<Void> answer = OpenAiErrorResponses.refusedBody(exchange, ex);
		return answer != null ? answer : Mono.error(ex);
	}

	private Mono<Void> route(ServerWebExchange exchange, GatewayFilterChain chain, ServicePool service, byte[] body,
			SloResolver.Slo slo, ParsedRequest parsed) {
		ServerHttpRequest request = exchange.getRequest();
		RoutingRequest routing = new RoutingRequest(RequestIds.next(), parsed.blocks(), slo.nanos(),
				service.instancePool().now(), slo.maxWaitNanos(), slo.priority());
		DualMapExchange state = DualMapExchange.of(exchange);
		state.parsedRequest(parsed);
		state.routingRequest(routing);
		String previous = parsed.previousResponseId() != null ? parsed.previousResponseId()
				: PromptParser.responseIdInPath(request.getPath().value());
		String holder = previous == null || this.stored == null ? null
				: this.stored.instanceOf(service.serviceId(), previous);
		if (holder != null) {
			state.pinnedInstance(holder);
		}
		return chain.filter(exchange.mutate().request(RequestBodies.replaying(exchange, body)).build());
	}

	private static Mono<Void> invalid(ServerWebExchange exchange, InvalidRequestException ex) {
		HttpStatus status = HttpStatus.resolve(ex.status());
		return OpenAiErrorResponses.write(exchange, status != null ? status : HttpStatus.BAD_REQUEST, ex.toError());
	}

}

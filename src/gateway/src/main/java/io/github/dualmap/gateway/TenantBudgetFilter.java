package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.List;

import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.Tenant;
import io.github.dualmap.prompt.OpenAiError;
import io.github.dualmap.prompt.ParsedRequest;
import io.github.dualmap.prompt.RequestKind;
import io.github.dualmap.tenant.Admission;
import io.github.dualmap.tenant.RateLimitHeaders;
import io.github.dualmap.tenant.RequestTokens;
import io.github.dualmap.tenant.TenantDirectory;
import io.github.dualmap.tenant.TenantProperties;
import io.github.dualmap.tenant.TenantSettings;
import io.github.dualmap.tenant.TokenBudgets;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * Finds a request's tenant (a header, or a Spring Cloud Gateway {@link KeyResolver}),
 * admits the request against the tenant's token budgets on an estimate (its prompt tokens
 * as the parser counted them plus its completion cap, or
 * {@code dualmap.tenants.default-max-tokens}), answers 429 over budget (in enforce mode)
 * and adds the {@code x-ratelimit-*-tokens} headers to every answer. A stream whose
 * client did not ask for its usage gets {@code stream_options.include_usage} on its way
 * to the engine, so it can be charged what it used ({@link TokenUsageFilter} removes that
 * usage chunk again). Runs after {@link PromptRoutingFilter} has parsed the body and
 * before the request waits for an instance.
 */
public class TenantBudgetFilter implements GlobalFilter, Ordered {

	/** After {@link PromptRoutingFilter}, before {@link ConnectFailoverFilter}. */
	public static final int ORDER = PromptRoutingFilter.ORDER + 50;

	private final DualMapRegistry registry;

	private final TokenBudgets budgets;

	private final String header;

	private final @Nullable KeyResolver keyResolver;

	private final long defaultMaxTokens;

	private final boolean fairness;

	/**
	 * @param header the request header naming the tenant
	 * @param keyResolver resolves the tenant instead of the header, when set
	 * @param defaultMaxTokens completion tokens a request without a cap is admitted for
	 */
	public TenantBudgetFilter(DualMapRegistry registry, TokenBudgets budgets, String header,
			@Nullable KeyResolver keyResolver, long defaultMaxTokens) {
		this(registry, budgets, header, keyResolver, defaultMaxTokens, true);
	}

	/**
	 * @param header the request header naming the tenant
	 * @param keyResolver resolves the tenant instead of the header, when set
	 * @param defaultMaxTokens completion tokens a request without a cap is admitted for
	 * @param fairness whether the request tells the dispatch queues its tenant, so they
	 * share the pool between tenants
	 */
	public TenantBudgetFilter(DualMapRegistry registry, TokenBudgets budgets, String header,
			@Nullable KeyResolver keyResolver, long defaultMaxTokens, boolean fairness) {
		this.fairness = fairness;
		this.registry = registry;
		this.budgets = budgets;
		this.header = header;
		this.keyResolver = keyResolver;
		this.defaultMaxTokens = defaultMaxTokens;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		DualMapExchange state = DualMapExchange.of(exchange);
		ParsedRequest parsed = state.parsedRequest();
		if (parsed == null || !HttpMethod.POST.equals(exchange.getRequest().getMethod())
				|| this.registry.serviceOf(exchange) == null) {
			// Not a request for work (a GET), or a route DualMap does not serve.
			return chain.filter(exchange);
		}
		TokenAccount admitted = state.tokenAccount();
		if (admitted != null) {
			// A retry's second pass: admitted already; the engine gets the same body.
			byte[] sent = admitted.injectedBody();
			return sent == null ? chain.filter(exchange)
					: chain.filter(exchange.mutate().request(withBody(exchange, sent)).build());
		}
		if (this.keyResolver == null && exchange.getRequest().getHeaders().getOrEmpty(this.header).size() > 1) {
			// Which one would count depends on who added which: a proxy in front that
			// appends its value rather than setting it would leave the client's first.
			return OpenAiErrorResponses.write(exchange, HttpStatus.BAD_REQUEST,
					new OpenAiError("tenant header " + this.header + " must be sent once", OpenAiError.INVALID_REQUEST,
							null, "invalid_tenant"));
		}
		return tenant(exchange).flatMap(tenant -> {
			TenantDirectory directory = this.budgets.directory();
			if (!directory.valid(tenant)) {
				return OpenAiErrorResponses.write(exchange, HttpStatus.BAD_REQUEST,
						new OpenAiError("tenant name (" + (this.keyResolver != null ? "key resolver" : this.header)
								+ ") must be 1 to " + directory.maxNameLength() + " letters, digits or . _ : @ -",
								OpenAiError.INVALID_REQUEST, null, "invalid_tenant"));
			}
			state.tenant(tenant);
			return read(exchange, parsed)
				.flatMap(read -> admit(exchange, chain, tenant, parsed, read.tokens(), read.body()));
		});
	}

	private Mono<String> tenant(ServerWebExchange exchange) {
		if (this.keyResolver != null) {
			return this.keyResolver.resolve(exchange).defaultIfEmpty(TenantDirectory.DEFAULT);
		}
		String value = exchange.getRequest().getHeaders().getFirst(this.header);
		return Mono.just(value == null || value.isBlank() ? TenantDirectory.DEFAULT : value.strip());
	}

	/**
	 * The body's completion cap and usage request, read in place (the body replayed from
	 * what {@link PromptRoutingFilter} holds), and a copy of the body only when the
	 * gateway may ask for a stream's usage on the client's behalf. A compressed body
	 * ({@code gzip}, {@code deflate}, {@code zstd}, {@code br}) is not read again: its
	 * cap is what {@link PromptRoutingFilter} read from its decoded form, within the body
	 * limit (the default cap for a coding the gateway does not decode); when it streams
	 * without asking for its usage, its decoded form (kept by
	 * {@link PromptRoutingFilter}) is what gets the usage request, and the engine gets it
	 * decoded.
	 */
	private static Mono<Read> read(ServerWebExchange exchange, ParsedRequest parsed) {
		if (encoded(exchange.getRequest().getHeaders())) {
			DualMapExchange state = DualMapExchange.of(exchange);
			RequestTokens decoded = state.decodedTokens();
			byte[] decodedStream = state.takeDecodedStreamBody();
			return Mono.just(new Read(decoded != null ? decoded : RequestTokens.NONE, decodedStream));
		}
		boolean mayAsk = parsed.stream()
				&& (parsed.kind() == RequestKind.CHAT || parsed.kind() == RequestKind.COMPLETION);
		return DataBufferUtils.join(exchange.getRequest().getBody()).map(buffer -> {
			try {
				int start = buffer.readPosition();
				RequestTokens tokens = RequestTokens.read(buffer.asInputStream());
				byte[] body = null;
				if (mayAsk && !tokens.usageRequested()) {
					// Read again from its start: the parser moved the position.
					buffer.readPosition(start);
					body = new byte[buffer.readableByteCount()];
					buffer.read(body);
				}
				return new Read(tokens, body);
			}
			finally {
				DataBufferUtils.release(buffer);
			}
		}).defaultIfEmpty(new Read(RequestTokens.NONE, null));
	}

	/**
	 * What {@link #read} found; {@code body} when the stream's usage is to be asked for.
	 */
	private record Read(RequestTokens tokens, byte @Nullable [] body) {

	}

	private Mono<Void> admit(ServerWebExchange exchange, GatewayFilterChain chain, String tenant, ParsedRequest parsed,
			RequestTokens tokens, byte @Nullable [] body) {
		long prompt = parsed.blocks() == null ? 0 : parsed.blocks().promptTokens();
		// Embeddings and the like generate nothing; their prompt is charged at the end.
		long completion = parsed.kind() == RequestKind.OTHER ? 0
				: tokens.maxTokens() != null ? tokens.maxTokens() : this.defaultMaxTokens;
		TenantProperties.Cost weights = this.budgets.weights();
		long estimate = (long) Math
			.ceil(prompt * weights.getPromptWeight() + completion * weights.getCompletionWeight());
		return this.budgets.admit(tenant, parsed.model(), estimate).flatMap(admission -> {
			byte[] sent = body != null && admission.served() ? RequestTokens.withUsageRequested(body, tokens) : null;
			DualMapExchange state = DualMapExchange.of(exchange);
			state.tokenAccount(new TokenAccount(admission, parsed.kind(), prompt, completion, sent));
			ServerHttpResponse response = exchange.getResponse();
			response.beforeCommit(() -> {
				headers(response.getHeaders(), admission);
				return Mono.empty();
			});
			if (admission.outcome() == Admission.Outcome.REFUSED) {
				return refused(exchange, admission, estimate);
			}
			RoutingRequest r = state.routingRequest();
			if (this.fairness && admission.served() && r != null && r.tenant() == null) {
				// The dispatch queues share the pool between tenants by weight and band.
				TenantSettings s = this.budgets.directory().settings(tenant);
				int cap = tokens.maxTokens() == null ? 0 : (int) Math.min(Integer.MAX_VALUE, tokens.maxTokens());
				state.routingRequest(r.withTenant(new Tenant(tenant, s.weight(), s.priority()), cap));
			}
			if (admission.outcome() == Admission.Outcome.UNAVAILABLE) {
				return OpenAiErrorResponses.write(exchange, HttpStatus.SERVICE_UNAVAILABLE,
						new OpenAiError("the token budget store is unavailable; try again shortly", "server_error",
								null, "budget_store_unavailable"),
						1);
			}
			return sent == null ? chain.filter(exchange)
					: chain.filter(exchange.mutate().request(withBody(exchange, sent)).build());
		});
	}

	private static boolean encoded(HttpHeaders headers) {
		List<String> codings = headers.getValuesAsList(HttpHeaders.CONTENT_ENCODING);
		return codings.stream().anyMatch(c -> !c.isBlank() && !c.strip().equalsIgnoreCase("identity"));
	}

	/**
	 * {@code exchange}'s request with {@code body}, replayed, and its length; the body is
	 * always sent without a content coding (an encoded one was decoded to add the usage
	 * request).
	 */
	private static ServerHttpRequest withBody(ServerWebExchange exchange, byte[] body) {
		ServerHttpRequest replaying = RequestBodies.replaying(exchange, body);
		HttpHeaders headers = new HttpHeaders();
		headers.putAll(exchange.getRequest().getHeaders());
		headers.remove(HttpHeaders.CONTENT_ENCODING);
		if (headers.getContentLength() >= 0) {
			headers.setContentLength(body.length);
		}
		return new ServerHttpRequestDecorator(replaying) {
			@Override
			public HttpHeaders getHeaders() {
				return headers;
			}
		};
	}

	static void headers(HttpHeaders headers, Admission admission) {
		long limit = admission.limit();
		if (limit < 0) {
			return;
		}
		headers.set(RateLimitHeaders.LIMIT, Long.toString(limit));
		headers.set(RateLimitHeaders.REMAINING, Long.toString(admission.remaining()));
		headers.set(RateLimitHeaders.RESET, RateLimitHeaders.duration(admission.resetMillis()));
	}

	private static Mono<Void> refused(ServerWebExchange exchange, Admission admission, long estimate) {
		long retryMillis = Math.max(1, admission.retryAfterMillis(estimate));
		long retrySeconds = Math.max(1, Duration.ofMillis(retryMillis).plusMillis(999).toSeconds());
		// The budget that refused it, which need not be the one with the least left.
		int line = Math.max(0, admission.refusingLine(estimate));
		String message = "Rate limit reached for tenant '" + admission.tenant() + "'"
				+ (admission.modelLine(line) ? " on model '" + admission.model() + "'" : "") + ": limit "
				+ admission.limit(line) + " tokens, remaining " + admission.remaining(line) + ", requested " + estimate
				+ ". Please try again in " + RateLimitHeaders.duration(retryMillis) + ".";
		return OpenAiErrorResponses.write(exchange, HttpStatus.TOO_MANY_REQUESTS,
				new OpenAiError(message, "tokens", null, "rate_limit_exceeded"), retrySeconds);
	}

}

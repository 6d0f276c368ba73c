package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import io.github.dualmap.tenant.BodyUsageReader;
import io.github.dualmap.tenant.GenAiMeters;
import io.github.dualmap.tenant.StreamUsageReader;
import io.github.dualmap.tenant.TokenBudgets;
import io.github.dualmap.tenant.TokenUsage;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;

/**
 * Charges each admitted request ({@link TokenAccount}) what it used once its exchange
 * ends, whether it completes, fails or its client leaves: the {@code usage} of a
 * non-streamed answer, the final usage chunk of a stream (removed from what the client
 * sees when the gateway asked for it), and, without usage, the prompt estimate plus the
 * output events seen. Records the {@code gen_ai.*} meters of successful answers. Sits
 * outside {@link DispatchAccountingFilter} and the gateway's
 * {@code NettyWriteResponseFilter}, which write the response this filter decorates.
 */
public class TokenUsageFilter implements GlobalFilter, Ordered {

	/** Outside {@link DispatchAccountingFilter}. */
	public static final int ORDER = DispatchAccountingFilter.ORDER - 1;

	private final DualMapRegistry registry;

	private final TokenBudgets budgets;

	private final GenAiMeters meters;

	private final int maxUsageBytes;

	/**
	 * @param maxUsageBytes largest non-streamed body, or streamed event, read for usage
	 */
	public TokenUsageFilter(DualMapRegistry registry, TokenBudgets budgets, GenAiMeters meters, int maxUsageBytes) {
		this.registry = registry;
		this.budgets = budgets;
		this.meters = meters;
		this.maxUsageBytes = maxUsageBytes;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		if (this.registry.serviceOf(exchange) == null) {
			return chain.filter(exchange);
		}
		UsageTap tap = new UsageTap(exchange.getResponse(), exchange, System.nanoTime());
		AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();
		return chain.filter(exchange.mutate().response(tap).build())
			.doOnError(failure::set)
			.doFinally(signal -> tap.end(signal, failure.get()));
	}

	/** Reads the usage of one response while it passes. */
	private final class UsageTap extends ServerHttpResponseDecorator {

		private final ServerWebExchange exchange;

		private final long startNanos;

		private @Nullable TokenAccount account;

		private @Nullable StreamUsageReader stream;

		private @Nullable BodyUsageReader body;

		private boolean started;

		private boolean success;

		private long firstTokenNanos;

		UsageTap(ServerHttpResponse delegate, ServerWebExchange exchange, long startNanos) {
			super(delegate);
			this.exchange = exchange;
			this.startNanos = startNanos;
		}

		@Override
		public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
			return super.writeWith(Flux.from(body).map(this::read).concatWith(Mono.defer(this::rest)));
		}

		@Override
		public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
			return super.writeAndFlushWith(Flux.from(body)
				.map(chunk -> Flux.from(chunk).map(this::read))
				.concatWith(Mono.defer(() -> Mono.just(rest().flux()))));
		}

		private synchronized void start() {
			this.started = true;
			TokenAccount a = DualMapExchange.of(this.exchange).tokenAccount();
			HttpStatusCode status = getStatusCode();
			this.success = status == null || status.is2xxSuccessful();
			if (a == null || !a.admission().served() || !this.success) {
				return;
			}
			this.account = a;
			HttpHeaders headers = getHeaders();
			String coding = headers.getFirst(HttpHeaders.CONTENT_ENCODING);
			if (coding != null && !coding.isBlank() && !coding.equalsIgnoreCase("identity")) {
				// Not read: charged from the estimate.
				return;
			}
			MediaType type = headers.getContentType();
			if (type != null && MediaType.TEXT_EVENT_STREAM.isCompatibleWith(type)) {
				this.stream = new StreamUsageReader(a.usageInjected(), TokenUsageFilter.this.maxUsageBytes);
			}
			else {
				this.body = new BodyUsageReader(TokenUsageFilter.this.maxUsageBytes);
			}
		}

		private synchronized DataBuffer read(DataBuffer buffer) {
			if (!this.started) {
				start();
			}
			StreamUsageReader s = this.stream;
			BodyUsageReader b = this.body;
			if (s == null && b == null) {
				return buffer;
			}
			byte[] bytes = new byte[buffer.readableByteCount()];
			buffer.toByteBuffer(buffer.readPosition(), java.nio.ByteBuffer.wrap(bytes), 0, bytes.length);
			if (b != null) {
				b.accept(bytes);
				return buffer;
			}
			byte[] out = s.accept(bytes);
			if (this.firstTokenNanos == 0 && s.outputEvents() > 0) {
				this.firstTokenNanos = System.nanoTime();
			}
			DataBufferUtils.release(buffer);
			return bufferFactory().wrap(out);
		}

		/** What a stream reader still holds when the body ends. */
		private synchronized Mono<DataBuffer> rest() {
			StreamUsageReader s = this.stream;
			if (s == null) {
				return Mono.empty();
			}
			byte[] rest = s.flush();
			return rest.length == 0 ? Mono.empty() : Mono.just(bufferFactory().wrap(rest));
		}

		synchronized void end(SignalType signal, @Nullable Throwable failure) {
			DualMapExchange state = DualMapExchange.of(this.exchange);
			TokenAccount a = this.account != null ? this.account : state.tokenAccount();
			if (a == null || !a.admission().served() || !a.settle()) {
				return;
			}
			boolean gone = signal == SignalType.CANCEL
					|| (signal == SignalType.ON_ERROR && DispatchAccountingFilter.clientGone(failure));
			RoutedAttempt attempt = state.attempt();
			boolean dispatched = attempt != null;
			StreamUsageReader s = this.stream;
			BodyUsageReader b = this.body;
			TokenUsage reported = s != null ? s.usage() : b != null ? b.usage() : null;
			TokenUsage used;
			if (reported != null) {
				used = reported;
			}
			else if (s != null) {
				// A stream without its usage chunk (cut short, or an engine that sends
				// none): what it showed of its output.
				used = new TokenUsage(a.promptEstimate(), 0, s.outputEvents());
			}
			else if (this.started && this.success && !gone && signal == SignalType.ON_COMPLETE) {
				// A whole answer whose usage could not be read: the estimate stands.
				used = new TokenUsage(a.promptEstimate(), 0, a.completionEstimate());
			}
			else if (gone && dispatched) {
				// Left before any output: the prompt was sent to an engine.
				used = new TokenUsage(a.promptEstimate(), 0, 0);
			}
			else {
				// The engine refused or failed it, or it never left the gateway.
				used = new TokenUsage(0, 0, 0);
			}
			TokenBudgets budgets = TokenUsageFilter.this.budgets;
			budgets.settle(a.admission(), used.cost(budgets.weights()), used);
			if ((reported != null || s != null) && attempt != null) {
				// What it generated, known now: its tenant's fair share is corrected.
				attempt.reportOutput(used.completionTokens());
			}
			if (this.account == null || !this.started) {
				return;
			}
			String tenant = budgets.directory().reported(a.admission().tenant());
			String operation = a.operation(this.exchange.getRequest().getPath().value());
			GenAiMeters m = TokenUsageFilter.this.meters;
			m.tokens(tenant, a.model(), operation, used.promptTokens(), used.completionTokens());
			if (this.firstTokenNanos != 0) {
				m.timeToFirstToken(tenant, a.model(), operation,
						Duration.ofNanos(this.firstTokenNanos - this.startNanos));
			}
			if (signal == SignalType.ON_COMPLETE) {
				m.requestDuration(tenant, a.model(), operation, Duration.ofNanos(System.nanoTime() - this.startNanos));
			}
		}

	}

}

package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.github.dualmap.prompt.ParsedRequest;
import io.github.dualmap.prompt.RequestKind;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.channel.AbortedException;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.NettyWriteResponseFilter;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;

/**
 * Ends every {@link RoutedAttempt} exactly once, whether the exchange completes, fails or
 * is cancelled (a client that disconnects mid-stream), observes the first response body
 * byte as the time to first token (for a streamed Responses API answer, the first event
 * past its opening ones: {@link ResponsesStreamWatcher}), and adds the
 * {@code x-dualmap-instance} and {@code x-dualmap-reason} headers. It sits just outside
 * the gateway's {@link NettyWriteResponseFilter}, the only place that sees all three
 * endings: load balancer lifecycle callbacks fire at response headers and never on
 * cancel. An answer whose body goes silent for the idle timeout once its status line came
 * (an engine that sent a stream's headers and no token, or stopped mid-stream while its
 * metrics still answer) fails with a {@link ResponseIdleException}: the gateway's writer
 * then closes the connection to the instance (vLLM aborts the request), the request's
 * prefill slot is freed, and the error handler answers 504 or cuts the client's stream.
 */
public class DispatchAccountingFilter implements GlobalFilter, Ordered {

	/** Just outside {@code NettyWriteResponseFilter} (-1). */
	public static final int ORDER = NettyWriteResponseFilter.WRITE_RESPONSE_FILTER_ORDER - 1;

	/** Response header naming the chosen instance. */
	public static final String INSTANCE_HEADER = "x-dualmap-instance";

	/** Response header giving the reason of the choice. */
	public static final String REASON_HEADER = "x-dualmap-reason";

	/**
	 * Response header giving the milliseconds the request waited in the gateway before it
	 * was sent (the part of the client's time to first token spent queued here).
	 */
	public static final String QUEUE_HEADER = "x-dualmap-queue-ms";

	/**
	 * No body byte for two minutes ends an answer: far beyond a long prompt's prefill
	 * behind the dispatch queue, and beyond any pause of a stream in generation, while a
	 * stalled engine no longer holds its requests, their clients and their prefill slots
	 * for good.
	 */
	public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofMinutes(2);

	private final DualMapRegistry registry;

	private final boolean headers;

	private final Duration idleTimeout;

	public DispatchAccountingFilter(DualMapRegistry registry, boolean headers) {
		this(registry, headers, DEFAULT_IDLE_TIMEOUT);
	}

	/**
	 * @param idleTimeout the longest silence of an answer's body once its status line
	 * came; zero: none
	 */
	public DispatchAccountingFilter(DualMapRegistry registry, boolean headers, Duration idleTimeout) {
		this.registry = registry;
		this.headers = headers;
		this.idleTimeout = idleTimeout;
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
		ServerHttpResponse response = exchange.getResponse();
		if (this.headers) {
			response.beforeCommit(() -> {
				RoutedAttempt attempt = attempt(exchange);
				if (attempt != null) {
					response.getHeaders().set(INSTANCE_HEADER, attempt.instanceId());
					response.getHeaders().set(REASON_HEADER, attempt.decision().reason().value());
					response.getHeaders().set(QUEUE_HEADER, Long.toString(attempt.queuedNanos() / 1_000_000));
				}
				return Mono.empty();
			});
		}
		AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();
		return chain
			.filter(exchange.mutate().response(new FirstByteObserver(response, exchange, this.idleTimeout)).build())
			.doOnError(failure::set)
			.doFinally(signal -> {
				RoutedAttempt attempt = attempt(exchange);
				if (attempt == null) {
					return;
				}
				switch (signal) {
					case ON_COMPLETE -> attempt.complete(response.getStatusCode());
					case ON_ERROR -> {
						Throwable t = failure.get();
						if (clientGone(t)) {
							attempt.cancel();
						}
						else {
							attempt.fail(t != null ? t : new IllegalStateException("exchange failed"));
						}
					}
					default -> attempt.cancel();
				}
			});
	}

	/**
	 * Whether the exchange failed because its client went away: Reactor Netty reports a
	 * write to a client connection that closed as an {@link AbortedException}, not as a
	 * cancel. The instance did nothing wrong; counted as its failure, a burst of clients
	 * leaving (a load balancer's timeout, a client restarting) opened a healthy
	 * instance's breaker.
	 */
	static boolean clientGone(@Nullable Throwable failure) {
		for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
			if (t instanceof AbortedException) {
				return true;
			}
		}
		return false;
	}

	private static @Nullable RoutedAttempt attempt(ServerWebExchange exchange) {
		return DualMapExchange.of(exchange).attempt();
	}

	/** Reports the first non-empty body chunk written to the client. */
	private static final class FirstByteObserver extends ServerHttpResponseDecorator {

		private final ServerWebExchange exchange;

		/*
		 * Made at the first body chunk, when the request has long been parsed (this
		 * decorator is made before the prompt is): for a streamed Responses API answer,
		 * whose first bytes precede the first token, the event watcher; for any
		 * successful Responses API answer, the reader of its id (told to listeners:
		 * RoutedAttempt.responseStored).
		 */
		private @Nullable ResponsesStreamWatcher responses;

		private @Nullable ResponseIdReader responseId;

		private boolean started;

		/* Whether the answer's status is a success: an error's body is no first token. */
		private boolean success;

		private volatile boolean seen;

		private final Duration idleTimeout;

		FirstByteObserver(ServerHttpResponse delegate, ServerWebExchange exchange, Duration idleTimeout) {
			super(delegate);
			this.exchange = exchange;
			this.idleTimeout = idleTimeout;
		}

		@Override
		public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
			return super.writeWith(idle(Flux.from(body)).doOnNext(this::observe));
		}

		@Override
		public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
			// The gateway's writer hands a stream over as one publisher per chunk read.
			return super.writeAndFlushWith(
					idle(Flux.from(body)).map(chunk -> Flux.from(chunk).doOnNext(this::observe)));
		}

		/**
		 * {@code body} failing with a {@link ResponseIdleException} when no element comes
		 * for the idle timeout, the first counted from the subscription: the gateway's
		 * writer subscribes once the status line came. An element only stamps the time it
		 * came; one watchdog per answer wakes when the timeout would end counted from the
		 * last stamp it saw, so a stream of thousands of chunks costs no timer per chunk.
		 */
		private <T> Flux<T> idle(Flux<T> body) {
			if (this.idleTimeout.isZero()) {
				return body;
			}
			return Flux.defer(() -> {
				AtomicLong last = new AtomicLong(System.nanoTime());
				return body.doOnNext(x -> last.set(System.nanoTime()))
					.takeUntilOther(watchdog(last, this.idleTimeout.toNanos()));
			});
		}

		/**
		 * Errors once {@code timeoutNanos} have passed since {@code last}, rechecking
		 * when they would have (never completes otherwise).
		 */
		private Mono<Void> watchdog(AtomicLong last, long timeoutNanos) {
			return Mono.defer(() -> {
				long quiet = System.nanoTime() - last.get();
				if (quiet >= timeoutNanos) {
					return Mono.error(new ResponseIdleException(this.idleTimeout));
				}
				return Mono.delay(Duration.ofNanos(timeoutNanos - quiet)).then(watchdog(last, timeoutNanos));
			});
		}

		private void observe(DataBuffer buffer) {
			if (buffer.readableByteCount() == 0) {
				return;
			}
			if (!this.started) {
				start();
			}
			ResponseIdReader reader = this.responseId;
			if (reader != null && reader.read(buffer)) {
				this.responseId = null;
				remember(reader.id());
			}
			if (this.seen) {
				return;
			}
			if (this.responses != null && !this.responses.firstTokenIn(buffer)) {
				return;
			}
			this.seen = true;
			RoutedAttempt attempt = attempt(this.exchange);
			if (attempt != null) {
				attempt.firstByte(this.success);
			}
		}

		private void start() {
			this.started = true;
			HttpStatusCode status = getStatusCode();
			this.success = status == null || status.is2xxSuccessful();
			ParsedRequest parsed = DualMapExchange.of(this.exchange).parsedRequest();
			if (parsed == null || parsed.kind() != RequestKind.RESPONSES) {
				return;
			}
			if (parsed.stream() && this.success) {
				this.responses = new ResponsesStreamWatcher();
			}
			if (status != null && this.success) {
				this.responseId = new ResponseIdReader();
			}
		}

		private void remember(@Nullable String responseId) {
			RoutedAttempt attempt = attempt(this.exchange);
			if (responseId != null && attempt != null) {
				attempt.responseStored(responseId);
			}
		}

	}

}

package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.dualmap.prompt.OpenAiError;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;

/** Reads a request body into memory under a size limit. */
public final class RequestBodies {

	private static final byte[] EMPTY = new byte[0];

	private RequestBodies() {
	}

	/**
	 * The whole body as bytes (a zero-length array for no body), releasing every buffer;
	 * fails with {@link DataBufferLimitException} as soon as it exceeds {@code maxBytes}.
	 */
	public static Mono<byte[]> read(Flux<DataBuffer> body, int maxBytes) {
		return DataBufferUtils.join(body, maxBytes).map(RequestBodies::drain).defaultIfEmpty(EMPTY);
	}

	/**
	 * {@code exchange}'s request body within {@code limits}: fails with
	 * {@link DataBufferLimitException} over {@code maxBytes} (at once when its
	 * {@code Content-Length} says so; nothing is read then), with
	 * {@link RequestBuffers.FullException} when the buffers cannot hold it, and with
	 * {@link ReadTimeoutException} when the whole body takes longer than the read
	 * timeout. A body refused while read is read to its end and dropped, up to
	 * {@link BodyLimits#drainableBytes}, before the refusal is reported; past that (and
	 * for a declared length past it, or a timeout) it is left unread
	 * ({@link #hasUnreadBody}).
	 */
	public static Mono<byte[]> read(ServerWebExchange exchange, BodyLimits limits) {
		return read(exchange, limits, null);
	}

	/**
	 * Reads and drops {@code exchange}'s body (within the read deadline, up to
	 * {@link BodyLimits#drainableBytes}; past either it is left unread), then
	 * {@code answer}s: for a request answered without its body, so that its client, still
	 * sending, reads the answer, and the connection is neither read without end nor kept
	 * past the deadline.
	 */
	public static <T> Mono<T> dropThen(ServerWebExchange exchange, BodyLimits limits, Supplier<Mono<T>> answer) {
		return read(exchange, limits, new Dropped()).then(Mono.<T>empty())
			.onErrorResume(ex -> Mono.empty())
			.switchIfEmpty(Mono.defer(answer));
	}

	/**
	 * @param refused why the body is refused before a byte is read ({@code null}: not
	 * yet, unless its {@code Content-Length} is over the limit): it is read and dropped,
	 * and this reported at its end
	 */
	private static Mono<byte[]> read(ServerWebExchange exchange, BodyLimits limits,
			@Nullable RuntimeException refused) {
		int maxBytes = limits.maxBytes();
		long drainable = BodyLimits.drainableBytes(maxBytes);
		long declared = exchange.getRequest().getHeaders().getContentLength();
		if (refused == null && declared > maxBytes) {
			refused = new DataBufferLimitException("Content-Length over " + maxBytes + " bytes");
		}
		if (declared > drainable) {
			// Too much to read only to drop it (refused: it is over the limit too).
			unread(exchange);
			return Mono.error(refused);
		}
		RequestBuffers buffers = limits.buffers();
		Refusal refusal = new Refusal();
		refusal.failure = refused;
		// Once refused (over the limit, or beyond the budget), the rest of the body is
		// read and dropped up to drainable bytes, within the read deadline, then the
		// refusal reported: a client still sending reads the answer rather than a reset
		// connection. Past either, the read stops and the answer ends the connection.
		Flux<DataBuffer> body = exchange.getRequest().getBody().handle((chunk, sink) -> {
			int n = chunk.readableByteCount();
			refusal.seen += n;
			if (refusal.failure == null) {
				if (refusal.seen > maxBytes) {
					refusal.failure = new DataBufferLimitException("request body over " + maxBytes + " bytes");
				}
				else if (buffers != null && !buffers.reserve(exchange, n)) {
					refusal.failure = new RequestBuffers.FullException(buffers.limit());
				}
				else {
					sink.next(chunk);
					return;
				}
			}
			DataBufferUtils.release(chunk);
			if (refusal.seen > drainable) {
				unread(exchange);
				sink.error(refusal.failure);
			}
		});
		return DataBufferUtils.join(body).flatMap(joined -> {
			if (refusal.failure != null) {
				DataBufferUtils.release(joined);
				return Mono.<byte[]>error(refusal.failure);
			}
			return Mono.just(drain(joined));
		})
			.switchIfEmpty(Mono.defer(() -> refusal.failure != null ? Mono.error(refusal.failure) : Mono.just(EMPTY)))
			.timeout(limits.readTimeout(), Mono.error(() -> {
				unread(exchange);
				// A body refused already keeps its reason: it was too slow to drain.
				return refusal.failure != null ? refusal.failure : new ReadTimeoutException(limits.readTimeout());
			}));
	}

	/** The refusal of a body dropped unread by {@link #dropThen}. */
	private static final class Dropped extends RuntimeException {

		Dropped() {
			super("request body dropped", null, false, false);
		}

	}

	/**
	 * Marks {@code exchange}'s body as not read to its end: the answer ends the
	 * connection, as the rest will not be read ({@link #hasUnreadBody}).
	 */
	static void unread(ServerWebExchange exchange) {
		exchange.getAttributes().put(UNREAD_BODY_ATTR, Boolean.TRUE);
	}

	/**
	 * Whether {@code exchange}'s body was refused and left unread (a declared or actual
	 * length past {@link BodyLimits#drainableBytes}, or past the read deadline): its
	 * answer must end the connection ({@code Connection: close}), or the server would go
	 * on reading whatever the client sends, without end for a chunked body.
	 */
	public static boolean hasUnreadBody(ServerWebExchange exchange) {
		return Boolean.TRUE.equals(exchange.getAttribute(UNREAD_BODY_ATTR));
	}

	private static final String UNREAD_BODY_ATTR = RequestBodies.class.getName() + ".unreadBody";

	/** The first reason a body was refused while it is read, and how much was seen. */
	private static final class Refusal {

		private long seen;

		private @Nullable RuntimeException failure;

	}

	/**
	 * Reads {@code exchange}'s request body within {@code limits} and hands it to
	 * {@code then}; a body over the size limit gets the 413 OpenAI error instead, one the
	 * buffers cannot hold a 503, one too slow to arrive a 408.
	 */
	static Mono<Void> readThen(ServerWebExchange exchange, BodyLimits limits, Function<byte[], Mono<Void>> then) {
		return read(exchange, limits).flatMap(then)
			.onErrorResume(DataBufferLimitException.class,
					ex -> OpenAiErrorResponses.tooLarge(exchange, limits.maxBytes()))
			.onErrorResume(ResponseStatusException.class, ex -> {
				Mono<Void> answer = OpenAiErrorResponses.refusedBody(exchange, ex);
				return answer != null ? answer : Mono.error(ex);
			});
	}

	/**
	 * {@code exchange}'s request with {@code body} as its body, replayed on every
	 * subscription (so a retry resends it).
	 */
	static ServerHttpRequest replaying(ServerWebExchange exchange, byte[] body) {
		return new ServerHttpRequestDecorator(exchange.getRequest()) {
			@Override
			public Flux<DataBuffer> getBody() {
				return body.length == 0 ? Flux.empty()
						: Flux.defer(() -> Flux.just(exchange.getResponse().bufferFactory().wrap(body)));
			}
		};
	}

	/** A body that took longer than {@code dualmap.body-read-timeout} to arrive. */
	public static final class ReadTimeoutException extends ResponseStatusException {

		ReadTimeoutException(Duration timeout) {
			super(HttpStatus.REQUEST_TIMEOUT,
					"request body not received within dualmap.body-read-timeout (" + timeout.toMillis() + " ms)");
		}

		/** The OpenAI error it is answered with (408). */
		public OpenAiError toOpenAiError() {
			return new OpenAiError(getReason(), "invalid_request_error", null, "request_timeout");
		}

	}

	private static byte[] drain(DataBuffer buffer) {
		try {
			byte[] bytes = new byte[buffer.readableByteCount()];
			buffer.read(bytes);
			return bytes;
		}
		finally {
			DataBufferUtils.release(buffer);
		}
	}

}

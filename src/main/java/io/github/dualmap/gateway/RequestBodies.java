package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.function.Function;

import io.github.dualmap.prompt.OpenAiError;
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
	 * {@link RequestBuffers.FullException} at the first chunk the buffers cannot hold,
	 * and with {@link ReadTimeoutException} when the whole body takes longer than the
	 * read timeout.
	 */
	public static Mono<byte[]> read(ServerWebExchange exchange, BodyLimits limits) {
		int maxBytes = limits.maxBytes();
		if (exchange.getRequest().getHeaders().getContentLength() > maxBytes) {
			return Mono.error(new DataBufferLimitException("Content-Length over " + maxBytes + " bytes"));
		}
		Flux<DataBuffer> body = exchange.getRequest().getBody();
		RequestBuffers buffers = limits.buffers();
		if (buffers != null) {
			body = body.handle((chunk, sink) -> {
				if (buffers.reserve(exchange, chunk.readableByteCount())) {
					sink.next(chunk);
				}
				else {
					DataBufferUtils.release(chunk);
					sink.error(new RequestBuffers.FullException(buffers.limit()));
				}
			});
		}
		return read(body, maxBytes).timeout(limits.readTimeout(),
				Mono.error(() -> new ReadTimeoutException(limits.readTimeout())));
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

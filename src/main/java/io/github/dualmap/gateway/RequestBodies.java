package io.github.dualmap.gateway;

import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
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
	 * {@code exchange}'s request body under {@code maxBytes}; fails with
	 * {@link DataBufferLimitException} for a body over the limit, at once when its
	 * {@code Content-Length} says so (nothing is read then).
	 */
	static Mono<byte[]> read(ServerWebExchange exchange, int maxBytes) {
		return read(exchange, maxBytes, null);
	}

	/**
	 * As {@link #read(ServerWebExchange, int)}, each chunk also reserved in
	 * {@code buffers} (when not {@code null}) as it arrives: fails with
	 * {@link RequestBuffers.FullException} at the first chunk they cannot hold.
	 */
	static Mono<byte[]> read(ServerWebExchange exchange, int maxBytes, @Nullable RequestBuffers buffers) {
		if (exchange.getRequest().getHeaders().getContentLength() > maxBytes) {
			return Mono.error(new DataBufferLimitException("Content-Length over " + maxBytes + " bytes"));
		}
		Flux<DataBuffer> body = exchange.getRequest().getBody();
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
		return read(body, maxBytes);
	}

	/**
	 * Reads {@code exchange}'s request body under {@code maxBytes} and {@code buffers}
	 * and hands it to {@code then}; a body over the limit gets the 413 OpenAI error
	 * instead, one the buffers cannot hold a 503.
	 */
	static Mono<Void> readThen(ServerWebExchange exchange, int maxBytes, @Nullable RequestBuffers buffers,
			Function<byte[], Mono<Void>> then) {
		return read(exchange, maxBytes, buffers).flatMap(then)
			.onErrorResume(DataBufferLimitException.class, ex -> OpenAiErrorResponses.tooLarge(exchange, maxBytes))
			.onErrorResume(RequestBuffers.FullException.class, ex -> OpenAiErrorResponses.buffersFull(exchange, ex));
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

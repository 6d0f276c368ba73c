package io.github.dualmap.gateway;

import java.util.function.Function;

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
		if (exchange.getRequest().getHeaders().getContentLength() > maxBytes) {
			return Mono.error(new DataBufferLimitException("Content-Length over " + maxBytes + " bytes"));
		}
		return read(exchange.getRequest().getBody(), maxBytes);
	}

	/**
	 * Reads {@code exchange}'s request body under {@code maxBytes} and hands it to
	 * {@code then}; a body over the limit gets the 413 OpenAI error instead.
	 */
	static Mono<Void> readThen(ServerWebExchange exchange, int maxBytes, Function<byte[], Mono<Void>> then) {
		return read(exchange, maxBytes).flatMap(then)
			.onErrorResume(DataBufferLimitException.class, ex -> OpenAiErrorResponses.tooLarge(exchange, maxBytes));
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

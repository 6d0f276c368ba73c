package io.github.dualmap.gateway;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;

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

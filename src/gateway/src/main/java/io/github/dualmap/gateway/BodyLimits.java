package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.function.IntConsumer;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.web.server.ServerWebExchange;

/**
 * How DualMap reads a request body before routing: at most {@code maxBytes}
 * ({@code dualmap.max-body-size}, else 413), within the gateway-wide budget of bodies
 * held in memory ({@code dualmap.max-buffered-size}, else 503; {@code null}: no budget),
 * and within {@code readTimeout} from the first byte asked for to the last
 * ({@code dualmap.body-read-timeout}, else 408), so a client that trickles its body
 * cannot hold memory and a connection indefinitely.
 *
 * @param maxBytes the largest body read
 * @param buffers where bodies are reserved while their exchange lasts, or {@code null}
 * @param readTimeout the longest a whole body may take to arrive
 */
public record BodyLimits(int maxBytes, @Nullable RequestBuffers buffers, Duration readTimeout) {

	/** {@code dualmap.body-read-timeout}'s default. */
	public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(60);

	public BodyLimits {
		if (maxBytes <= 0) {
			throw new IllegalArgumentException("maxBytes must be > 0 but was " + maxBytes);
		}
		if (readTimeout.isNegative() || readTimeout.isZero()) {
			throw new IllegalArgumentException("readTimeout must be > 0 but was " + readTimeout);
		}
	}

	/**
	 * Reserves bytes {@code exchange} holds beyond its body as read (its decoded form) in
	 * the budget, throwing {@link RequestBuffers.FullException} when they do not fit.
	 */
	IntConsumer reserving(ServerWebExchange exchange) {
		RequestBuffers budget = this.buffers;
		return bytes -> {
			if (budget != null && !budget.reserve(exchange, bytes)) {
				throw new RequestBuffers.FullException(budget.limit());
			}
		};
	}

	/**
	 * Reserves {@code bytes} in the budget for {@code exchange} until it ends: memory it
	 * holds besides a body it reads, such as a response it builds whole.
	 * @throws RequestBuffers.FullException when the budget cannot hold them now
	 */
	public void reserveUntilEnd(ServerWebExchange exchange, int bytes) {
		reserving(exchange).accept(bytes);
	}

	/**
	 * How much memory parsing a body takes while it runs, per byte of the body: measured
	 * for a 32 MB chat body (the JSON tree's text buffers, the prompt's rendering and
	 * their strings) at 5 to 6.5 times its size.
	 */
	static final int PARSE_BYTES_PER_BODY_BYTE = 6;

	/**
	 * {@code parse} of a {@code size}-byte body, with its working memory taken from the
	 * budget while it runs (for a body over {@link BodyEncodings#INLINE_BYTES}: smaller
	 * ones are not worth the accounting); {@code unparsed} when that memory could never
	 * fit in the budget beside what {@code exchange} holds (so the request is not parsed
	 * whole: a prompt that large is beyond any engine's context anyway).
	 * @throws RequestBuffers.FullException when it could fit but does not now
	 */
	<T> T whileParsing(ServerWebExchange exchange, int size, Supplier<T> parse, Supplier<T> unparsed) {
		if (size <= BodyEncodings.INLINE_BYTES) {
			return parse.get();
		}
		return withWorkingMemory(exchange, (long) PARSE_BYTES_PER_BODY_BYTE * size, parse, unparsed);
	}

	/**
	 * {@code parse}, with {@code working} bytes taken from the budget while it runs;
	 * {@code unparsed} when they could never fit beside what {@code exchange} holds.
	 * @throws RequestBuffers.FullException when they could fit but do not now
	 */
	public <T> T withWorkingMemory(ServerWebExchange exchange, long working, Supplier<T> parse, Supplier<T> unparsed) {
		RequestBuffers budget = this.buffers;
		if (budget == null) {
			return parse.get();
		}
		if (working > budget.headroom(exchange)) {
			budget.countUnparsed();
			return unparsed.get();
		}
		if (!budget.takeTransient(working)) {
			throw new RequestBuffers.FullException(budget.limit());
		}
		try {
			return parse.get();
		}
		finally {
			budget.giveBack(working);
		}
	}

	/**
	 * How much larger than its limit a body refused as too large may declare itself and
	 * still be read to its end (and dropped) after the 413, so that its client, still
	 * sending, reads the answer rather than a reset connection; beyond it (or with no
	 * declared length) the answer ends the connection.
	 */
	public static final int DRAINED_BODY_FACTOR = 4;

	/** The longest declared body drained after a 413 ({@link #DRAINED_BODY_FACTOR}). */
	public static long drainableBytes(int maxBytes) {
		return (long) DRAINED_BODY_FACTOR * maxBytes;
	}

	/** {@code maxBytes} alone: no budget, the default read timeout. */
	public static BodyLimits of(int maxBytes) {
		return new BodyLimits(maxBytes, null, DEFAULT_READ_TIMEOUT);
	}

}

package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.function.IntConsumer;

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

	/** {@code maxBytes} alone: no budget, the default read timeout. */
	public static BodyLimits of(int maxBytes) {
		return new BodyLimits(maxBytes, null, DEFAULT_READ_TIMEOUT);
	}

}

package io.github.dualmap.gateway;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * Ids of routed requests: unique within the process and across gateway replicas (a random
 * per-process prefix, then a counter). They key the dispatch queues and, for prompts
 * without blocks, the ring position, and never leave the gateway; {@link RequestIdFilter}
 * draws the {@code x-request-id} it gives requests that bring none from the same source
 * (a value of its own, not the routing id: a client's id need not be unique).
 * {@code UUID.randomUUID()} took a lock on the shared {@code SecureRandom} for every
 * request.
 */
final class RequestIds {

	private static final String PREFIX = HexFormat.of().formatHex(seed()) + "-";

	private static final AtomicLong NEXT = new AtomicLong();

	private RequestIds() {
	}

	/** A new id. */
	static String next() {
		return PREFIX + Long.toHexString(NEXT.incrementAndGet());
	}

	/**
	 * The {@code x-request-id} of a request that sent {@code sent} in that header: its
	 * own, else a new one.
	 */
	static String orNew(@Nullable String sent) {
		return sent == null || sent.isBlank() ? next() : sent;
	}

	private static byte[] seed() {
		byte[] bytes = new byte[8];
		new SecureRandom().nextBytes(bytes);
		return bytes;
	}

}

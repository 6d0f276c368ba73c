package io.github.dualmap.core;

import org.jspecify.annotations.Nullable;

/**
 * Why a request was not sent to any instance: a value handed to the request's
 * {@link DispatchListener}, which the gateway renders as an OpenAI-style error with a
 * {@code Retry-After} header.
 *
 * @param status HTTP status: 429 when the queues are full, 503 when no instance can take
 * the request (none available, or it waited beyond the bound)
 * @param message human-readable reason, without prompt content and without instance ids
 * (the gateway sends it to clients, and an instance id is usually a backend address)
 * @param retryAfterSeconds the value of {@code Retry-After}, at least 1
 * @param instanceId the instance the request was queued on or placed on, when the
 * rejection concerns one (for logs and tests), else {@code null}
 */
public record Rejection(int status, String message, long retryAfterSeconds, @Nullable String instanceId) {

	/** Queue bound reached. */
	public static final int TOO_MANY_REQUESTS = 429;

	/** No instance can serve the request now. */
	public static final int SERVICE_UNAVAILABLE = 503;

	/** A rejection that concerns no single instance. */
	public Rejection(int status, String message, long retryAfterSeconds) {
		this(status, message, retryAfterSeconds, null);
	}

	public Rejection {
		if (status != TOO_MANY_REQUESTS && status != SERVICE_UNAVAILABLE) {
			throw new IllegalArgumentException("status must be 429 or 503 but was " + status);
		}
		if (retryAfterSeconds < 1) {
			throw new IllegalArgumentException("retryAfterSeconds must be >= 1 but was " + retryAfterSeconds);
		}
	}

	/** The OpenAI error {@code type} for this status. */
	public String errorType() {
		return status == TOO_MANY_REQUESTS ? "rate_limit_exceeded" : "service_unavailable";
	}

}

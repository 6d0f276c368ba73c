package io.github.dualmap.gateway;

import io.github.dualmap.core.Rejection;
import io.github.dualmap.prompt.OpenAiError;

/**
 * The dispatch queues turned a request away (queue full, waited too long, no instance):
 * the error signal of the load balancer's {@code choose}, which
 * {@link ConnectFailoverFilter} renders as an OpenAI-style 429 or 503 with
 * {@code Retry-After}.
 */
public class DispatchRejectedException extends RuntimeException {

	/** Code of a 429: the queue bounds were reached. */
	public static final String QUEUE_FULL = "queue_full";

	/** Code of a 503 for a request that waited {@code dualmap.dispatch.max-wait}. */
	public static final String QUEUE_WAIT_EXCEEDED = "queue_wait_exceeded";

	/** Code of a 503 when no instance accepts requests. */
	public static final String NO_INSTANCE_AVAILABLE = "no_instance_available";

	private final Rejection rejection;

	private final String code;

	public DispatchRejectedException(Rejection rejection, String code) {
		super(rejection.message(), null, false, false);
		this.rejection = rejection;
		this.code = code;
	}

	public Rejection rejection() {
		return this.rejection;
	}

	/** The machine-readable {@code code} of the OpenAI error body. */
	public String code() {
		return this.code;
	}

	/** The OpenAI error body for this rejection. */
	public OpenAiError toOpenAiError() {
		return new OpenAiError(this.rejection.message(), this.rejection.errorType(), null, this.code);
	}

}

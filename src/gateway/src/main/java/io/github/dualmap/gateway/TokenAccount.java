package io.github.dualmap.gateway;

import java.util.concurrent.atomic.AtomicBoolean;

import io.github.dualmap.prompt.RequestKind;
import io.github.dualmap.tenant.Admission;
import org.jspecify.annotations.Nullable;

/**
 * A request's account with its tenant's budgets: how it was admitted and on what
 * estimate, and the body sent when the gateway asked the engine for the stream's usage on
 * the client's behalf (then the usage-only chunk is removed from what the client sees).
 * Settled once, by {@link TokenUsageFilter}.
 */
public final class TokenAccount {

	private final Admission admission;

	private final RequestKind kind;

	private final long promptEstimate;

	private final long completionEstimate;

	private final byte @Nullable [] injectedBody;

	private final AtomicBoolean settled = new AtomicBoolean();

	/**
	 * @param promptEstimate the prompt tokens estimated from the body
	 * @param completionEstimate the completion tokens it was admitted for
	 * @param injectedBody the body sent with {@code stream_options.include_usage} set by
	 * the gateway; {@code null}: the body as the client sent it
	 */
	TokenAccount(Admission admission, RequestKind kind, long promptEstimate, long completionEstimate,
			byte @Nullable [] injectedBody) {
		this.admission = admission;
		this.kind = kind;
		this.promptEstimate = promptEstimate;
		this.completionEstimate = completionEstimate;
		this.injectedBody = injectedBody;
	}

	public Admission admission() {
		return this.admission;
	}

	/** The requested model, if any. */
	public @Nullable String model() {
		return this.admission.model();
	}

	public long promptEstimate() {
		return this.promptEstimate;
	}

	public long completionEstimate() {
		return this.completionEstimate;
	}

	/** Whether the gateway set {@code stream_options.include_usage}. */
	public boolean usageInjected() {
		return this.injectedBody != null;
	}

	byte @Nullable [] injectedBody() {
		return this.injectedBody;
	}

	/** True the first time only: the account is settled once. */
	boolean settle() {
		return this.settled.compareAndSet(false, true);
	}

	/** OpenTelemetry's {@code gen_ai.operation.name} of the request. */
	public String operation(String path) {
		return switch (this.kind) {
			case CHAT, RESPONSES -> "chat";
			case COMPLETION -> "text_completion";
			case OTHER -> path.endsWith("/embeddings") ? "embeddings" : "other";
		};
	}

}

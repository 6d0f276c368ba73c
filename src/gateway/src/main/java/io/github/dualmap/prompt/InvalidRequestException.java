package io.github.dualmap.prompt;

import org.jspecify.annotations.Nullable;

/**
 * A request body the gateway refuses before routing, with the HTTP status and the OpenAI
 * error it should be answered with.
 */
public class InvalidRequestException extends RuntimeException {

	private final int status;

	private final String type;

	private final @Nullable String param;

	public InvalidRequestException(String message, @Nullable String param) {
		this(400, OpenAiError.INVALID_REQUEST, message, param, null);
	}

	public InvalidRequestException(int status, String type, String message, @Nullable String param,
			@Nullable Throwable cause) {
		super(message, cause);
		if (status < 400 || status > 599) {
			throw new IllegalArgumentException("status must be an HTTP error status but was " + status);
		}
		this.status = status;
		this.type = type;
		this.param = param;
	}

	public int status() {
		return status;
	}

	public String type() {
		return type;
	}

	public @Nullable String param() {
		return param;
	}

	/** The OpenAI error body for this refusal. */
	public OpenAiError toError() {
		return new OpenAiError(getMessage(), type, param, null);
	}

}

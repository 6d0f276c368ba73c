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

	private final @Nullable String code;

	public InvalidRequestException(String message, @Nullable String param) {
		this(400, OpenAiError.INVALID_REQUEST, message, param, null);
	}

	public InvalidRequestException(int status, String type, String message, @Nullable String param,
			@Nullable Throwable cause) {
		this(status, type, message, param, null, cause);
	}

	/**
	 * @param code the OpenAI error's machine-readable code, or {@code null} for none
	 */
	public InvalidRequestException(int status, String type, String message, @Nullable String param,
			@Nullable String code, @Nullable Throwable cause) {
		super(message, cause);
		if (status < 400 || status > 599) {
			throw new IllegalArgumentException("status must be an HTTP error status but was " + status);
		}
		this.status = status;
		this.type = type;
		this.param = param;
		this.code = code;
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

	public @Nullable String code() {
		return code;
	}

	/** The OpenAI error body for this refusal. */
	public OpenAiError toError() {
		return new OpenAiError(getMessage(), type, param, code);
	}

}

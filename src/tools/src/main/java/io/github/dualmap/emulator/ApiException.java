package io.github.dualmap.emulator;

import org.jspecify.annotations.Nullable;

/**
 * A request the server rejects, with the status, error type and message vLLM uses.
 */
public final class ApiException extends RuntimeException {

	private final int status;

	private final String type;

	private final @Nullable String param;

	public ApiException(int status, String type, String message, @Nullable String param) {
		super(message);
		this.status = status;
		this.type = type;
		this.param = param;
	}

	/** A 400 {@code BadRequestError}. */
	public static ApiException badRequest(String message, @Nullable String param) {
		return new ApiException(400, "BadRequestError", message, param);
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

}

package io.github.dualmap.prompt;

import org.jspecify.annotations.Nullable;

/** A request body the gateway refuses, with the OpenAI error fields to answer with. */
public class InvalidRequestException extends RuntimeException {

	private final int status;

	private final String type;

	private final @Nullable String param;

	public InvalidRequestException(String message, @Nullable String param) {
		this(400, "invalid_request_error", message, param);
	}

	public InvalidRequestException(int status, String type, String message, @Nullable String param) {
		super(message);
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

}

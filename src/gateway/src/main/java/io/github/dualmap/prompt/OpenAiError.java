package io.github.dualmap.prompt;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

/**
 * The body OpenAI-compatible servers answer errors with:
 * {@code {"error":{"message":...,"type":...,"param":...,"code":...}}}.
 *
 * @param message what went wrong, for a human
 * @param type the error class, e.g. {@code invalid_request_error}
 * @param param the request field at fault, if any
 * @param code a machine-readable code, if any
 */
public record OpenAiError(String message, String type, @Nullable String param, @Nullable String code) {

	/** OpenAI's type for a request the client has to fix. */
	public static final String INVALID_REQUEST = "invalid_request_error";

	public OpenAiError {
		if (message.isEmpty()) {
			throw new IllegalArgumentException("message must not be empty");
		}
		if (type.isEmpty()) {
			throw new IllegalArgumentException("type must not be empty");
		}
	}

	/** The JSON body, UTF-8, with explicit nulls as OpenAI sends them. */
	public byte[] toJson() {
		Map<String, @Nullable Object> error = new LinkedHashMap<>();
		error.put("message", message);
		error.put("type", type);
		error.put("param", param);
		error.put("code", code);
		return JsonMapper.shared().writeValueAsBytes(Map.of("error", error));
	}

}

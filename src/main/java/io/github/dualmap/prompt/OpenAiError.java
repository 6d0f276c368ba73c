package io.github.dualmap.prompt;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

/**
 * An error body in the OpenAI API's shape:
 * {@code {"error":{"message":...,"type":...,"param":...,"code":...}}}.
 */
public record OpenAiError(String message, String type, @Nullable String param, @Nullable String code) {

	/** The body as UTF-8 JSON. */
	public byte[] toJson() {
		Map<String, @Nullable Object> error = new LinkedHashMap<>();
		error.put("message", message);
		error.put("type", type);
		error.put("param", param);
		error.put("code", code);
		return JsonMapper.shared().writeValueAsBytes(Map.of("error", error));
	}

}

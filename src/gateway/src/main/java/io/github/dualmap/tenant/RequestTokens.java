package io.github.dualmap.tenant;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * What a request body says about its output and its usage: its completion token cap
 * ({@code max_completion_tokens}, {@code max_tokens}, or the Responses API's
 * {@code max_output_tokens}) and whether a stream asks for its usage
 * ({@code stream_options.include_usage}). Top-level fields only, read as a token stream
 * (nothing else is materialised).
 *
 * @param maxTokens the cap, {@code null} when none is set
 * @param usageRequested whether {@code stream_options.include_usage} is {@code true}
 * @param streamOptions whether the body has a {@code stream_options} field
 */
public record RequestTokens(@Nullable Long maxTokens, boolean usageRequested, boolean streamOptions) {

	private static final JsonMapper JSON = JsonMapper.shared();

	private static final byte[] INCLUDE_USAGE = "\"stream_options\":{\"include_usage\":true},"
		.getBytes(StandardCharsets.UTF_8);

	/** What a body that is not read says: nothing. */
	public static final RequestTokens NONE = new RequestTokens(null, false, false);

	/** Reads {@code body}; a body that does not read says nothing. */
	public static RequestTokens read(byte[] body) {
		return read(JSON.createParser(body));
	}

	/** Reads {@code body} as it streams in; a body that does not read says nothing. */
	public static RequestTokens read(InputStream body) {
		try {
			return read(JSON.createParser(body));
		}
		catch (JacksonException ex) {
			return NONE;
		}
	}

	private static RequestTokens read(JsonParser parser) {
		Long maxTokens = null;
		Long maxCompletion = null;
		boolean usage = false;
		boolean options = false;
		try (JsonParser json = parser) {
			if (json.nextToken() != JsonToken.START_OBJECT) {
				return NONE;
			}
			while (json.nextToken() == JsonToken.PROPERTY_NAME) {
				String name = json.currentName();
				JsonToken value = json.nextToken();
				switch (name) {
					case "max_tokens", "max_output_tokens" -> maxTokens = whole(json, value, maxTokens);
					case "max_completion_tokens" -> maxCompletion = whole(json, value, maxCompletion);
					case "stream_options" -> {
						options = true;
						if (value == JsonToken.START_OBJECT) {
							while (json.nextToken() == JsonToken.PROPERTY_NAME) {
								String field = json.currentName();
								JsonToken v = json.nextToken();
								if ("include_usage".equals(field)) {
									usage = v == JsonToken.VALUE_TRUE;
								}
								json.skipChildren();
							}
						}
						else {
							json.skipChildren();
						}
					}
					default -> json.skipChildren();
				}
			}
		}
		catch (JacksonException ex) {
			// The parser accepted the body; what it left unread is the engine's to judge.
		}
		return new RequestTokens(maxCompletion != null ? maxCompletion : maxTokens, usage, options);
	}

	private static @Nullable Long whole(JsonParser json, JsonToken value, @Nullable Long otherwise) {
		if (value == JsonToken.VALUE_NUMBER_INT) {
			long n = json.getLongValue();
			return n >= 0 ? Long.valueOf(n) : otherwise;
		}
		json.skipChildren();
		return otherwise;
	}

	/**
	 * {@code body} asking for its stream's usage: {@code stream_options.include_usage}
	 * set to {@code true}. A body without {@code stream_options} gets the field spliced
	 * in after its opening brace (nothing else changes); one with it is rewritten.
	 */
	public static byte[] withUsageRequested(byte[] body, RequestTokens tokens) {
		if (!tokens.streamOptions()) {
			int open = 0;
			while (open < body.length && body[open] != '{') {
				open++;
			}
			if (open < body.length) {
				byte[] out = new byte[body.length + INCLUDE_USAGE.length];
				System.arraycopy(body, 0, out, 0, open + 1);
				System.arraycopy(INCLUDE_USAGE, 0, out, open + 1, INCLUDE_USAGE.length);
				System.arraycopy(body, open + 1, out, open + 1 + INCLUDE_USAGE.length, body.length - open - 1);
				// "{" followed directly by "}": an empty object takes no comma.
				return emptyObject(body, open) ? withoutTrailingComma(out, open + INCLUDE_USAGE.length) : out;
			}
			return body;
		}
		JsonNode root = JSON.readTree(body);
		if (!(root instanceof ObjectNode object)) {
			return body;
		}
		JsonNode options = object.get("stream_options");
		ObjectNode o = options instanceof ObjectNode existing ? existing : object.putObject("stream_options");
		o.put("include_usage", true);
		return JSON.writeValueAsBytes(object);
	}

	private static boolean emptyObject(byte[] body, int open) {
		for (int i = open + 1; i < body.length; i++) {
			if (!Character.isWhitespace(body[i])) {
				return body[i] == '}';
			}
		}
		return false;
	}

	private static byte[] withoutTrailingComma(byte[] out, int comma) {
		byte[] trimmed = new byte[out.length - 1];
		System.arraycopy(out, 0, trimmed, 0, comma);
		System.arraycopy(out, comma + 1, trimmed, comma, out.length - comma - 1);
		return trimmed;
	}

}

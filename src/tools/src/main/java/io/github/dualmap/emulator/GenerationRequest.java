package io.github.dualmap.emulator;

import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.dualmap.engine.TextTokenizer;
import io.github.dualmap.prompt.PromptParser;
import org.jspecify.annotations.Nullable;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A validated {@code /v1/completions}, {@code /v1/chat/completions} or
 * {@code /v1/responses} body: the prompt as token ids (text through
 * {@link TextTokenizer}, chat messages and responses input through a fixed chat
 * template), the output length and the streaming options. Validation follows vLLM's
 * OpenAI server: its error types and messages.
 *
 * @param endpoint the endpoint it came from
 * @param model the requested model
 * @param promptTokens the prompt's token ids
 * @param maxTokens tokens to generate
 * @param stream whether to answer with server-sent events
 * @param includeUsage whether a stream ends with a usage chunk
 * @param transcript for {@link Endpoint#RESPONSES}: the prompt's text, which a stored
 * response keeps (with its answer) for requests that continue it; else {@code null}
 * @param store for {@link Endpoint#RESPONSES}: whether to store the response
 * ({@code store}, default true as in OpenAI's API)
 * @param cacheSalt vLLM's {@code cache_salt}: prompts share cached blocks only under
 * equal salts; {@code null} for none
 */
public record GenerationRequest(Endpoint endpoint, String model, int[] promptTokens, int maxTokens, boolean stream,
		boolean includeUsage, @Nullable String transcript, boolean store, @Nullable String cacheSalt) {

	/** The OpenAI endpoints the emulator serves. */
	public enum Endpoint {

		/** {@code /v1/completions}. */
		COMPLETIONS("prompt"),

		/** {@code /v1/chat/completions}. */
		CHAT("messages"),

		/** {@code /v1/responses}. */
		RESPONSES("input");

		private final String promptField;

		Endpoint(String promptField) {
			this.promptField = promptField;
		}

	}

	/** Whether it came from the chat endpoint. */
	public boolean chat() {
		return this.endpoint == Endpoint.CHAT;
	}

	/** vLLM's default {@code max_tokens} for completions (the OpenAI default). */
	static final int DEFAULT_COMPLETION_MAX_TOKENS = 16;

	/**
	 * Parses {@code body} for a server of {@code servedModel} with a context of
	 * {@code maxModelLen} tokens, given the transcripts of stored responses: a responses
	 * request naming one in {@code previous_response_id} continues its transcript (its
	 * own {@code instructions} are then not added: the conversation already has its
	 * system message), an unknown one is vLLM's 404.
	 * @throws ApiException with vLLM's status and message when the request is invalid
	 */
	public static GenerationRequest parse(JsonMapper json, String body, Endpoint endpoint, String servedModel,
			int maxModelLen, Function<String, @Nullable String> storedTranscripts) {
		boolean chat = endpoint == Endpoint.CHAT;
		JsonNode root;
		try {
			root = json.readTree(body);
		}
		catch (JacksonException ex) {
			throw ApiException.badRequest("JSON decode error: " + PromptParser.syntaxError(ex), null);
		}
		if (root == null || !root.isObject()) {
			throw ApiException.badRequest("Input should be a valid dictionary or object to extract fields from", null);
		}
		JsonNode modelNode = root.path("model");
		if (!absent(modelNode) && !modelNode.isString()) {
			throw ApiException.badRequest("model: Input should be a valid string, got " + modelNode, "model");
		}
		String model = modelNode.isString() ? modelNode.stringValue() : servedModel;
		if (!model.equals(servedModel)) {
			throw new ApiException(404, "NotFoundError", "The model `" + model + "` does not exist.", "model");
		}
		String transcript = endpoint == Endpoint.RESPONSES ? responsesPrompt(root, storedTranscripts) : null;
		int[] tokens = switch (endpoint) {
			case CHAT -> chatPrompt(root.path("messages"));
			case RESPONSES -> TextTokenizer.encode(transcript);
			case COMPLETIONS -> completionPrompt(root.path("prompt"));
		};
		if (tokens.length == 0) {
			throw ApiException.badRequest("The prompt cannot be empty.", endpoint.promptField);
		}
		if (tokens.length >= maxModelLen) {
			throw ApiException
				.badRequest(
						"This model's maximum context length is " + maxModelLen + " tokens. However, your request has "
								+ tokens.length + " input tokens. Please reduce the length of the input messages.",
						null);
		}
		String maxField = switch (endpoint) {
			// vLLM takes max_completion_tokens or max_tokens: an explicit null is no
			// value,
			// so it must not shadow max_tokens.
			case CHAT -> absent(root.path("max_completion_tokens")) ? "max_tokens" : "max_completion_tokens";
			case RESPONSES -> "max_output_tokens";
			case COMPLETIONS -> "max_tokens";
		};
		JsonNode maxNode = root.path(maxField);
		int maxTokens;
		if (absent(maxNode)) {
			// vLLM: completions default to 16, chat and responses to the rest of the
			// context.
			maxTokens = endpoint != Endpoint.COMPLETIONS ? maxModelLen - tokens.length
					: Math.min(DEFAULT_COMPLETION_MAX_TOKENS, maxModelLen - tokens.length);
		}
		else {
			maxTokens = laxInt(maxNode, maxField);
			if (maxTokens < 1) {
				throw ApiException.badRequest(maxField + " must be at least 1, got " + maxTokens + ".", maxField);
			}
			if ((long) maxTokens + tokens.length > maxModelLen) {
				throw ApiException.badRequest("'max_tokens' or 'max_completion_tokens' is too large: " + maxTokens
						+ ". This model's maximum context length is " + maxModelLen + " tokens and your request has "
						+ tokens.length + " input tokens (" + maxTokens + " > " + maxModelLen + " - " + tokens.length
						+ ").", "max_tokens");
			}
		}
		JsonNode streamNode = root.path("stream");
		if (!streamNode.isMissingNode() && !streamNode.isNull() && !streamNode.isBoolean()) {
			throw ApiException.badRequest("stream: Input should be a valid boolean, got " + streamNode, "stream");
		}
		boolean stream = streamNode.isBoolean() && streamNode.booleanValue();
		JsonNode streamOptions = root.path("stream_options");
		// vLLM's validate_stream_options (completions and chat): options that Python
		// finds truthy (not null, not an empty object) need stream=True.
		if (endpoint != Endpoint.RESPONSES && !stream && !absent(streamOptions)
				&& !(streamOptions.isObject() && streamOptions.isEmpty())) {
			throw ApiException.badRequest("Stream options can only be defined when `stream=True`.", "stream_options");
		}
		boolean includeUsage = streamOptions.path("include_usage").booleanValue(false);
		JsonNode nNode = root.path("n");
		if (endpoint != Endpoint.RESPONSES && !absent(nNode)) {
			int n = laxInt(nNode, "n");
			if (n < 1) {
				throw ApiException.badRequest("n must be at least 1, got " + n + ".", "n");
			}
			if (n > 1) {
				// Refused rather than answered with one choice: usage and load would
				// be n times smaller than a real engine's.
				throw ApiException.badRequest("n: the emulator serves one choice per request, got " + n, "n");
			}
		}
		JsonNode storeNode = root.path("store");
		if (!storeNode.isMissingNode() && !storeNode.isNull() && !storeNode.isBoolean()) {
			throw ApiException.badRequest("store: Input should be a valid boolean, got " + storeNode, "store");
		}
		JsonNode saltNode = root.path("cache_salt");
		if (!saltNode.isMissingNode() && !saltNode.isNull()
				&& (!saltNode.isString() || saltNode.stringValue().isEmpty())) {
			throw ApiException.badRequest("Parameter 'cache_salt' must be a non-empty string if provided.",
					"cache_salt");
		}
		return new GenerationRequest(endpoint, model, tokens, maxTokens, stream, includeUsage, transcript,
				!storeNode.isBoolean() || storeNode.booleanValue(),
				saltNode.isString() ? saltNode.stringValue() : null);
	}

	/** A whole number optionally with a zero fraction, optionally signed, in a string. */
	private static final Pattern LAX_INT = Pattern.compile("\\s*([+-]?\\d+)(\\.0*)?\\s*");

	/**
	 * An integer field as pydantic's lax mode (vLLM's request models) reads it: a JSON
	 * integer, a number with no fractional part ({@code 5.0}) or a string holding one
	 * ({@code "5"}).
	 * @throws ApiException a 400 naming {@code field} for anything else, or a value
	 * outside the int range
	 */
	private static int laxInt(JsonNode node, String field) {
		if (node.isIntegralNumber() && node.canConvertToInt()) {
			return node.intValue();
		}
		if (node.isFloatingPointNumber() && node.canConvertToExactIntegral() && node.canConvertToInt()) {
			return node.intValue();
		}
		if (node.isString()) {
			Matcher m = LAX_INT.matcher(node.stringValue());
			if (m.matches()) {
				try {
					return Integer.parseInt(m.group(1));
				}
				catch (NumberFormatException ex) {
					// out of range: refused below
				}
			}
		}
		throw ApiException.badRequest(field + ": Input should be a valid integer, got " + node, field);
	}

	/** Whether a field is missing or a JSON null, which vLLM's models read as unset. */
	private static boolean absent(JsonNode node) {
		return node.isMissingNode() || node.isNull();
	}

	private static int[] completionPrompt(JsonNode prompt) {
		if (prompt.isString()) {
			return TextTokenizer.encode(prompt.stringValue());
		}
		if (prompt.isArray() && prompt.size() == 1 && prompt.get(0).isString()) {
			return TextTokenizer.encode(prompt.get(0).stringValue());
		}
		if (prompt.isArray() && prompt.size() > 0 && prompt.get(0).isIntegralNumber()) {
			int[] ids = new int[prompt.size()];
			for (int i = 0; i < ids.length; i++) {
				JsonNode id = prompt.get(i);
				if (!id.isIntegralNumber() || !id.canConvertToInt() || id.intValue() < 0
						|| id.intValue() >= TextTokenizer.VOCAB_SIZE) {
					throw ApiException.badRequest("Token id " + id + " at index " + i + " is out of vocabulary",
							"prompt");
				}
				ids[i] = id.intValue();
			}
			return ids;
		}
		if (prompt.isMissingNode() || prompt.isNull()) {
			throw ApiException.badRequest("Either prompt or prompt_embeds must be provided and non-empty.", "prompt");
		}
		throw ApiException.badRequest(
				"prompt: Input should be a string, a list of one string or a list of token ids, got " + prompt,
				"prompt");
	}

	private static int[] chatPrompt(JsonNode messages) {
		if (!messages.isArray() || messages.isEmpty()) {
			throw ApiException.badRequest("messages: Input should be a non-empty list of messages", "messages");
		}
		StringBuilder text = new StringBuilder();
		for (JsonNode m : messages.values()) {
			JsonNode role = m.path("role");
			if (!role.isString()) {
				throw ApiException.badRequest("messages: each message needs a string 'role', got " + m, "messages");
			}
			turn(text, role.stringValue(), m.path("content"));
		}
		// The generation prompt: a conversation continued by one more turn renders this
		// rendering as its prefix.
		text.append("<|im_start|>assistant\n");
		return TextTokenizer.encode(text);
	}

	/**
	 * The Responses API's prompt through the same template as chat: the transcript of the
	 * response it continues, else {@code instructions} as a system message; then a string
	 * input as a user message, or input items: messages, function calls (as the
	 * assistant's call) and their outputs (as tool messages).
	 */
	private static String responsesPrompt(JsonNode root, Function<String, @Nullable String> storedTranscripts) {
		StringBuilder text = new StringBuilder();
		JsonNode instructions = root.path("instructions");
		JsonNode input = root.path("input");
		JsonNode previous = root.path("previous_response_id");
		if (!previous.isMissingNode() && !previous.isNull()) {
			if (!previous.isString()) {
				throw ApiException.badRequest("previous_response_id: Input should be a valid string, got " + previous,
						"previous_response_id");
			}
			String transcript = storedTranscripts.apply(previous.stringValue());
			if (transcript == null) {
				throw new ApiException(404, "NotFoundError",
						"Response with id '" + previous.stringValue() + "' not found.", "previous_response_id");
			}
			text.append(transcript);
		}
		else if (instructions.isString()) {
			turn(text, "system", instructions);
		}
		else if (!instructions.isMissingNode() && !instructions.isNull()) {
			throw ApiException.badRequest("instructions: Input should be a valid string, got " + instructions,
					"instructions");
		}
		if (input.isString()) {
			turn(text, "user", input);
		}
		else if (input.isArray() && !input.isEmpty()) {
			for (JsonNode item : input.values()) {
				String type = item.path("type").asString("message");
				switch (type) {
					case "message" -> {
						if (!item.path("role").isString()) {
							throw ApiException.badRequest("input: each message needs a string 'role', got " + item,
									"input");
						}
						turn(text, item.path("role").stringValue(), item.path("content"));
					}
					case "function_call" -> turn(text, "assistant",
							item.path("name").asString("") + "(" + item.path("arguments").asString("") + ")");
					case "function_call_output" -> turn(text, "tool", item.path("output"));
					default -> throw ApiException.badRequest(
							"input: only message, function_call and function_call_output items are supported, got "
									+ type,
							"input");
				}
			}
		}
		else {
			throw ApiException.badRequest("input: Input should be a valid string or a non-empty list of items, got "
					+ (input.isMissingNode() ? "nothing" : input), "input");
		}
		text.append("<|im_start|>assistant\n");
		return text.toString();
	}

	private static void turn(StringBuilder text, String role, JsonNode content) {
		text.append("<|im_start|>").append(role).append('\n');
		appendContent(text, content);
		text.append("<|im_end|>\n");
	}

	private static void turn(StringBuilder text, String role, String content) {
		text.append("<|im_start|>").append(role).append('\n').append(content).append("<|im_end|>\n");
	}

	private static void appendContent(StringBuilder text, JsonNode content) {
		if (content.isString()) {
			text.append(content.stringValue());
		}
		else if (content.isArray()) {
			for (JsonNode part : content.values()) {
				// "input_text" and "output_text" are the Responses API's text parts.
				if (!Set.of("text", "input_text", "output_text").contains(part.path("type").asString(""))) {
					throw ApiException.badRequest("Only text content parts are supported, got " + part, "messages");
				}
				text.append(part.path("text").asString(""));
			}
		}
		else if (!content.isMissingNode() && !content.isNull()) {
			throw ApiException.badRequest("messages: content should be a string or a list of parts, got " + content,
					"messages");
		}
	}

}

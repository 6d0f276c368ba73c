package io.github.dualmap.emulator;

import io.github.dualmap.engine.TextTokenizer;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A validated {@code /v1/completions} or {@code /v1/chat/completions} body: the prompt as
 * token ids (text through {@link TextTokenizer}, chat messages through a fixed chat
 * template), the output length and the streaming options. Validation follows vLLM's
 * OpenAI server: its error types and messages.
 *
 * @param chat whether it came from the chat endpoint
 * @param model the requested model
 * @param promptTokens the prompt's token ids
 * @param maxTokens tokens to generate
 * @param stream whether to answer with server-sent events
 * @param includeUsage whether a stream ends with a usage chunk
 */
public record GenerationRequest(boolean chat, String model, int[] promptTokens, int maxTokens, boolean stream,
		boolean includeUsage) {

	/** vLLM's default {@code max_tokens} for completions (the OpenAI default). */
	static final int DEFAULT_COMPLETION_MAX_TOKENS = 16;

	/**
	 * Parses {@code body} for a server of {@code servedModel} with a context of
	 * {@code maxModelLen} tokens.
	 * @throws ApiException with vLLM's status and message when the request is invalid
	 */
	public static GenerationRequest parse(JsonMapper json, String body, boolean chat, String servedModel,
			int maxModelLen) {
		JsonNode root;
		try {
			root = json.readTree(body);
		}
		catch (JacksonException ex) {
			throw ApiException.badRequest("JSON decode error: " + ex.getOriginalMessage(), null);
		}
		if (root == null || !root.isObject()) {
			throw ApiException.badRequest("Input should be a valid dictionary or object to extract fields from", null);
		}
		JsonNode modelNode = root.path("model");
		String model = modelNode.isString() ? modelNode.stringValue() : servedModel;
		if (!model.equals(servedModel)) {
			throw new ApiException(404, "NotFoundError", "The model `" + model + "` does not exist.", "model");
		}
		int[] tokens = chat ? chatPrompt(root.path("messages")) : completionPrompt(root.path("prompt"));
		if (tokens.length == 0) {
			throw ApiException.badRequest("The prompt cannot be empty.", chat ? "messages" : "prompt");
		}
		if (tokens.length >= maxModelLen) {
			throw ApiException
				.badRequest(
						"This model's maximum context length is " + maxModelLen + " tokens. However, your request has "
								+ tokens.length + " input tokens. Please reduce the length of the input messages.",
						null);
		}
		JsonNode maxNode = root
			.path(chat && !root.path("max_completion_tokens").isMissingNode() ? "max_completion_tokens" : "max_tokens");
		int maxTokens;
		if (maxNode.isMissingNode() || maxNode.isNull()) {
			// vLLM: completions default to 16, chat to the rest of the context.
			maxTokens = chat ? maxModelLen - tokens.length
					: Math.min(DEFAULT_COMPLETION_MAX_TOKENS, maxModelLen - tokens.length);
		}
		else if (!maxNode.isIntegralNumber() || !maxNode.canConvertToInt()) {
			throw ApiException.badRequest("max_tokens: Input should be a valid integer, got " + maxNode, "max_tokens");
		}
		else {
			maxTokens = maxNode.intValue();
			if (maxTokens < 1) {
				throw ApiException.badRequest("max_tokens must be at least 1, got " + maxTokens + ".", "max_tokens");
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
		boolean includeUsage = root.path("stream_options").path("include_usage").booleanValue(false);
		return new GenerationRequest(chat, model, tokens, maxTokens, stream, includeUsage);
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
				if (!id.isIntegralNumber() || !id.canConvertToInt() || id.intValue() < 0) {
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
			text.append("<|im_start|>").append(role.stringValue()).append('\n');
			appendContent(text, m.path("content"));
			text.append("<|im_end|>\n");
		}
		// The generation prompt: a conversation continued by one more turn renders this
		// rendering as its prefix.
		text.append("<|im_start|>assistant\n");
		return TextTokenizer.encode(text);
	}

	private static void appendContent(StringBuilder text, JsonNode content) {
		if (content.isString()) {
			text.append(content.stringValue());
		}
		else if (content.isArray()) {
			for (JsonNode part : content.values()) {
				if (!"text".equals(part.path("type").asString(""))) {
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

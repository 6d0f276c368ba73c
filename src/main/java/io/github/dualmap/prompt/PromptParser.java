package io.github.dualmap.prompt;

import io.github.dualmap.core.PrefixHasher;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * Turns an OpenAI completions or chat completions body into the block chain of its
 * canonical prompt. Chat messages render as role and content with unambiguous separators,
 * so a conversation with one more turn shares the previous rendering as a prefix.
 */
public final class PromptParser {

	private final PrefixHasher hasher;

	private final ObjectMapper mapper;

	public PromptParser(PrefixHasher hasher, ObjectMapper mapper) {
		this.hasher = hasher;
		this.mapper = mapper;
	}

	/**
	 * Parses {@code body} sent to {@code path}.
	 * @throws InvalidRequestException when a completions or chat body is malformed
	 */
	public ParsedRequest parse(String path, byte[] body) {
		RequestKind kind = path.endsWith("/chat/completions") ? RequestKind.CHAT
				: path.endsWith("/completions") ? RequestKind.COMPLETION : RequestKind.OTHER;
		if (kind == RequestKind.OTHER) {
			return new ParsedRequest(null, false, null, kind);
		}
		if (body.length == 0) {
			throw new InvalidRequestException("request body is empty; expected a JSON object", null);
		}
		JsonNode root;
		try {
			root = mapper.readTree(body);
		}
		catch (JacksonException ex) {
			throw new InvalidRequestException("request body is not valid JSON: " + ex.getOriginalMessage(), null);
		}
		if (root == null || !root.isObject()) {
			throw new InvalidRequestException("request body must be a JSON object", null);
		}
		JsonNode modelNode = root.get("model");
		if (modelNode != null && !modelNode.isString()) {
			throw new InvalidRequestException("'model' must be a string", "model");
		}
		String model = modelNode == null ? "" : modelNode.asString();
		JsonNode streamNode = root.get("stream");
		if (streamNode != null && !streamNode.isBoolean() && !streamNode.isNull()) {
			throw new InvalidRequestException("'stream' must be a boolean", "stream");
		}
		boolean stream = streamNode != null && streamNode.asBoolean();
		return new ParsedRequest(modelNode == null ? null : model, stream, switch (kind) {
			case CHAT -> hasher.ofText(model, renderChat(root));
			case COMPLETION -> completion(model, root);
			case OTHER -> null;
		}, kind);
	}

	private String renderChat(JsonNode root) {
		JsonNode messages = root.get("messages");
		if (messages == null || !messages.isArray()) {
			throw new InvalidRequestException("'messages' must be an array", "messages");
		}
		StringBuilder out = new StringBuilder();
		JsonNode tools = root.get("tools");
		if (tools != null && !tools.isNull()) {
			out.append("\u0001tools\u0002").append(tools.toString()).append('\u0003');
		}
		for (int i = 0; i < messages.size(); i++) {
			JsonNode m = messages.get(i);
			JsonNode role = m.get("role");
			if (role == null || !role.isString()) {
				throw new InvalidRequestException("'messages[" + i + "].role' must be a string", "messages");
			}
			out.append('\u0001').append(role.asString()).append('\u0002');
			JsonNode content = m.get("content");
			if (content == null || content.isNull()) {
				// Assistant turns with tool calls only carry no content.
			}
			else if (content.isString()) {
				out.append(content.asString());
			}
			else if (content.isArray()) {
				for (JsonNode part : content) {
					JsonNode text = part.get("text");
					out.append(text != null && text.isString() ? text.asString() : part.toString());
				}
			}
			else {
				throw new InvalidRequestException("'messages[" + i + "].content' must be a string or an array",
						"messages");
			}
			out.append('\u0003');
		}
		return out.toString();
	}

	private io.github.dualmap.core.PromptBlocks completion(String model, JsonNode root) {
		JsonNode prompt = root.get("prompt");
		if (prompt == null) {
			throw new InvalidRequestException("'prompt' is required", "prompt");
		}
		// A batch is routed on its first prompt: each prompt is its own sequence in the
		// engine, and the first is the one most likely to share the cached prefix.
		JsonNode first = prompt.isArray() && !prompt.isEmpty() && !prompt.get(0).isNumber() ? prompt.get(0) : prompt;
		if (first.isString()) {
			return hasher.ofText(model, first.asString());
		}
		if (first.isArray()) {
			int[] ids = new int[first.size()];
			for (int i = 0; i < ids.length; i++) {
				JsonNode id = first.get(i);
				if (!id.isIntegralNumber() || !id.canConvertToInt()) {
					throw new InvalidRequestException("'prompt' token ids must be integers", "prompt");
				}
				ids[i] = id.intValue();
			}
			return hasher.ofTokens(model, ids);
		}
		throw new InvalidRequestException("'prompt' must be a string, an array of strings or of token ids", "prompt");
	}

}

package io.github.dualmap.prompt;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import net.openhft.hashing.LongHashFunction;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Canonical text of a chat request: the tools first (engines' chat templates put them in
 * the system prompt), then one record per message in order. Every field is written as
 * {@code tag + length + ':' + value}, so no content can imitate a separator, and a
 * message's record depends only on that message: a conversation with one more turn
 * renders to the previous rendering plus a suffix, which keeps multi-turn sessions on
 * their cached prefix.
 */
final class ChatTranscript {

	private static final LongHashFunction MEDIA_HASH = LongHashFunction.xx3();

	private final JsonMapper mapper;

	private final StringBuilder text = new StringBuilder(256);

	ChatTranscript(JsonMapper mapper) {
		this.mapper = mapper;
	}

	String render(JsonNode body) {
		tools(body);
		JsonNode messages = body.get("messages");
		if (messages == null || messages.isNull()) {
			throw new InvalidRequestException("'messages' is required", "messages");
		}
		if (!messages.isArray()) {
			throw new InvalidRequestException("'messages' must be an array", "messages");
		}
		if (messages.isEmpty()) {
			throw new InvalidRequestException("'messages' must not be empty", "messages");
		}
		for (int i = 0; i < messages.size(); i++) {
			message(messages.get(i), "messages[" + i + "]");
		}
		return text.toString();
	}

	/**
	 * Canonical text of a responses request ({@code /v1/responses}): the tools, then
	 * {@code instructions} as a system message (where the engines put them), then the
	 * input. A string input is one user message; an input array holds messages (items
	 * with a role, rendered as chat messages) and other items (function calls and their
	 * outputs, reasoning, item references), each rendered as its type and canonical JSON.
	 * Every item renders on its own, so a conversation that sends its history back with
	 * one more turn renders to a prefix extension, as chat does.
	 * @return the text, or {@code null} when the request has neither input nor
	 * instructions
	 */
	@Nullable String renderResponses(JsonNode body) {
		tools(body);
		JsonNode instructions = body.get("instructions");
		if (instructions != null && !instructions.isNull()) {
			if (!instructions.isString()) {
				throw new InvalidRequestException("'instructions' must be a string but was " + kindOf(instructions),
						"instructions");
			}
			textMessage("system", instructions.stringValue());
		}
		JsonNode input = body.get("input");
		if (input != null && input.isString()) {
			textMessage("user", input.stringValue());
		}
		else if (input != null && input.isArray()) {
			for (int i = 0; i < input.size(); i++) {
				item(input.get(i), "input[" + i + "]");
			}
		}
		else if (input != null && !input.isNull()) {
			throw new InvalidRequestException(
					"'input' must be a string or an array of input items but was " + kindOf(input), "input");
		}
		return text.isEmpty() ? null : text.toString();
	}

	/** A message with text content, rendered as {@link #message} renders one. */
	private void textMessage(String role, String content) {
		field('M', role);
		field('T', content);
		text.append('\n');
	}

	private void tools(JsonNode body) {
		JsonNode tools = body.get("tools");
		if (tools != null && !tools.isNull()) {
			if (!tools.isArray()) {
				throw new InvalidRequestException("'tools' must be an array", "tools");
			}
			if (!tools.isEmpty()) {
				field('X', canonicalJson(tools));
				text.append('\n');
			}
		}
	}

	private void item(JsonNode item, String at) {
		if (!item.isObject()) {
			throw new InvalidRequestException("'" + at + "' must be an input item object", at);
		}
		JsonNode type = item.get("type");
		boolean typed = type != null && !type.isNull();
		if (typed && !type.isString()) {
			throw new InvalidRequestException("'" + at + ".type' must be a string", at + ".type");
		}
		if (!typed || type.stringValue().equals("message")) {
			// An easy input message ({"role", "content"}) or a full message item.
			message(item, at);
			return;
		}
		field('R', type.stringValue());
		field('J', canonicalJson(item));
		text.append('\n');
	}

	private void message(JsonNode message, String at) {
		if (!message.isObject()) {
			throw new InvalidRequestException("'" + at + "' must be an object", at);
		}
		JsonNode role = message.get("role");
		if (role == null || role.isNull()) {
			throw new InvalidRequestException("'" + at + ".role' is required", at + ".role");
		}
		if (!role.isString() || role.stringValue().isEmpty()) {
			throw new InvalidRequestException("'" + at + ".role' must be a non-empty string", at + ".role");
		}
		field('M', role.stringValue());
		optionalString(message, "name", at);
		optionalString(message, "tool_call_id", at);
		content(message.get("content"), role.stringValue(), at + ".content");
		JsonNode toolCalls = message.get("tool_calls");
		if (toolCalls != null && !toolCalls.isNull()) {
			if (!toolCalls.isArray()) {
				throw new InvalidRequestException("'" + at + ".tool_calls' must be an array", at + ".tool_calls");
			}
			field('C', canonicalJson(toolCalls));
		}
		text.append('\n');
	}

	private void optionalString(JsonNode message, String name, String at) {
		JsonNode value = message.get(name);
		if (value == null || value.isNull()) {
			return;
		}
		if (!value.isString()) {
			throw new InvalidRequestException("'" + at + "." + name + "' must be a string", at + "." + name);
		}
		field(name.equals("name") ? 'N' : 'D', value.stringValue());
	}

	private void content(JsonNode content, String role, String at) {
		if (content == null || content.isNull()) {
			// OpenAI allows an assistant turn without content when it carries tool calls.
			if (!role.equals("assistant")) {
				throw new InvalidRequestException("'" + at + "' is required for role '" + role + "'", at);
			}
			return;
		}
		if (content.isString()) {
			// A string and a single text part render alike, as engines' templates do.
			field('T', content.stringValue());
			return;
		}
		if (!content.isArray()) {
			throw new InvalidRequestException(
					"'" + at + "' must be a string or an array of content parts but was " + kindOf(content), at);
		}
		for (int i = 0; i < content.size(); i++) {
			part(content.get(i), at + "[" + i + "]");
		}
	}

	private void part(JsonNode part, String at) {
		if (!part.isObject()) {
			throw new InvalidRequestException("'" + at + "' must be a content part object", at);
		}
		JsonNode type = part.get("type");
		if (type == null || !type.isString()) {
			throw new InvalidRequestException("'" + at + ".type' must be a string", at + ".type");
		}
		switch (type.stringValue()) {
			// input_text and output_text are the Responses API's parts.
			case "text", "input_text", "output_text" -> field('T', requiredString(part, "text", at));
			case "refusal" -> field('T', requiredString(part, "refusal", at));
			case "image_url" -> field('I', mediaRef(urlOf(part.get("image_url"), at + ".image_url")));
			case "input_image" -> {
				// {"image_url": "<url or data URL>"} or {"file_id": "..."} of an uploaded
				// file.
				JsonNode fileId = part.get("file_id");
				field('I', fileId != null && fileId.isString() && part.get("image_url") == null
						? "file:" + fileId.stringValue() : mediaRef(urlOf(part.get("image_url"), at + ".image_url")));
			}
			case "input_audio" -> {
				JsonNode audio = part.get("input_audio");
				JsonNode data = audio == null ? null : audio.get("data");
				if (data == null || !data.isString()) {
					throw new InvalidRequestException("'" + at + ".input_audio.data' must be a string",
							at + ".input_audio.data");
				}
				field('A', "sha:" + hash(data.stringValue()));
			}
			case "audio_url" -> field('A', mediaRef(urlOf(part.get("audio_url"), at + ".audio_url")));
			case "video_url" -> field('V', mediaRef(urlOf(part.get("video_url"), at + ".video_url")));
			// A part type this gateway does not know still has to separate prompts that
			// differ in it: its canonical JSON, hashed, stands in for it.
			default -> field('U', type.stringValue() + ":" + hash(canonicalJson(part)));
		}
	}

	private static String requiredString(JsonNode part, String name, String at) {
		JsonNode value = part.get(name);
		if (value == null || !value.isString()) {
			throw new InvalidRequestException("'" + at + "." + name + "' must be a string", at + "." + name);
		}
		return value.stringValue();
	}

	private static String urlOf(JsonNode holder, String at) {
		// Both {"image_url": {"url": "..."}} and the older {"image_url": "..."} are seen.
		if (holder != null && holder.isString()) {
			return holder.stringValue();
		}
		JsonNode url = holder == null ? null : holder.get("url");
		if (url == null || !url.isString()) {
			throw new InvalidRequestException("'" + at + ".url' must be a string", at + ".url");
		}
		return url.stringValue();
	}

	/**
	 * A remote URL stands for itself; inline data is replaced by its hash so the
	 * canonical text stays short while two different images still differ.
	 */
	private static String mediaRef(String url) {
		return url.regionMatches(true, 0, "data:", 0, 5) ? "sha:" + hash(url) : url;
	}

	private static String hash(String data) {
		return Long.toHexString(MEDIA_HASH.hashBytes(data.getBytes(StandardCharsets.UTF_8)));
	}

	private void field(char tag, String value) {
		text.append(tag).append(value.length()).append(':').append(value);
	}

	/**
	 * Compact JSON with object keys sorted, so key order in the request does not matter.
	 */
	private String canonicalJson(JsonNode node) {
		return mapper.writeValueAsString(sorted(node));
	}

	private static JsonNode sorted(JsonNode node) {
		if (node.isObject()) {
			List<Map.Entry<String, JsonNode>> entries = new ArrayList<>(node.properties());
			entries.sort(Map.Entry.comparingByKey());
			ObjectNode copy = JsonNodeFactory.instance.objectNode();
			for (Map.Entry<String, JsonNode> e : entries) {
				copy.set(e.getKey(), sorted(e.getValue()));
			}
			return copy;
		}
		if (node.isArray()) {
			var copy = JsonNodeFactory.instance.arrayNode(node.size());
			for (JsonNode element : node) {
				copy.add(sorted(element));
			}
			return copy;
		}
		return node;
	}

	static String kindOf(JsonNode node) {
		return switch (node.getNodeType()) {
			case STRING -> "a string";
			case NUMBER -> "a number";
			case BOOLEAN -> "a boolean";
			case ARRAY -> "an array";
			case OBJECT, POJO -> "an object";
			case NULL, MISSING -> "null";
			case BINARY -> "binary";
		};
	}

}

package io.github.dualmap.prompt;

import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.PromptBlocks;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.StreamWriteConstraints;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Turns an OpenAI-compatible request body into the prompt blocks the router keys on.
 * Completions hash the prompt text or token ids; chat completions and responses hash the
 * canonical {@link ChatTranscript}; other endpoints carry no prompt. The body is read
 * under explicit Jackson stream constraints (nesting depth, token count, string length)
 * so a hostile body is refused with a 400 instead of exhausting the gateway. Thread-safe.
 */
public final class PromptParser {

	/**
	 * Default maximum nesting depth: Jackson's own default, deep enough for the JSON
	 * schemas of tools and structured output.
	 */
	public static final int DEFAULT_MAX_NESTING_DEPTH = 500;

	/** Default maximum number of JSON tokens (values, names, brackets) in one body. */
	public static final long DEFAULT_MAX_TOKEN_COUNT = 1_000_000;

	/** Default maximum length of one JSON string, in characters. */
	public static final int DEFAULT_MAX_STRING_LENGTH = 32 * 1024 * 1024;

	private static final String COMPLETIONS = "/v1/completions";

	private static final String CHAT_COMPLETIONS = "/v1/chat/completions";

	private static final String RESPONSES = "/v1/responses";

	private final PrefixHasher hasher;

	private final JsonMapper mapper;

	private final int maxNestingDepth;

	private final long maxTokenCount;

	private final int maxStringLength;

	public PromptParser(PrefixHasher hasher, JsonMapper mapper) {
		this(hasher, mapper, DEFAULT_MAX_NESTING_DEPTH, DEFAULT_MAX_TOKEN_COUNT, DEFAULT_MAX_STRING_LENGTH);
	}

	/**
	 * @param hasher cuts canonical prompts into blocks
	 * @param mapper its token stream factory (read features included) is reused with the
	 * limits below
	 * @param maxNestingDepth deepest array/object nesting accepted
	 * @param maxTokenCount most JSON tokens accepted in one body
	 * @param maxStringLength longest JSON string accepted, in characters
	 */
	public PromptParser(PrefixHasher hasher, JsonMapper mapper, int maxNestingDepth, long maxTokenCount,
			int maxStringLength) {
		if (maxNestingDepth < 4) {
			// The chat shape itself nests four levels: body, messages, message, parts.
			throw new IllegalArgumentException("maxNestingDepth must be >= 4 but was " + maxNestingDepth);
		}
		if (maxTokenCount <= 0) {
			throw new IllegalArgumentException("maxTokenCount must be > 0 but was " + maxTokenCount);
		}
		if (maxStringLength <= 0) {
			throw new IllegalArgumentException("maxStringLength must be > 0 but was " + maxStringLength);
		}
		StreamReadConstraints constraints = StreamReadConstraints.builder()
			.maxNestingDepth(maxNestingDepth)
			.maxTokenCount(maxTokenCount)
			.maxStringLength(maxStringLength)
			.build();
		// Tools are written back canonically: the writer must take what the reader took.
		JsonFactory factory = mapper.tokenStreamFactory()
			.rebuild()
			.streamReadConstraints(constraints)
			.streamWriteConstraints(StreamWriteConstraints.builder().maxNestingDepth(maxNestingDepth).build())
			.build();
		this.maxNestingDepth = maxNestingDepth;
		this.maxTokenCount = maxTokenCount;
		this.maxStringLength = maxStringLength;
		this.hasher = hasher;
		this.mapper = JsonMapper.builder(factory).build();
	}

	/**
	 * Parses one request.
	 * @param path the request path; the endpoint is recognised by its suffix, so prefixes
	 * such as {@code /openai/v1/completions} work
	 * @param body the raw body
	 * @throws InvalidRequestException when a completions or chat body is malformed
	 */
	public ParsedRequest parse(String path, byte[] body) {
		RequestKind kind = kindOf(path);
		if (kind == RequestKind.OTHER) {
			// Embeddings, rerank, ...: routed by load; only model and stream are of use,
			// read without building the body's tree.
			return withoutPrompt(path, body);
		}
		JsonNode root = read(body);
		if (!root.isObject()) {
			throw new InvalidRequestException(
					"request body must be a JSON object but was " + ChatTranscript.kindOf(root), null);
		}
		String model = model(root);
		boolean stream = stream(root);
		String seed = seed(model, cacheSalt(root));
		PromptBlocks blocks = switch (kind) {
			case CHAT -> hasher.ofText(seed, new ChatTranscript(mapper).render(root));
			case RESPONSES -> responsesPrompt(seed, root);
			default -> completionPrompt(seed, root);
		};
		return new ParsedRequest(model, stream, blocks, kind,
				kind == RequestKind.RESPONSES ? previousResponseId(root) : null);
	}

	/**
	 * The request without its prompt: its top-level {@code model}, {@code stream} and
	 * (Responses API) {@code previous_response_id}, read without building the tree or
	 * materialising any other value, so at little memory whatever the body's size. For a
	 * body the gateway will not parse whole: it is routed by load, and the engine judges
	 * it. Never refuses.
	 */
	public ParsedRequest withoutPrompt(String path, byte[] body) {
		RequestKind kind = kindOf(path);
		String model = null;
		boolean stream = false;
		String previous = null;
		try (JsonParser json = this.mapper.createParser(body)) {
			if (json.nextToken() == JsonToken.START_OBJECT) {
				for (JsonToken t = json.nextToken(); t == JsonToken.PROPERTY_NAME; t = json.nextToken()) {
					String name = json.currentName();
					JsonToken value = json.nextToken();
					if ("model".equals(name) && value == JsonToken.VALUE_STRING) {
						model = json.getString();
					}
					else if ("stream".equals(name) && value == JsonToken.VALUE_TRUE) {
						stream = true;
					}
					else if ("previous_response_id".equals(name) && value == JsonToken.VALUE_STRING
							&& kind == RequestKind.RESPONSES) {
						previous = json.getString();
					}
					json.skipChildren();
				}
			}
		}
		catch (JacksonException ex) {
			// What was read is what there is: the engine answers for the rest.
		}
		return new ParsedRequest(model, stream, null, kind, previous);
	}

	/**
	 * Refuses, as {@link #parse} would, a body that is not one JSON object: empty, not
	 * valid JSON, beyond the parser's limits, or another JSON value. Reads it as a stream
	 * without building its tree. For a body read before a route was chosen that named no
	 * model: when no route then takes it, this refusal is the answer rather than "no
	 * model".
	 * @throws InvalidRequestException naming what is wrong
	 */
	public void requireJsonObject(byte[] body) {
		requireSome(body);
		try (JsonParser json = this.mapper.createParser(body)) {
			JsonToken first = json.nextToken();
			// The whole value first, as parse reads its tree before looking at its kind.
			json.skipChildren();
			if (first != JsonToken.START_OBJECT) {
				throw new InvalidRequestException("request body must be a JSON object but was " + kindOf(first), null);
			}
		}
		catch (JacksonException ex) {
			throw unreadable(ex);
		}
	}

	private static String kindOf(@Nullable JsonToken token) {
		if (token == null) {
			return "nothing";
		}
		return switch (token) {
			case VALUE_STRING -> "a string";
			case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
			case VALUE_TRUE, VALUE_FALSE -> "a boolean";
			case START_ARRAY -> "an array";
			case VALUE_NULL -> "null";
			default -> "not a JSON object";
		};
	}

	/**
	 * The top-level {@code model} of a JSON object body, read without building the tree
	 * and stopping once found; {@code null} when the body is not a JSON object (or is
	 * beyond the parser's limits) or has no string {@code model}. For routing by model
	 * before a route is chosen: never refuses.
	 */
	public @Nullable String modelOf(byte[] body) {
		try (JsonParser json = this.mapper.createParser(body)) {
			if (json.nextToken() != JsonToken.START_OBJECT) {
				return null;
			}
			for (JsonToken t = json.nextToken(); t == JsonToken.PROPERTY_NAME; t = json.nextToken()) {
				boolean model = "model".equals(json.currentName());
				JsonToken value = json.nextToken();
				if (model) {
					return value == JsonToken.VALUE_STRING ? json.getString() : null;
				}
				json.skipChildren();
			}
			return null;
		}
		catch (JacksonException ex) {
			return null;
		}
	}

	/**
	 * The response id a path addresses under the Responses API
	 * ({@code .../v1/responses/{id}}, {@code .../{id}/cancel},
	 * {@code .../{id}/input_items}: retrieve, delete, cancel, list its input), else
	 * {@code null}. Such a request can only be answered by the instance that stored the
	 * response.
	 */
	public static @Nullable String responseIdInPath(String path) {
		int at = path.lastIndexOf(RESPONSES + "/");
		if (at < 0) {
			return null;
		}
		String rest = path.substring(at + RESPONSES.length() + 1);
		int slash = rest.indexOf('/');
		String id = slash < 0 ? rest : rest.substring(0, slash);
		String tail = slash < 0 ? "" : rest.substring(slash);
		boolean known = tail.isEmpty() || tail.equals("/") || tail.equals("/cancel") || tail.equals("/input_items");
		return known && !id.isEmpty() ? id : null;
	}

	/** The endpoint a path addresses, by its suffix. */
	public static RequestKind kindOf(String path) {
		String p = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
		if (p.endsWith(CHAT_COMPLETIONS)) {
			return RequestKind.CHAT;
		}
		if (p.endsWith(COMPLETIONS)) {
			return RequestKind.COMPLETION;
		}
		if (p.endsWith(RESPONSES)) {
			return RequestKind.RESPONSES;
		}
		return RequestKind.OTHER;
	}

	private JsonNode read(byte[] body) {
		requireSome(body);
		try {
			return mapper.readTree(body);
		}
		catch (JacksonException ex) {
			throw unreadable(ex);
		}
	}

	private static void requireSome(byte[] body) {
		if (body.length == 0) {
			throw new InvalidRequestException("request body is empty; expected a JSON object", null);
		}
	}

	/** The refusal of a body Jackson could not read: past a parser limit, or not JSON. */
	private InvalidRequestException unreadable(JacksonException ex) {
		if (ex instanceof StreamConstraintsException limit) {
			return new InvalidRequestException(400, OpenAiError.INVALID_REQUEST,
					"request body exceeds a parser limit: " + limitExceeded(limit), null, ex);
		}
		return new InvalidRequestException(400, OpenAiError.INVALID_REQUEST,
				"request body is not valid JSON: " + syntaxError(ex), null, ex);
	}

	/** Which limit a body broke, in the terms of the settings that set it. */
	private String limitExceeded(StreamConstraintsException ex) {
		String jackson = String.valueOf(ex.getOriginalMessage());
		if (jackson.contains("nesting depth")) {
			return "arrays and objects nest deeper than " + this.maxNestingDepth
					+ " levels (dualmap.prompt.max-nesting-depth)";
		}
		if (jackson.contains("Token count")) {
			return "more than " + this.maxTokenCount
					+ " JSON tokens (values, names, brackets; dualmap.prompt.max-json-tokens)";
		}
		if (jackson.contains("String value length")) {
			return "a string is longer than " + this.maxStringLength + " characters";
		}
		if (jackson.contains("Number value length")) {
			return "a number has more digits than allowed";
		}
		return "the body is larger or deeper than the gateway reads";
	}

	/**
	 * A client's view of a syntax error: Jackson's message without the names of its own
	 * types and settings (in back quotes) or its source references, with the position.
	 * Also what the exec jar's tools say of malformed JSON they read.
	 * @param ex what Jackson threw
	 * @return the message
	 */
	public static String syntaxError(JacksonException ex) {
		String jackson = String.valueOf(ex.getOriginalMessage());
		String message = jackson.startsWith("Trailing token") ? "more content after the JSON value"
				: jackson.replaceAll("[:;,]?\\s*enable `[^`]*` to allow", "")
					.replaceAll("\\s*\\([^()]*`[^()]*\\)", "")
					.replaceAll("\\s*\\([^()]*\\[Source:[^\\]]*\\][^()]*\\)", "")
					.replaceAll("\\s*\\[Source:[^\\]]*\\]", "")
					.strip();
		TokenStreamLocation at = ex.getLocation();
		return at != null && at.getLineNr() > 0
				? message + " (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")" : message;
	}

	/** Unknown endpoints are routed by load: read what is there, never refuse. */

	private static @Nullable String model(JsonNode root) {
		JsonNode model = root.get("model");
		if (model == null || model.isNull()) {
			return null;
		}
		if (!model.isString()) {
			throw new InvalidRequestException("'model' must be a string but was " + ChatTranscript.kindOf(model),
					"model");
		}
		return model.stringValue();
	}

	/**
	 * What a request's chain is hashed from before its text: the model (a LoRA adapter is
	 * a model name of its own, and the engine never shares cache across adapters) and
	 * vLLM's {@code cache_salt}, which keeps equal prompts with different salts apart in
	 * the engine's prefix cache. Keying on the salt too sends such prompts where they can
	 * hit, and keeps the router from counting a salted prompt as cached where only
	 * another tenant's copy is.
	 */
	static String seed(@Nullable String model, @Nullable String cacheSalt) {
		String m = model == null ? "" : model;
		// NUL cannot occur in a model name that a server accepts: the pair is
		// unambiguous.
		return cacheSalt == null ? m : m + '\0' + cacheSalt;
	}

	/** vLLM refuses a salt that is not a non-empty string; so does the gateway. */
	private static @Nullable String cacheSalt(JsonNode root) {
		JsonNode salt = root.get("cache_salt");
		if (salt == null || salt.isNull()) {
			return null;
		}
		if (!salt.isString() || salt.stringValue().isEmpty()) {
			throw new InvalidRequestException("'cache_salt' must be a non-empty string if provided but was "
					+ (salt.isString() ? "empty" : ChatTranscript.kindOf(salt)), "cache_salt");
		}
		return salt.stringValue();
	}

	private static @Nullable String previousResponseId(JsonNode root) {
		JsonNode id = root.get("previous_response_id");
		if (id == null || id.isNull()) {
			return null;
		}
		if (!id.isString()) {
			throw new InvalidRequestException(
					"'previous_response_id' must be a string but was " + ChatTranscript.kindOf(id),
					"previous_response_id");
		}
		return id.stringValue();
	}

	private static boolean stream(JsonNode root) {
		JsonNode stream = root.get("stream");
		if (stream == null || stream.isNull()) {
			return false;
		}
		if (!stream.isBoolean()) {
			throw new InvalidRequestException("'stream' must be a boolean but was " + ChatTranscript.kindOf(stream),
					"stream");
		}
		return stream.booleanValue();
	}

	/**
	 * A responses request without {@code input} (a stored prompt template, or a turn that
	 * only continues {@code previous_response_id}) carries nothing to key on here: it is
	 * routed by load, and the engine answers for what it lacks.
	 */
	private @Nullable PromptBlocks responsesPrompt(String model, JsonNode root) {
		String transcript = new ChatTranscript(mapper).renderResponses(root);
		return transcript == null ? null : hasher.ofText(model, transcript);
	}

	/**
	 * A batch ({@code prompt} as an array of prompts) runs as separate sequences in the
	 * engine, so concatenating them would key on text the engine never caches. The chain
	 * is the first prompt's (batches are typically built around one shared prefix), and
	 * the token estimate is the whole batch's, since the engine prefills all of it.
	 */
	private @Nullable PromptBlocks completionPrompt(String model, JsonNode root) {
		JsonNode embeds = root.get("prompt_embeds");
		if (embeds != null && !embeds.isNull()) {
			boolean strings = embeds.isString()
					|| (embeds.isArray() && !embeds.isEmpty() && embeds.valueStream().allMatch(JsonNode::isString));
			if (!strings) {
				throw new InvalidRequestException(
						"'prompt_embeds' must be a base64 string or a non-empty array of them but was "
								+ ChatTranscript.kindOf(embeds),
						"prompt_embeds");
			}
			// vLLM's prompt embeddings (--enable-prompt-embeds) are a serialized tensor,
			// whose header differs with the length: no prefix of it names a cached
			// prefix.
			// Routed by load, whatever 'prompt' says beside it.
			return null;
		}
		JsonNode prompt = root.get("prompt");
		if (prompt == null || prompt.isNull()) {
			throw new InvalidRequestException("'prompt' is required", "prompt");
		}
		if (prompt.isString()) {
			return hasher.ofText(model, prompt.stringValue());
		}
		if (!prompt.isArray()) {
			throw new InvalidRequestException(
					"'prompt' must be a string, an array of strings, an array of token ids or an array of token-id arrays but was "
							+ ChatTranscript.kindOf(prompt),
					"prompt");
		}
		if (prompt.isEmpty()) {
			throw new InvalidRequestException("'prompt' must not be an empty array", "prompt");
		}
		JsonNode first = prompt.get(0);
		if (first.isNumber()) {
			return hasher.ofTokens(model, tokenIds(prompt, "prompt"));
		}
		if (first.isString()) {
			PromptBlocks head = hasher.ofText(model, first.stringValue());
			long tokens = head.promptTokens();
			for (int i = 1; i < prompt.size(); i++) {
				JsonNode element = prompt.get(i);
				if (!element.isString()) {
					throw new InvalidRequestException("'prompt[" + i + "]' must be a string like the other prompts",
							"prompt");
				}
				tokens += hasher.ofText(model, element.stringValue()).promptTokens();
			}
			return batch(head, tokens);
		}
		if (first.isArray()) {
			PromptBlocks head = hasher.ofTokens(model, tokenIds(first, "prompt[0]"));
			long tokens = head.promptTokens();
			for (int i = 1; i < prompt.size(); i++) {
				JsonNode element = prompt.get(i);
				if (!element.isArray()) {
					throw new InvalidRequestException("'prompt[" + i + "]' must be an array of token ids", "prompt");
				}
				tokens += tokenIds(element, "prompt[" + i + "]").length;
			}
			return batch(head, tokens);
		}
		throw new InvalidRequestException("'prompt[0]' must be a string, a token id or an array of token ids but was "
				+ ChatTranscript.kindOf(first), "prompt");
	}

	private static PromptBlocks batch(PromptBlocks head, long tokens) {
		return new PromptBlocks(head.chain(), head.blockTokens(), (int) Math.min(Integer.MAX_VALUE, tokens));
	}

	private static int[] tokenIds(JsonNode array, String at) {
		int[] ids = new int[array.size()];
		for (int i = 0; i < ids.length; i++) {
			JsonNode id = array.get(i);
			if (!id.isIntegralNumber() || !id.canConvertToInt() || id.intValue() < 0) {
				throw new InvalidRequestException(
						"'" + at + "[" + i + "]' must be a non-negative integer token id but was "
								+ (id.isNumber() ? id.asString() : ChatTranscript.kindOf(id)),
						"prompt");
			}
			ids[i] = id.intValue();
		}
		return ids;
	}

}

package io.github.dualmap.emulator;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import io.github.dualmap.emulator.EngineDriver.TokenEvent;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The Responses API's answers ({@code /v1/responses}) as vLLM sends them for a text
 * answer: the response object, and for a stream the events {@code response.created} and
 * {@code response.in_progress} at once (before prefill), then at the first token
 * {@code response.output_item.added} and {@code response.content_part.added}, a
 * {@code response.output_text.delta} per token, and at the end the {@code .done} events
 * and {@code response.completed} with the usage. One per request.
 */
final class ResponsesApi {

	private final JsonMapper json;

	private final GenerationRequest request;

	private final String id;

	private final long createdAt;

	private final AtomicInteger sequence = new AtomicInteger();

	/** The completed response, built once for the stream, the answer and the store. */
	private volatile @Nullable ObjectNode completed;

	ResponsesApi(JsonMapper json, GenerationRequest request, String id, long createdAt) {
		this.json = json;
		this.request = request;
		this.id = id;
		this.createdAt = createdAt;
	}

	/** The response object; {@code text} and {@code last} are null while in progress. */
	ObjectNode response(String status, @Nullable String text, @Nullable TokenEvent last) {
		ObjectNode node = this.json.createObjectNode();
		node.put("id", this.id);
		node.put("object", "response");
		node.put("created_at", this.createdAt);
		node.put("model", this.request.model());
		node.put("status", status);
		// Fields vLLM's ResponsesResponse echoes from the request and OpenAI's schema
		// requires of every response (the OpenAI SDK reads them), at the values of a
		// text answer: no tools, default sampling.
		node.putNull("incomplete_details");
		node.putNull("metadata");
		node.put("parallel_tool_calls", true);
		node.put("temperature", 1.0);
		node.put("top_p", 1.0);
		node.put("tool_choice", "auto");
		node.putArray("tools");
		node.put("max_output_tokens", this.request.maxTokens());
		var output = node.putArray("output");
		if (text != null) {
			output.add(message("completed", text));
		}
		if (last != null) {
			ObjectNode usage = node.putObject("usage");
			usage.put("input_tokens", last.promptTokens());
			usage.putObject("input_tokens_details").put("cached_tokens", last.cachedTokens());
			usage.put("output_tokens", last.index());
			usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
			usage.put("total_tokens", last.promptTokens() + last.index());
		}
		else {
			node.putNull("usage");
		}
		return node;
	}

	/** The completed response after {@code last}, the last token event. */
	ObjectNode completed(TokenEvent last) {
		ObjectNode done = this.completed;
		if (done == null) {
			done = response("completed", FillerText.tokens(last.index()), last);
			this.completed = done;
		}
		return done;
	}

	/** The server-sent events of a streamed answer of {@code tokens}. */
	Flux<String> events(Flux<TokenEvent> tokens) {
		Flux<String> opening = Flux.defer(
				() -> Flux.just(event("response.created", e -> e.set("response", response("in_progress", null, null))),
						event("response.in_progress", e -> e.set("response", response("in_progress", null, null)))));
		// Built in emission order: every event takes the next sequence number.
		Flux<String> answer = tokens.concatMap(t -> {
			List<String> out = new ArrayList<>(8);
			if (t.index() == 1) {
				out.add(event("response.output_item.added", e -> {
					e.put("output_index", 0);
					e.set("item", message("in_progress", null));
				}));
				out.add(event("response.content_part.added", e -> {
					text(e);
					e.set("part", part(""));
				}));
			}
			out.add(event("response.output_text.delta", e -> {
				text(e);
				e.put("delta", FillerText.token(t.index()));
				e.putArray("logprobs");
			}));
			if (t.last()) {
				String text = FillerText.tokens(t.index());
				out.add(event("response.output_text.done", e -> {
					text(e);
					e.put("text", text);
					e.putArray("logprobs");
				}));
				out.add(event("response.content_part.done", e -> {
					text(e);
					e.set("part", part(text));
				}));
				out.add(event("response.output_item.done", e -> {
					e.put("output_index", 0);
					e.set("item", message("completed", text));
				}));
				out.add(event("response.completed", e -> e.set("response", completed(t))));
			}
			return Flux.fromIterable(out);
		});
		return opening.concatWith(answer).onErrorResume(ApiException.class, ex -> Flux.just(event("error", e -> {
			e.put("code", String.valueOf(ex.status()));
			e.put("message", ex.getMessage());
			e.putNull("param");
		})));
	}

	private String event(String type, Consumer<ObjectNode> fields) {
		ObjectNode e = this.json.createObjectNode();
		e.put("type", type);
		e.put("sequence_number", this.sequence.getAndIncrement());
		fields.accept(e);
		return "event: " + type + "\ndata: " + this.json.writeValueAsString(e) + "\n\n";
	}

	private void text(ObjectNode e) {
		e.put("item_id", itemId());
		e.put("output_index", 0);
		e.put("content_index", 0);
	}

	private String itemId() {
		return "msg_" + this.id.substring("resp_".length());
	}

	private ObjectNode message(String status, @Nullable String text) {
		ObjectNode item = this.json.createObjectNode();
		item.put("id", itemId());
		item.put("type", "message");
		item.put("role", "assistant");
		item.put("status", status);
		var content = item.putArray("content");
		if (text != null) {
			content.add(part(text));
		}
		return item;
	}

	private ObjectNode part(String text) {
		ObjectNode part = this.json.createObjectNode();
		part.put("type", "output_text");
		part.put("text", text);
		part.putArray("annotations");
		return part;
	}

}

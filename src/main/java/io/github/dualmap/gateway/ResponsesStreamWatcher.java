package io.github.dualmap.gateway;

import java.nio.charset.StandardCharsets;
import java.util.Set;

import org.springframework.core.io.buffer.DataBuffer;

/**
 * Finds the first token of a streamed Responses API answer ({@code /v1/responses} with
 * {@code "stream": true}). Unlike chat completions, such a stream opens with
 * {@code response.created} and {@code response.in_progress} events before prefill is done
 * (vLLM and SGLang send them at once), so its first body byte says nothing about prefill.
 * The first token is the first server-sent event whose {@code event:} line names anything
 * else ({@code response.output_item.added}, a delta, ..., or an error or the end). Reads
 * the buffers without consuming them, across chunk boundaries, keeping only the event
 * name being read. Not thread-safe: one per response, fed in order.
 */
final class ResponsesStreamWatcher {

	/** Events a Responses stream sends before the model produced anything. */
	private static final Set<String> BEFORE_FIRST_TOKEN = Set.of("response.created", "response.in_progress",
			"response.queued");

	private static final byte[] EVENT = "event:".getBytes(StandardCharsets.US_ASCII);

	/** Longest event name read; a longer one is not one of the opening events. */
	private static final int MAX_NAME = 64;

	/**
	 * Bytes of the current line matched against {@code event:} so far; -1: not an event
	 * line.
	 */
	private int matched;

	private final StringBuilder name = new StringBuilder(MAX_NAME);

	private boolean firstToken;

	/**
	 * Reads {@code buffer}; true once the first token has been seen (in it or before).
	 */
	boolean firstTokenIn(DataBuffer buffer) {
		int start = buffer.readPosition();
		int end = buffer.writePosition();
		for (int i = start; i < end && !this.firstToken; i++) {
			accept(buffer.getByte(i));
		}
		return this.firstToken;
	}

	private void accept(byte b) {
		if (b == '\n' || b == '\r') {
			if (this.matched == EVENT.length) {
				String event = this.name.toString().strip();
				this.firstToken = !event.isEmpty() && !BEFORE_FIRST_TOKEN.contains(event);
			}
			this.matched = 0;
			this.name.setLength(0);
			return;
		}
		if (this.matched < 0) {
			return;
		}
		if (this.matched < EVENT.length) {
			this.matched = (b == EVENT[this.matched]) ? this.matched + 1 : -1;
			return;
		}
		if (this.name.length() < MAX_NAME) {
			this.name.append((char) (b & 0xff));
		}
		else {
			// Too long for an opening event: whatever it is, the model is answering.
			this.firstToken = true;
		}
	}

}

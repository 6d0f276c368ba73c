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
 * else ({@code response.output_item.added}, a delta, ..., or an error). A server that
 * sends events without {@code event:} lines sends the same two opening events first, so
 * there the third event counts. Reads the buffers without consuming them, across chunk
 * boundaries, keeping only the event name being read. Not thread-safe: one per response,
 * fed in order.
 */
final class ResponsesStreamWatcher {

	/** Events a Responses stream sends before the model produced anything. */
	private static final Set<String> BEFORE_FIRST_TOKEN = Set.of("response.created", "response.in_progress",
			"response.queued");

	/**
	 * Unnamed events a stream opens with: {@code response.created}, {@code .in_progress}.
	 */
	private static final int OPENING_EVENTS = 2;

	private static final byte[] EVENT = "event:".getBytes(StandardCharsets.US_ASCII);

	private static final byte[] DATA = "data:".getBytes(StandardCharsets.US_ASCII);

	/** Longest event name read; a longer one is not one of the opening events. */
	private static final int MAX_NAME = 64;

	/**
	 * Bytes of the current line matching {@code event:} so far; -1: not an event line.
	 */
	private int event;

	/** Bytes of the current line matching {@code data:} so far; -1: not a data line. */
	private int data;

	private int lineLength;

	private boolean afterCarriageReturn;

	private final StringBuilder name = new StringBuilder(MAX_NAME);

	/** Whether the event being read has data, and whether an event line named it. */
	private boolean blockData;

	private boolean blockNamed;

	private int unnamedEvents;

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
		if (b == '\n' && this.afterCarriageReturn) {
			// The second half of a CRLF: the line already ended.
			this.afterCarriageReturn = false;
			return;
		}
		this.afterCarriageReturn = b == '\r';
		if (b == '\n' || b == '\r') {
			endLine();
			return;
		}
		this.lineLength++;
		this.event = match(EVENT, this.event, b);
		this.data = match(DATA, this.data, b);
		if (this.event == EVENT.length && this.lineLength > EVENT.length) {
			if (this.name.length() < MAX_NAME) {
				this.name.append((char) (b & 0xff));
			}
			else {
				// Too long for an opening event: whatever it is, the model is answering.
				this.firstToken = true;
			}
		}
	}

	private static int match(byte[] prefix, int matched, byte b) {
		if (matched < 0 || matched == prefix.length) {
			return matched;
		}
		return b == prefix[matched] ? matched + 1 : -1;
	}

	private void endLine() {
		if (this.lineLength == 0) {
			// A blank line ends an event.
			if (this.blockData && !this.blockNamed && ++this.unnamedEvents > OPENING_EVENTS) {
				this.firstToken = true;
			}
			this.blockData = false;
			this.blockNamed = false;
		}
		else if (this.event == EVENT.length) {
			String named = this.name.toString().strip();
			if (!named.isEmpty()) {
				this.blockNamed = true;
				this.firstToken = !BEFORE_FIRST_TOKEN.contains(named);
			}
		}
		else if (this.data == DATA.length) {
			this.blockData = true;
		}
		this.event = 0;
		this.data = 0;
		this.lineLength = 0;
		this.name.setLength(0);
	}

}

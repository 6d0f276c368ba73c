package io.github.dualmap.gateway;

import org.jspecify.annotations.Nullable;

import org.springframework.core.io.buffer.DataBuffer;

/**
 * Reads the id of a Responses API answer from the start of its body without consuming it:
 * the first {@code "id": "<value>"} member, which is the response's own in a non-streamed
 * response object ({@code {"id":"resp_...", ...}}) and in the {@code response.created}
 * event that opens a stream ({@code {"response":{"id":...}}} or {@code {"type":...,
 * "response":{"id":...}}}). Gives up past {@value #MAX_SCAN} bytes or on a value that
 * does not look like an id. Not thread-safe: one per response, fed in order.
 */
final class ResponseIdReader {

	/** Bytes read at most before giving up. */
	static final int MAX_SCAN = 16 * 1024;

	private static final byte[] KEY = "\"id\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

	private enum State {

		/** Looking for {@code "id"}. */
		KEY,
		/** After the key, before the colon. */
		COLON,
		/** After the colon, before the opening quote. */
		QUOTE,
		/** Inside the value. */
		VALUE,
		/** Found, or given up. */
		DONE

	}

	private State state = State.KEY;

	private int matched;

	private int scanned;

	private final StringBuilder value = new StringBuilder(48);

	private @Nullable String id;

	/** Reads {@code buffer}; true once done (found or given up). */
	boolean read(DataBuffer buffer) {
		for (int i = buffer.readPosition(); i < buffer.writePosition() && this.state != State.DONE; i++) {
			if (++this.scanned > MAX_SCAN) {
				this.state = State.DONE;
				break;
			}
			accept((char) (buffer.getByte(i) & 0xff));
		}
		return this.state == State.DONE;
	}

	/** The id found, or {@code null}. */
	@Nullable String id() {
		return this.id;
	}

	private void accept(char c) {
		switch (this.state) {
			case KEY -> {
				this.matched = (c == KEY[this.matched]) ? this.matched + 1 : (c == KEY[0] ? 1 : 0);
				if (this.matched == KEY.length) {
					this.state = State.COLON;
				}
			}
			case COLON -> {
				if (c == ':') {
					this.state = State.QUOTE;
				}
				else if (!Character.isWhitespace(c)) {
					// "id" was a value, not a member name: look on.
					restart();
				}
			}
			case QUOTE -> {
				if (c == '"') {
					this.state = State.VALUE;
				}
				else if (!Character.isWhitespace(c)) {
					// A non-string id (a number, an object): not a response id.
					restart();
				}
			}
			case VALUE -> {
				if (c == '"') {
					this.id = this.value.isEmpty() ? null : this.value.toString();
					this.state = State.DONE;
				}
				else if (idChar(c) && this.value.length() < StoredResponses.MAX_ID_LENGTH) {
					this.value.append(c);
				}
				else {
					this.state = State.DONE;
				}
			}
			case DONE -> {
			}
		}
	}

	private void restart() {
		this.state = State.KEY;
		this.matched = 0;
	}

	private static boolean idChar(char c) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'
				|| c == '.' || c == ':';
	}

}

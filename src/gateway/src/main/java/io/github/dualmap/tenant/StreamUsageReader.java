package io.github.dualmap.tenant;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads the usage out of a server-sent event stream (chat and text completions' final
 * usage chunk, a Responses API {@code response.completed} event) and counts the events
 * that carry output, whose number stands in for the completion tokens of a stream that
 * ends without usage (vLLM sends about one token per event). Passes the stream on event
 * by event; when the gateway asked for the usage on the client's behalf
 * ({@code stream_options.include_usage}), it drops that usage-only chunk. An event larger
 * than the limit stops the reading: from there on bytes pass as they come. Not
 * thread-safe: one per response, fed in order.
 */
public final class StreamUsageReader {

	private static final byte[] USAGE = "\"usage\"".getBytes(StandardCharsets.US_ASCII);

	private static final byte[] RESPONSE_EVENT = "\"type\":\"response.".getBytes(StandardCharsets.US_ASCII);

	private static final byte[] DELTA_EVENT = ".delta\"".getBytes(StandardCharsets.US_ASCII);

	/**
	 * The delta of the chunk vLLM and SGLang open a chat stream with: the role, and no
	 * token yet.
	 */
	private static final byte[] ROLE_ONLY = "\"role\":\"assistant\",\"content\":\"\""
		.getBytes(StandardCharsets.US_ASCII);

	private static final JsonMapper JSON = JsonMapper.shared();

	private final boolean dropUsageChunk;

	private final int maxEventBytes;

	private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

	private boolean passThrough;

	private @Nullable TokenUsage usage;

	private long outputEvents;

	/**
	 * @param dropUsageChunk whether the usage-only chunk ({@code "choices": []} with
	 * {@code usage}) is removed from the stream
	 * @param maxEventBytes largest event read
	 */
	public StreamUsageReader(boolean dropUsageChunk, int maxEventBytes) {
		this.dropUsageChunk = dropUsageChunk;
		this.maxEventBytes = maxEventBytes;
	}

	/** Reads {@code chunk}; returns the bytes to pass on now (whole events). */
	public byte[] accept(byte[] chunk) {
		if (this.passThrough) {
			return chunk;
		}
		this.pending.write(chunk, 0, chunk.length);
		byte[] buffered = this.pending.toByteArray();
		ByteArrayOutputStream out = new ByteArrayOutputStream(buffered.length);
		int start = 0;
		int end;
		while ((end = eventEnd(buffered, start)) > 0) {
			if (keep(buffered, start, end)) {
				out.write(buffered, start, end - start);
			}
			start = end;
		}
		this.pending.reset();
		if (buffered.length - start > this.maxEventBytes) {
			// An event past the limit: pass it and the rest of the stream unread.
			this.passThrough = true;
			out.write(buffered, start, buffered.length - start);
		}
		else {
			this.pending.write(buffered, start, buffered.length - start);
		}
		return out.toByteArray();
	}

	/** The bytes still held at the end of the stream (an event without its end). */
	public byte[] flush() {
		byte[] rest = this.pending.toByteArray();
		this.pending.reset();
		return rest;
	}

	/** The usage the stream reported, {@code null} until it did. */
	public @Nullable TokenUsage usage() {
		return this.usage;
	}

	/** Events seen that carried output (not the usage chunk, not {@code [DONE]}). */
	public long outputEvents() {
		return this.outputEvents;
	}

	/**
	 * The index just past the event starting at {@code from}, or -1 if it is not whole.
	 */
	private static int eventEnd(byte[] b, int from) {
		for (int i = from; i < b.length; i++) {
			if (b[i] == '\n') {
				if (i + 1 < b.length && b[i + 1] == '\n') {
					return i + 2;
				}
				if (i + 2 < b.length && b[i + 1] == '\r' && b[i + 2] == '\n') {
					return i + 3;
				}
			}
			else if (b[i] == '\r' && i + 1 < b.length && b[i + 1] == '\r') {
				return i + 2;
			}
		}
		return -1;
	}

	/** Reads one whole event; whether it is passed on. */
	private boolean keep(byte[] b, int start, int end) {
		String data = data(b, start, end);
		if (data == null || data.equals("[DONE]")) {
			return true;
		}
		// A Responses API event carries output when it is a delta; a completion chunk
		// does, but for the one that opens a chat stream with the role alone.
		boolean output = contains(b, start, end, RESPONSE_EVENT) ? contains(b, start, end, DELTA_EVENT)
				: !contains(b, start, end, ROLE_ONLY);
		if (!contains(b, start, end, USAGE)) {
			this.outputEvents += output ? 1 : 0;
			return true;
		}
		JsonNode event;
		try {
			event = JSON.readTree(data);
		}
		catch (JacksonException ex) {
			this.outputEvents += output ? 1 : 0;
			return true;
		}
		JsonNode response = event.get("response");
		TokenUsage found = TokenUsage.of(event.get("usage"));
		if (found == null && response != null) {
			found = TokenUsage.of(response.get("usage"));
		}
		if (found == null) {
			this.outputEvents += output ? 1 : 0;
			return true;
		}
		this.usage = found;
		JsonNode choices = event.get("choices");
		boolean usageOnly = choices != null && choices.isArray() && choices.isEmpty();
		if (!usageOnly && response == null) {
			this.outputEvents++;
		}
		return !(usageOnly && this.dropUsageChunk);
	}

	/** The event's data lines joined, {@code null} for an event without data. */
	private static @Nullable String data(byte[] b, int start, int end) {
		String event = new String(b, start, end - start, StandardCharsets.UTF_8);
		StringBuilder data = null;
		for (String line : event.split("\r\n|\r|\n")) {
			if (line.startsWith("data:")) {
				String value = line.substring(5);
				value = value.startsWith(" ") ? value.substring(1) : value;
				if (data == null) {
					data = new StringBuilder(value);
				}
				else {
					data.append('\n').append(value);
				}
			}
		}
		return data == null ? null : data.toString().strip();
	}

	private static boolean contains(byte[] b, int start, int end, byte[] what) {
		outer: for (int i = start; i <= end - what.length; i++) {
			for (int j = 0; j < what.length; j++) {
				if (b[i + j] != what[j]) {
					continue outer;
				}
			}
			return true;
		}
		return false;
	}

}

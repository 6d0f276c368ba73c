package io.github.dualmap.tenant;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The usage of a server-sent event stream, read across chunk boundaries. */
class StreamUsageReaderTests {

	static final String CHUNK = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n";

	static final String USAGE = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":2,"
			+ "\"prompt_tokens_details\":{\"cached_tokens\":16}}}\n\n";

	static final String DONE = "data: [DONE]\n\n";

	private static String feed(StreamUsageReader reader, String stream, int chunkSize) {
		byte[] bytes = stream.getBytes(StandardCharsets.UTF_8);
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		for (int i = 0; i < bytes.length; i += chunkSize) {
			byte[] chunk = java.util.Arrays.copyOfRange(bytes, i, Math.min(bytes.length, i + chunkSize));
			out.writeBytes(reader.accept(chunk));
		}
		out.writeBytes(reader.flush());
		return out.toString(StandardCharsets.UTF_8);
	}

	@Test
	void removesTheUsageChunkItAskedForInAnyChunking() {
		String stream = CHUNK + CHUNK + USAGE + DONE;
		for (int size : new int[] { 1, 7, 64, stream.length() }) {
			StreamUsageReader reader = new StreamUsageReader(true, 1 << 20);
			assertThat(feed(reader, stream, size)).as("chunks of " + size).isEqualTo(CHUNK + CHUNK + DONE);
			assertThat(reader.usage()).isEqualTo(new TokenUsage(30, 16, 2));
			assertThat(reader.outputEvents()).isEqualTo(2);
		}
	}

	@Test
	void keepsTheUsageChunkTheClientAskedFor() {
		StreamUsageReader reader = new StreamUsageReader(false, 1 << 20);
		String stream = CHUNK + USAGE + DONE;
		assertThat(feed(reader, stream, 5)).isEqualTo(stream);
		assertThat(reader.usage()).isEqualTo(new TokenUsage(30, 16, 2));
	}

	@Test
	void readsCrlfEventsAndTheResponsesApiCompletion() {
		StreamUsageReader reader = new StreamUsageReader(true, 1 << 20);
		String stream = "event: response.created\r\ndata: {\"type\":\"response.created\",\"response\":{\"usage\":null}}\r\n\r\n"
				+ "event: response.output_text.delta\r\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"x\"}\r\n\r\n"
				+ "event: response.completed\r\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":"
				+ "{\"input_tokens\":9,\"output_tokens\":1,\"input_tokens_details\":{\"cached_tokens\":0}}}}\r\n\r\n";
		// Nothing removed: the completion event is not a usage-only chunk.
		assertThat(feed(reader, stream, 11)).isEqualTo(stream);
		assertThat(reader.usage()).isEqualTo(new TokenUsage(9, 0, 1));
		assertThat(reader.outputEvents()).isEqualTo(1);
	}

	@Test
	void anEventPastTheLimitPassesUnread() {
		StreamUsageReader reader = new StreamUsageReader(true, 100);
		String big = "data: {\"choices\":[{\"delta\":{\"content\":\"" + "x".repeat(500) + "\"}}]}\n\n";
		String stream = big + USAGE + DONE;
		assertThat(feed(reader, stream, 50)).isEqualTo(stream);
		assertThat(reader.usage()).isNull();
	}

	@Test
	void aStreamCutShortCountsTheEventsSeenThatCarriedAToken() {
		StreamUsageReader reader = new StreamUsageReader(true, 1 << 20);
		// vLLM opens a chat stream with the role and no token.
		String role = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
				+ "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
		String cut = role + CHUNK + CHUNK + CHUNK.substring(0, 10);
		assertThat(feed(reader, cut, 3)).isEqualTo(cut);
		assertThat(reader.usage()).isNull();
		assertThat(reader.outputEvents()).isEqualTo(2);
	}

}

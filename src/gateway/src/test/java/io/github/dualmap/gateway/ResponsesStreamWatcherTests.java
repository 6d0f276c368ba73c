package io.github.dualmap.gateway;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;

import static org.assertj.core.api.Assertions.assertThat;

class ResponsesStreamWatcherTests {

	private static DataBuffer buffer(String text) {
		return DefaultDataBufferFactory.sharedInstance.wrap(text.getBytes(StandardCharsets.UTF_8));
	}

	@Test
	void theOpeningEventsAreNotTheFirstTokenTheNextEventIs() {
		ResponsesStreamWatcher watcher = new ResponsesStreamWatcher();
		assertThat(watcher.firstTokenIn(buffer("event: response.created\ndata: {\"type\":\"response.created\"}\n\n")))
			.isFalse();
		assertThat(watcher.firstTokenIn(buffer("event: response.in_progress\r\ndata: {}\r\n\r\n"))).isFalse();
		assertThat(watcher.firstTokenIn(buffer("event: response.output_item.added\ndata: {}\n\n"))).isTrue();
		// Once seen, it stays seen.
		assertThat(watcher.firstTokenIn(buffer("data: {}\n\n"))).isTrue();
	}

	@Test
	void anEventNameSplitAcrossChunksIsRead() {
		ResponsesStreamWatcher watcher = new ResponsesStreamWatcher();
		assertThat(watcher.firstTokenIn(buffer("event: response.cre"))).isFalse();
		assertThat(watcher.firstTokenIn(buffer("ated\ndata: {\"text\":\"event: response.output_text.delta\"}\n\nev")))
			.isFalse();
		assertThat(watcher.firstTokenIn(buffer("ent:response.output_"))).isFalse();
		assertThat(watcher.firstTokenIn(buffer("text.delta\n"))).isTrue();
	}

	@Test
	void anErrorEventEndsPrefillTooAndDataLinesNeverCount() {
		ResponsesStreamWatcher watcher = new ResponsesStreamWatcher();
		String huge = "x".repeat(100_000);
		assertThat(watcher.firstTokenIn(buffer("event: response.created\ndata: {\"i\":\"" + huge + "\"}\n\n")))
			.isFalse();
		assertThat(watcher.firstTokenIn(buffer(": comment\nid: 1\nevent:\n\n"))).isFalse();
		assertThat(watcher.firstTokenIn(buffer("event: error\ndata: {}\n\n"))).isTrue();
	}

	@Test
	void withoutEventLinesTheThirdEventIsTheFirstToken() {
		ResponsesStreamWatcher watcher = new ResponsesStreamWatcher();
		assertThat(watcher.firstTokenIn(buffer("data: {\"type\":\"response.created\"}\n\n"))).isFalse();
		assertThat(watcher.firstTokenIn(buffer("data: {\"type\":\"response.in_progress\"}\r\n\r\n"))).isFalse();
		// A comment-only block is not an event.
		assertThat(watcher.firstTokenIn(buffer(": keep-alive\n\n"))).isFalse();
		assertThat(watcher.firstTokenIn(buffer("data: {\"type\":\"response.output_item.added\"}\n"))).isFalse();
		assertThat(watcher.firstTokenIn(buffer("\n"))).isTrue();
	}

	@Test
	void readingDoesNotConsumeTheBuffer() {
		DataBuffer b = buffer("event: response.created\n\n");
		new ResponsesStreamWatcher().firstTokenIn(b);
		assertThat(b.readableByteCount()).isEqualTo(25);
	}

}

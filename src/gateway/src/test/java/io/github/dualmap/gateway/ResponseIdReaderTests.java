package io.github.dualmap.gateway;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;

import static org.assertj.core.api.Assertions.assertThat;

class ResponseIdReaderTests {

	private static DataBuffer buffer(String text) {
		return DefaultDataBufferFactory.sharedInstance.wrap(text.getBytes(StandardCharsets.UTF_8));
	}

	private static String read(String... chunks) {
		ResponseIdReader reader = new ResponseIdReader();
		for (String chunk : chunks) {
			if (reader.read(buffer(chunk))) {
				break;
			}
		}
		return reader.id();
	}

	@Test
	void theIdOfAResponseObjectAndOfTheEventsThatOpenAStream() {
		assertThat(read("{\"id\":\"resp_abc123\",\"object\":\"response\",\"output\":[{\"id\":\"msg_1\"}]}"))
			.isEqualTo("resp_abc123");
		// vLLM: the event's fields in declaration order, the response first.
		assertThat(read("event: response.created\ndata: {\"response\":{\"id\":\"resp_v\",\"created_at\":1},"
				+ "\"sequence_number\":0,\"type\":\"response.created\"}\n\n"))
			.isEqualTo("resp_v");
		// OpenAI: the type first, pretty-printed.
		assertThat(read(
				"event: response.created\ndata: {\"type\": \"response.created\", \"response\": {\"id\" : \"resp_o\"}}"))
			.isEqualTo("resp_o");
	}

	@Test
	void aKeyOrValueSplitAcrossChunksIsRead() {
		assertThat(read("{\"i", "d\":", " \"resp_", "split\",")).isEqualTo("resp_split");
	}

	@Test
	void aNonStringIdOrAnIdValueElsewhereIsPassedOver() {
		assertThat(read("{\"meta\":{\"id\":7},\"note\":\"id\",\"id\":\"resp_2\"}")).isEqualTo("resp_2");
	}

	@Test
	void givesUpOnWhatDoesNotLookLikeAnIdOrTooFarIn() {
		assertThat(read("{\"id\":\"has space\"}")).isNull();
		assertThat(read("{\"id\":\"\"}")).isNull();
		assertThat(read(
				"{\"error\":{\"message\":\"" + "x".repeat(ResponseIdReader.MAX_SCAN) + "\"},\"id\":\"resp_late\"}"))
			.isNull();
	}

	@Test
	void readingDoesNotConsumeTheBuffer() {
		DataBuffer b = buffer("{\"id\":\"resp_1\"}");
		new ResponseIdReader().read(b);
		assertThat(b.readableByteCount()).isEqualTo(15);
	}

}

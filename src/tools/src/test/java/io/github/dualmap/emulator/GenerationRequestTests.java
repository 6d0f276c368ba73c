package io.github.dualmap.emulator;

import io.github.dualmap.emulator.GenerationRequest.Endpoint;
import io.github.dualmap.engine.TextTokenizer;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class GenerationRequestTests {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private static final String MODEL = EmulatorSettings.DEFAULT_MODEL;

	private static final String CHAT = "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";

	@Test
	void aNullMaxCompletionTokensLeavesMaxTokensInForceAsInVllm() {
		// vLLM takes max_completion_tokens or max_tokens: a JSON null is no value.
		assertThat(parse(Endpoint.CHAT, "{" + CHAT + ",\"max_tokens\":5,\"max_completion_tokens\":null}").maxTokens())
			.isEqualTo(5);
		assertThat(parse(Endpoint.CHAT, "{" + CHAT + ",\"max_completion_tokens\":7,\"max_tokens\":5}").maxTokens())
			.isEqualTo(7);
		assertThat(
				parse(Endpoint.CHAT, "{" + CHAT + ",\"max_completion_tokens\":null,\"max_tokens\":null}").maxTokens())
			.isEqualTo(300 - parse(Endpoint.CHAT, "{" + CHAT + "}").promptTokens().length);
	}

	@Test
	void otherNullFieldsCountAsAbsent() {
		GenerationRequest g = parse(Endpoint.COMPLETIONS, "{\"model\":null,\"prompt\":\"hi\",\"max_tokens\":null,"
				+ "\"stream\":null,\"stream_options\":null,\"cache_salt\":null}");
		assertThat(g.model()).isEqualTo(MODEL);
		assertThat(g.maxTokens()).isEqualTo(GenerationRequest.DEFAULT_COMPLETION_MAX_TOKENS);
		assertThat(g.stream()).isFalse();
		assertThat(g.includeUsage()).isFalse();
		assertThat(g.cacheSalt()).isNull();
		GenerationRequest r = parse(Endpoint.RESPONSES,
				"{\"input\":\"hi\",\"instructions\":null,\"previous_response_id\":null,\"store\":null,"
						+ "\"max_output_tokens\":null}");
		assertThat(r.store()).isTrue();
	}

	@Test
	void streamOptionsWithoutStreamIsVllmsBadRequest() {
		assertBadRequest(Endpoint.CHAT, "{" + CHAT + ",\"stream_options\":{\"include_usage\":true}}",
				"Stream options can only be defined when `stream=True`.", "stream_options");
		assertBadRequest(Endpoint.COMPLETIONS,
				"{\"prompt\":\"hi\",\"stream\":false,\"stream_options\":{\"include_usage\":true}}",
				"Stream options can only be defined when `stream=True`.", "stream_options");
		// As vLLM's truthiness test: an empty object is no options.
		assertThat(parse(Endpoint.COMPLETIONS, "{\"prompt\":\"hi\",\"stream_options\":{}}").stream()).isFalse();
		assertThat(parse(Endpoint.COMPLETIONS,
				"{\"prompt\":\"hi\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}")
			.includeUsage()).isTrue();
	}

	@Test
	void tokenIdsOutsideTheVocabularyAreRefused() {
		assertBadRequest(Endpoint.COMPLETIONS, "{\"prompt\":[1,2,999999999]}",
				"Token id 999999999 at index 2 is out of vocabulary", "prompt");
		assertBadRequest(Endpoint.COMPLETIONS, "{\"prompt\":[1," + TextTokenizer.VOCAB_SIZE + "]}",
				"Token id " + TextTokenizer.VOCAB_SIZE + " at index 1 is out of vocabulary", "prompt");
		assertThat(
				parse(Endpoint.COMPLETIONS, "{\"prompt\":[0," + (TextTokenizer.VOCAB_SIZE - 1) + "]}").promptTokens())
			.containsExactly(0, TextTokenizer.VOCAB_SIZE - 1);
	}

	@Test
	void aModelThatIsNotAStringIsRefused() {
		assertBadRequest(Endpoint.COMPLETIONS, "{\"model\":123,\"prompt\":\"hi\"}",
				"model: Input should be a valid string, got 123", "model");
	}

	@Test
	void integerFieldsAcceptWhatPydanticsLaxModeAccepts() {
		for (String value : new String[] { "\"5\"", "5.0", "\" 5 \"", "\"5.0\"" }) {
			assertThat(parse(Endpoint.COMPLETIONS, "{\"prompt\":\"hi\",\"max_tokens\":" + value + "}").maxTokens())
				.as(value)
				.isEqualTo(5);
		}
		assertBadRequest(Endpoint.COMPLETIONS, "{\"prompt\":\"hi\",\"max_tokens\":5.5}",
				"max_tokens: Input should be a valid integer", "max_tokens");
		assertBadRequest(Endpoint.COMPLETIONS, "{\"prompt\":\"hi\",\"max_tokens\":\"five\"}",
				"max_tokens: Input should be a valid integer", "max_tokens");
		assertBadRequest(Endpoint.CHAT, "{" + CHAT + ",\"max_completion_tokens\":[5]}",
				"max_completion_tokens: Input should be a valid integer", "max_completion_tokens");
	}

	@Test
	void moreThanOneChoiceIsRefusedTheEmulatorServesOne() {
		assertBadRequest(Endpoint.COMPLETIONS, "{\"prompt\":\"hi\",\"n\":2}",
				"n: the emulator serves one choice per request, got 2", "n");
		assertBadRequest(Endpoint.CHAT, "{" + CHAT + ",\"n\":\"3\"}",
				"n: the emulator serves one choice per request, got 3", "n");
		assertBadRequest(Endpoint.CHAT, "{" + CHAT + ",\"n\":0}", "n must be at least 1, got 0.", "n");
		assertThat(parse(Endpoint.CHAT, "{" + CHAT + ",\"n\":1,\"max_tokens\":2}").maxTokens()).isEqualTo(2);
		assertThat(parse(Endpoint.CHAT, "{" + CHAT + ",\"n\":null,\"max_tokens\":2}").maxTokens()).isEqualTo(2);
	}

	private static void assertBadRequest(Endpoint endpoint, String body, String message, String param) {
		assertThatExceptionOfType(ApiException.class).isThrownBy(() -> parse(endpoint, body))
			.withMessageContaining(message)
			.satisfies(ex -> {
				assertThat(ex.status()).isEqualTo(400);
				assertThat(ex.param()).isEqualTo(param);
			});
	}

	static GenerationRequest parse(Endpoint endpoint, String body) {
		return GenerationRequest.parse(JSON, body, endpoint, MODEL, 300, id -> null);
	}

}

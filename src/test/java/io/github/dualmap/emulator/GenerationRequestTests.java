package io.github.dualmap.emulator;

import io.github.dualmap.emulator.GenerationRequest.Endpoint;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

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

	static GenerationRequest parse(Endpoint endpoint, String body) {
		return GenerationRequest.parse(JSON, body, endpoint, MODEL, 300, id -> null);
	}

}

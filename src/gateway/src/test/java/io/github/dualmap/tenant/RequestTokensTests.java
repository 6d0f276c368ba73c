package io.github.dualmap.tenant;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/** The completion cap and usage request of a body, and asking for the usage. */
class RequestTokensTests {

	private static RequestTokens read(String json) {
		return RequestTokens.read(json.getBytes(StandardCharsets.UTF_8));
	}

	@Test
	void readsTheCap() {
		assertThat(read("{\"max_tokens\":12,\"messages\":[]}").maxTokens()).isEqualTo(12);
		assertThat(read("{\"max_tokens\":12,\"max_completion_tokens\":7}").maxTokens()).isEqualTo(7);
		assertThat(read("{\"max_output_tokens\":99}").maxTokens()).isEqualTo(99);
		assertThat(read("{\"max_tokens\":null}").maxTokens()).isNull();
		assertThat(read("{\"max_tokens\":\"many\"}").maxTokens()).isNull();
		assertThat(read("{\"max_tokens\":-3}").maxTokens()).isNull();
		assertThat(read("[1]").maxTokens()).isNull();
	}

	@Test
	void readsWhetherTheStreamAsksForUsage() {
		assertThat(read("{\"stream\":true}").usageRequested()).isFalse();
		assertThat(read("{\"stream_options\":{\"include_usage\":true}}").usageRequested()).isTrue();
		assertThat(read("{\"stream_options\":{\"include_usage\":false}}").usageRequested()).isFalse();
		assertThat(read("{\"stream_options\":{\"x\":{\"include_usage\":true}}}").usageRequested()).isFalse();
	}

	private static JsonNode injected(String json) {
		byte[] body = json.getBytes(StandardCharsets.UTF_8);
		return JsonMapper.shared().readTree(RequestTokens.withUsageRequested(body, RequestTokens.read(body)));
	}

	@Test
	void asksForTheUsageLeavingEverythingElse() {
		String body = "  {\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"{\"}]}";
		byte[] sent = RequestTokens.withUsageRequested(body.getBytes(StandardCharsets.UTF_8), read(body));
		assertThat(new String(sent, StandardCharsets.UTF_8)).isEqualTo(
				"  {\"stream_options\":{\"include_usage\":true},\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"{\"}]}");
		JsonNode withOptions = injected("{\"stream\":true,\"stream_options\":{\"include_usage\":false,\"x\":1}}");
		assertThat(withOptions.get("stream_options").get("include_usage").asBoolean()).isTrue();
		assertThat(withOptions.get("stream_options").get("x").asInt()).isEqualTo(1);
		assertThat(injected("{\"stream_options\":null}").get("stream_options").get("include_usage").asBoolean())
			.isTrue();
		assertThat(injected("{ }").get("stream_options").get("include_usage").asBoolean()).isTrue();
	}

}

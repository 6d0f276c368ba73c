package io.github.dualmap.tenant;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The model tag stays bounded whatever models clients name. */
class GenAiMetersTests {

	@Test
	void modelsPastTheBoundAreOther() {
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		GenAiMeters meters = new GenAiMeters(registry);
		// Names too long to be a model's are other, and take no place among the first.
		for (int i = 0; i < 20; i++) {
			meters.tokens("acme", "x".repeat(GenAiMeters.MAX_MODEL_LENGTH) + i, "chat", 10, 1);
		}
		String longest = "m".repeat(GenAiMeters.MAX_MODEL_LENGTH);
		meters.tokens("acme", longest, "chat", 10, 1);
		for (int i = 1; i < GenAiMeters.MAX_MODELS + 50; i++) {
			meters.tokens("acme", "model-" + i, "chat", 10, 1);
		}
		meters.tokens("acme", null, "chat", 10, 1);
		assertThat(registry.find("gen_ai.client.token.usage").tag("gen_ai.token.type", "input").summaries())
			.hasSize(GenAiMeters.MAX_MODELS + 2);
		assertThat(registry.get("gen_ai.client.token.usage")
			.tags("gen_ai.request.model", longest, "gen_ai.token.type", "input")
			.summary()
			.count()).isEqualTo(1);
		assertThat(registry.find("gen_ai.client.token.usage")
			.tags("gen_ai.request.model", "x".repeat(GenAiMeters.MAX_MODEL_LENGTH) + "0")
			.summary()).isNull();
		// The long names took no place: the 99 models after the longest kept their own.
		assertThat(registry.find("gen_ai.client.token.usage")
			.tags("gen_ai.request.model", "model-99", "gen_ai.token.type", "input")
			.summary()).isNotNull();
		assertThat(registry.get("gen_ai.client.token.usage")
			.tags("gen_ai.request.model", "other", "gen_ai.token.type", "output")
			.summary()
			.count()).isEqualTo(20 + 50);
		assertThat(registry.get("gen_ai.client.token.usage")
			.tags("gen_ai.request.model", "unknown", "gen_ai.token.type", "input")
			.summary()
			.totalAmount()).isEqualTo(10);
		// A model seen early keeps its own tag.
		meters.tokens("acme", "model-3", "chat", 10, 1);
		assertThat(registry.get("gen_ai.client.token.usage")
			.tags("gen_ai.request.model", "model-3", "gen_ai.token.type", "input")
			.summary()
			.count()).isEqualTo(2);
	}

}

package io.github.dualmap.tenant;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** OpenAI's (Go's) duration format for {@code x-ratelimit-reset-tokens}. */
class RateLimitHeadersTests {

	@Test
	void formatsAsOpenAiDoes() {
		assertThat(RateLimitHeaders.duration(0)).isEqualTo("0s");
		assertThat(RateLimitHeaders.duration(20)).isEqualTo("20ms");
		assertThat(RateLimitHeaders.duration(1000)).isEqualTo("1s");
		assertThat(RateLimitHeaders.duration(1500)).isEqualTo("1.5s");
		assertThat(RateLimitHeaders.duration(59_998)).isEqualTo("59.998s");
		assertThat(RateLimitHeaders.duration(360_000)).isEqualTo("6m0s");
		assertThat(RateLimitHeaders.duration(3_723_500)).isEqualTo("1h2m3.5s");
		assertThat(RateLimitHeaders.duration(3_600_000)).isEqualTo("1h0m0s");
	}

}

package io.github.dualmap.stats;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import io.github.dualmap.core.EngineSnapshot;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.within;

class EngineMetricsParserTests {

	private final EngineMetricsParser parser = new EngineMetricsParser();

	static String fixture(String name) {
		try (InputStream in = EngineMetricsParserTests.class.getResourceAsStream("/metrics/" + name)) {
			assertThat(in).as(name).isNotNull();
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Test
	void vllmV1() {
		String body = fixture("vllm-v1.txt");
		EngineSnapshot s = parser.parse(body, 42);
		assertThat(parser.detect(body)).isEqualTo(EngineFlavour.VLLM_V1);
		assertThat(s).isEqualTo(new EngineSnapshot(42, 3, 12, 0.4125, 1_846_528, 1_253_376, 29425L * 16));
		assertThat(s.prefixHitRate()).isCloseTo(1_253_376.0 / 1_846_528, within(1e-12));
	}

	@Test
	void vllmV1DataParallelEnginesAreSummedAndUsageAveraged() {
		EngineSnapshot s = parser.parse(fixture("vllm-v1-dp2.txt"), 0);
		assertThat(s.waiting()).isEqualTo(2);
		assertThat(s.running()).isEqualTo(12);
		assertThat(s.kvUsage()).isCloseTo(0.4, within(1e-12));
		assertThat(s.prefixQueriesTokens()).isEqualTo(10_000);
		assertThat(s.prefixHitsTokens()).isEqualTo(4_000);
		assertThat(s.kvCapacityTokens()).isEqualTo(3000L * 16);
	}

	@Test
	void vllmV0ReadsTheHitRateGauge() {
		String body = fixture("vllm-v0.txt");
		EngineSnapshot s = parser.parse(body, 7);
		assertThat(parser.detect(body)).isEqualTo(EngineFlavour.VLLM_V0);
		assertThat(s.waiting()).isEqualTo(9);
		assertThat(s.running()).isEqualTo(4);
		assertThat(s.kvUsage()).isEqualTo(0.873);
		assertThat(s.prefixHitRate()).isEqualTo(0.5625);
		assertThat(s.kvCapacityTokens()).isEqualTo(27910L * 16);
	}

	@Test
	void vllmV0NamesWithCountersPreferTheCounters() {
		EngineSnapshot s = parser.parse(fixture("vllm-v1-old-names.txt"), 0);
		assertThat(s.kvUsage()).isEqualTo(0.05);
		assertThat(s.prefixQueriesTokens()).isEqualTo(4096);
		assertThat(s.prefixHitsTokens()).isEqualTo(1024);
		assertThat(s.kvCapacityTokens()).isEqualTo(-1);
	}

	@Test
	void sglangTensorParallelReplicasCountOnce() {
		String body = fixture("sglang.txt");
		EngineSnapshot s = parser.parse(body, 0);
		assertThat(parser.detect(body)).isEqualTo(EngineFlavour.SGLANG);
		assertThat(s.waiting()).isEqualTo(6);
		assertThat(s.running()).isEqualTo(18);
		assertThat(s.kvUsage()).isEqualTo(0.35);
		assertThat(s.prefixHitRate()).isEqualTo(0.71);
		assertThat(s.kvCapacityTokens()).isEqualTo(429_238);
	}

	@Test
	void sglangUnderscorePrefixAndDataParallelRanks() {
		String body = fixture("sglang-underscore-dp2.txt");
		EngineSnapshot s = parser.parse(body, 0);
		assertThat(parser.detect(body)).isEqualTo(EngineFlavour.SGLANG);
		assertThat(s.waiting()).isEqualTo(4);
		assertThat(s.running()).isEqualTo(14);
		assertThat(s.kvUsage()).isCloseTo(0.4, within(1e-12));
		assertThat(s.prefixHitRate()).isCloseTo(0.5, within(1e-12));
		assertThat(s.kvCapacityTokens()).isEqualTo(400_000);
	}

	@Test
	void partialMetricsLeaveTheRestUnknown() {
		EngineSnapshot s = parser.parse("vllm:num_requests_waiting{model_name=\"m\"} 5\n", 0);
		assertThat(s.waiting()).isEqualTo(5);
		assertThat(s.running()).isEqualTo(-1);
		assertThat(s.kvUsage()).isNaN();
		assertThat(s.prefixQueriesTokens()).isNaN();
		assertThat(s.prefixHitRate()).isNaN();
		assertThat(s.kvCapacityTokens()).isEqualTo(-1);
	}

	@Test
	void capacityUnknownBeforeTheEngineSizedItsCache() {
		String body = "vllm:kv_cache_usage_perc 0.1\n"
				+ "vllm:cache_config_info{block_size=\"16\",engine=\"0\",num_gpu_blocks=\"None\"} 1.0\n";
		assertThat(parser.parse(body, 0).kvCapacityTokens()).isEqualTo(-1);
		String tokensLabel = "vllm:kv_cache_usage_perc 0.1\n"
				+ "vllm:cache_config_info{block_size=\"16\",kv_cache_size_tokens=\"123433\",num_gpu_blocks=\"None\"} 1.0\n";
		assertThat(parser.parse(tokensLabel, 0).kvCapacityTokens()).isEqualTo(123_433);
	}

	@Test
	void textFormatDetails() {
		String body = """
				# a comment, then a blank line

				vllm:num_requests_waiting{model_name="a \\"quoted\\" \\\\ name\\nx",engine="0",} 2 1712345678000
				vllm:num_requests_running	{ engine = "0" }	+Inf
				vllm:kv_cache_usage_perc NaN
				# EOF
				""";
		EngineSnapshot s = parser.parse(body, 0);
		assertThat(s.waiting()).isEqualTo(2);
		assertThat(s.running()).isEqualTo(Integer.MAX_VALUE);
		assertThat(s.kvUsage()).isNaN();
	}

	@Test
	void garbageIsAParseError() {
		assertThatExceptionOfType(MetricsParseException.class).isThrownBy(() -> parser.parse("<html>oops</html>", 0))
			.withMessageContaining("no vLLM or SGLang engine metrics");
		assertThatExceptionOfType(MetricsParseException.class).isThrownBy(() -> parser.parse("", 0));
		assertThatExceptionOfType(MetricsParseException.class)
			.isThrownBy(() -> parser.parse("process_cpu_seconds_total 1.0\n", 0));
	}

	@Test
	void malformedKnownLineIsAParseErrorNamingTheLine() {
		assertThatExceptionOfType(MetricsParseException.class)
			.isThrownBy(() -> parser.parse("# HELP x\nvllm:num_requests_waiting{engine=\"0\"} many\n", 0))
			.withMessage("line 2: 'many' is not a number: vllm:num_requests_waiting{engine=\"0\"} many");
		assertThatExceptionOfType(MetricsParseException.class)
			.isThrownBy(() -> parser.parse("vllm:num_requests_waiting{engine=\"0} 1\n", 0))
			.withMessageStartingWith("line 1: unterminated label value");
		assertThatExceptionOfType(MetricsParseException.class)
			.isThrownBy(() -> parser.parse("vllm:num_requests_waiting{engine=0} 1\n", 0))
			.withMessageStartingWith("line 1: expected '\"'");
		assertThatExceptionOfType(MetricsParseException.class)
			.isThrownBy(() -> parser.parse("vllm:num_requests_waiting\n", 0))
			.withMessageStartingWith("line 1: expected a value");
		assertThatExceptionOfType(MetricsParseException.class)
			.isThrownBy(() -> parser.parse("vllm:num_requests_waiting 1 2 3\n", 0))
			.withMessageStartingWith("line 1: unexpected text after the timestamp");
		assertThatExceptionOfType(MetricsParseException.class)
			.isThrownBy(() -> parser.parse("vllm:num_requests_waiting 1d\n", 0))
			.withMessageStartingWith("line 1: '1d' is not a number");
	}

	@Test
	void malformedLinesOfOtherMetricsAreIgnored() {
		EngineSnapshot s = parser.parse("weird_metric{a=b} ???\nvllm:num_requests_waiting 1\n", 0);
		assertThat(s.waiting()).isEqualTo(1);
	}

}

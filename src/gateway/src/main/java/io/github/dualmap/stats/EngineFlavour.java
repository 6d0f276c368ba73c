package io.github.dualmap.stats;

import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The metric dialects of the serving engines we read, each with the names that carry one
 * {@link io.github.dualmap.core.EngineSnapshot} field. SGLang names are listed with the
 * {@code sglang:} prefix; the {@code sglang_} prefix of newer versions is read as the
 * same name.
 */
public enum EngineFlavour {

	/**
	 * vLLM V1 engine: usage gauge and token counters of prefix-cache queries and hits.
	 */
	VLLM_V1("vllm:num_requests_waiting", "vllm:num_requests_running", List.of("vllm:kv_cache_usage_perc"),
			List.of("vllm:prefix_cache_queries_total"), List.of("vllm:prefix_cache_hits_total"), null,
			"vllm:cache_config_info"),

	/**
	 * vLLM V0 engine: GPU usage gauge, token counters where the version has them, else a
	 * hit-rate gauge.
	 */
	VLLM_V0("vllm:num_requests_waiting", "vllm:num_requests_running", List.of("vllm:gpu_cache_usage_perc"),
			List.of("vllm:gpu_prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries"),
			List.of("vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits"), "vllm:gpu_prefix_cache_hit_rate",
			"vllm:cache_config_info"),

	/** SGLang: queue and running gauges, token usage, pool size and a hit-rate gauge. */
	SGLANG("sglang:num_queue_reqs", "sglang:num_running_reqs", List.of("sglang:token_usage"), List.of(), List.of(),
			"sglang:cache_hit_rate", "sglang:max_total_num_tokens");

	final String waiting;

	final String running;

	final List<String> kvUsage;

	final List<String> prefixQueries;

	final List<String> prefixHits;

	final @Nullable String hitRateGauge;

	final String capacity;

	EngineFlavour(String waiting, String running, List<String> kvUsage, List<String> prefixQueries,
			List<String> prefixHits, @Nullable String hitRateGauge, String capacity) {
		this.waiting = waiting;
		this.running = running;
		this.kvUsage = kvUsage;
		this.prefixQueries = prefixQueries;
		this.prefixHits = prefixHits;
		this.hitRateGauge = hitRateGauge;
		this.capacity = capacity;
	}

	/**
	 * The flavour whose names are present: a V1-only name means V1 (V1 also exports the
	 * deprecated V0 usage name), then SGLang, then V0; a body with only the request
	 * gauges of vLLM reads as V1. {@code null} when no known name is present.
	 */
	static @Nullable EngineFlavour detect(Set<String> names) {
		if (names.contains("vllm:kv_cache_usage_perc") || names.contains("vllm:prefix_cache_queries_total")
				|| names.contains("vllm:prefix_cache_hits_total")) {
			return VLLM_V1;
		}
		if (names.stream().anyMatch((n) -> n.startsWith("sglang:"))) {
			return SGLANG;
		}
		if (names.stream().anyMatch((n) -> n.startsWith("vllm:gpu_"))) {
			return VLLM_V0;
		}
		if (names.stream().anyMatch((n) -> n.startsWith("vllm:"))) {
			return VLLM_V1;
		}
		return null;
	}

}

package io.github.dualmap.emulator;

import java.util.Locale;

import io.github.dualmap.engine.EngineStats;
import io.github.dualmap.engine.LatencyHistogram;
import org.jspecify.annotations.Nullable;

/**
 * Prometheus text exposition of {@link EngineStats} as a serving engine writes it: vLLM
 * V1 names ({@code vllm:*} with {@code model_name} and {@code engine} labels, counters
 * with {@code _total} in their samples' and their HELP and TYPE lines' names, as text
 * format 0.0.4) or SGLang names ({@code sglang:*}).
 */
public enum MetricsFlavour {

	/** vLLM V1 {@code /metrics}. */
	VLLM {
		@Override
		public String render(EngineStats s, String model) {
			Exposition out = new Exposition("engine=\"0\",model_name=\"" + escape(model) + "\"");
			out.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", s.running());
			out.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", s.waiting());
			out.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", s.kvUsage());
			out.counter("vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.",
					s.prefixQueryTokens());
			out.counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
					s.prefixHitTokens());
			out.counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.", s.preemptions());
			out.counter("vllm:prompt_tokens", "Number of prefill tokens processed.", s.promptTokens());
			out.counter("vllm:generation_tokens", "Number of generation tokens processed.", s.generationTokens());
			out.counterWithLabel("vllm:request_success", "Count of successfully processed requests.",
					"finished_reason=\"length\"", s.finished());
			out.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", s.ttft());
			out.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", s.itl());
			out.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", s.e2e());
			out.info("vllm:cache_config_info", "Information of the LLMEngine CacheConfig",
					"block_size=\"" + s.blockTokens() + "\",enable_prefix_caching=\"True\",num_gpu_blocks=\""
							+ s.capacityBlocks() + "\"");
			return out.toString();
		}
	},

	/** SGLang {@code /metrics}. */
	SGLANG {
		@Override
		public String render(EngineStats s, String model) {
			Exposition out = new Exposition("model_name=\"" + escape(model) + "\"");
			out.gauge("sglang:num_running_reqs", "The number of running requests.", s.running());
			out.gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", s.waiting());
			out.gauge("sglang:token_usage", "The token usage.", s.kvUsage());
			out.gauge("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache.",
					s.capacityTokens());
			double hitRate = s.prefixQueryTokens() == 0 ? 0 : (double) s.prefixHitTokens() / s.prefixQueryTokens();
			out.gauge("sglang:cache_hit_rate", "The prefix cache hit rate.", hitRate);
			out.counter("sglang:prompt_tokens", "Number of prefill tokens processed.", s.promptTokens());
			out.counter("sglang:generation_tokens", "Number of generation tokens processed.", s.generationTokens());
			out.counter("sglang:num_requests", "Number of requests processed.", s.finished());
			out.histogram("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
					s.ttft());
			out.histogram("sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
					s.itl());
			out.histogram("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds",
					s.e2e());
			return out.toString();
		}
	};

	/** The exposition text of {@code stats} for a server of {@code model}. */
	public abstract String render(EngineStats stats, String model);

	/** The flavour called {@code name} ({@code vllm} or {@code sglang}). */
	public static MetricsFlavour of(String name) {
		return switch (name.toLowerCase(Locale.ROOT)) {
			case "vllm" -> VLLM;
			case "sglang" -> SGLANG;
			default ->
				throw new IllegalArgumentException("unknown metrics flavour '" + name + "' (known: vllm, sglang)");
		};
	}

	static String escape(String value) {
		return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
	}

	/** Builder of Prometheus text format 0.0.4 with one fixed label set. */
	private static final class Exposition {

		private final StringBuilder text = new StringBuilder(4096);

		private final String labels;

		Exposition(String labels) {
			this.labels = labels;
		}

		void gauge(String name, String help, double value) {
			header(name, help, "gauge");
			sample(name, labels, value);
		}

		void counter(String name, String help, double value) {
			counterWithLabel(name, help, null, value);
		}

		void counterWithLabel(String name, String help, @Nullable String extra, double value) {
			// Text format 0.0.4, as prometheus_client's generate_latest writes it for
			// vLLM and SGLang: the family is named with its _total suffix, like its
			// sample (the base name is OpenMetrics' convention, not this format's).
			header(name + "_total", help, "counter");
			sample(name + "_total", extra == null ? labels : labels + "," + extra, value);
		}

		void info(String name, String help, String extra) {
			header(name, help, "gauge");
			sample(name, extra + "," + labels, 1);
		}

		void histogram(String name, String help, LatencyHistogram.Snapshot h) {
			header(name, help, "histogram");
			double[] bounds = h.bounds();
			long[] cumulative = h.cumulativeCounts();
			for (int i = 0; i < bounds.length; i++) {
				sample(name + "_bucket", labels + ",le=\"" + number(bounds[i]) + "\"", cumulative[i]);
			}
			sample(name + "_bucket", labels + ",le=\"+Inf\"", cumulative[bounds.length]);
			sample(name + "_count", labels, h.count());
			sample(name + "_sum", labels, h.sum());
		}

		private void header(String name, String help, String type) {
			text.append("# HELP ").append(name).append(' ').append(help).append('\n');
			text.append("# TYPE ").append(name).append(' ').append(type).append('\n');
		}

		private void sample(String name, String labelText, double value) {
			text.append(name).append('{').append(labelText).append("} ").append(number(value)).append('\n');
		}

		private static String number(double v) {
			return Double.toString(v);
		}

		@Override
		public String toString() {
			return text.toString();
		}

	}

}

package io.github.dualmap.stats;

import java.util.HashMap;
import java.util.Map;

import io.github.dualmap.core.EngineSnapshot;

/**
 * Prometheus text exposition to {@link EngineSnapshot} for vLLM V1 and SGLang: series of
 * one metric are summed (usage ratios averaged). A body with none of the known names is
 * an error.
 */
public final class EngineMetricsParser {

	/**
	 * Parses {@code text} sampled at {@code nowNanos}.
	 * @throws IllegalArgumentException when no known metric is present or a known line is
	 * malformed
	 */
	public EngineSnapshot parse(String text, long nowNanos) {
		Map<String, double[]> sums = new HashMap<>();
		for (String raw : text.split("\n")) {
			String line = raw.strip();
			if (line.isEmpty() || line.startsWith("#")) {
				continue;
			}
			int nameEnd = 0;
			while (nameEnd < line.length() && line.charAt(nameEnd) != '{' && line.charAt(nameEnd) != ' ') {
				nameEnd++;
			}
			String name = line.substring(0, nameEnd).replace("sglang_", "sglang:");
			if (!name.startsWith("vllm:") && !name.startsWith("sglang:")) {
				continue;
			}
			int valueStart = line.charAt(Math.min(nameEnd, line.length() - 1)) == '{' ? line.lastIndexOf('}') + 1
					: nameEnd;
			String[] rest = line.substring(valueStart).strip().split("\\s+");
			double value;
			try {
				value = Double.parseDouble(rest[0]);
			}
			catch (NumberFormatException ex) {
				throw new IllegalArgumentException("malformed metrics line: '" + line + "'", ex);
			}
			double[] acc = sums.computeIfAbsent(name, n -> new double[2]);
			acc[0] += value;
			acc[1]++;
		}
		int waiting = count(sums, "vllm:num_requests_waiting", "sglang:num_queue_reqs");
		int running = count(sums, "vllm:num_requests_running", "sglang:num_running_reqs");
		if (waiting < 0 && running < 0) {
			throw new IllegalArgumentException("no vLLM or SGLang engine metrics in the scraped text");
		}
		double usage = mean(sums, "vllm:kv_cache_usage_perc", "sglang:token_usage");
		double queries = sum(sums, "vllm:prefix_cache_queries_total");
		double hits = sum(sums, "vllm:prefix_cache_hits_total");
		double capacity = sum(sums, "sglang:max_total_num_tokens");
		return new EngineSnapshot(nowNanos, waiting, running, usage, Double.isNaN(queries) ? -1 : queries,
				Double.isNaN(hits) ? -1 : hits, Double.isNaN(capacity) ? -1 : (long) capacity);
	}

	private static int count(Map<String, double[]> sums, String... names) {
		for (String n : names) {
			double[] acc = sums.get(n);
			if (acc != null) {
				return (int) Math.round(acc[0]);
			}
		}
		return -1;
	}

	private static double mean(Map<String, double[]> sums, String... names) {
		for (String n : names) {
			double[] acc = sums.get(n);
			if (acc != null) {
				return acc[0] / acc[1];
			}
		}
		return Double.NaN;
	}

	private static double sum(Map<String, double[]> sums, String name) {
		double[] acc = sums.get(name);
		return acc == null ? Double.NaN : acc[0];
	}

}

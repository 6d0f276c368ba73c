package io.github.dualmap.stats;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.dualmap.core.EngineSnapshot;
import org.jspecify.annotations.Nullable;

/**
 * Reads an engine's Prometheus text into an {@link EngineSnapshot}, detecting the
 * {@link EngineFlavour} from the names present.
 * <p>
 * Several series of one metric are combined: series that differ only in a parallel-rank
 * label ({@code tp_rank}, {@code pp_rank}, ...) are replicas of one scheduler's value and
 * count once (their maximum); the remaining groups (per {@code engine}, {@code dp_rank},
 * {@code model_name}) are summed, except usage and hit-rate gauges, which are averaged.
 * Values absent from the body, or NaN, are unknown: {@code -1} for counts, {@code NaN}
 * for ratios and counters.
 * <p>
 * Where the engine publishes only a prefix hit-rate gauge (vLLM V0 without counters,
 * SGLang), the snapshot carries it as {@code prefixQueriesTokens = 1} and
 * {@code prefixHitsTokens = rate}: {@link EngineSnapshot#prefixHitRate()} is then the
 * gauge, and a consumer that differences counters between snapshots sees no new queries.
 * Thread-safe and stateless.
 */
public final class EngineMetricsParser {

	/**
	 * Labels that tell apart replicas of one scheduler's value rather than separate
	 * engines.
	 */
	private static final Set<String> REPLICA_LABELS = Set.of("tp_rank", "pp_rank", "moe_ep_rank", "attn_tp_rank",
			"ep_rank");

	private static final Set<String> KNOWN_NAMES = knownNames();

	/**
	 * Parses one scrape.
	 * @param body the metrics text
	 * @param sampledAtNanos when it was scraped, on the scheduler's clock
	 * @throws MetricsParseException when no known metric is present or a known metric's
	 * line is malformed
	 */
	public EngineSnapshot parse(CharSequence body, long sampledAtNanos) {
		Map<String, List<PrometheusText.Sample>> byName = new HashMap<>();
		PrometheusText.read(body, EngineMetricsParser::normalise, KNOWN_NAMES::contains,
				(sample) -> byName.computeIfAbsent(sample.name(), (n) -> new ArrayList<>()).add(sample));
		EngineFlavour flavour = EngineFlavour.detect(byName.keySet());
		if (flavour == null) {
			throw new MetricsParseException(
					"no vLLM or SGLang engine metrics in the body (" + body.length() + " characters)");
		}
		int waiting = count(combine(byName.get(flavour.waiting), false));
		int running = count(combine(byName.get(flavour.running), false));
		double kvUsage = first(byName, flavour.kvUsage, true);
		double queries = first(byName, flavour.prefixQueries, false);
		double hits = first(byName, flavour.prefixHits, false);
		if (Double.isNaN(queries) && flavour.hitRateGauge != null) {
			double rate = combine(byName.get(flavour.hitRateGauge), true);
			if (!Double.isNaN(rate)) {
				queries = 1.0;
				hits = rate;
			}
		}
		if (Double.isNaN(queries) || Double.isNaN(hits)) {
			queries = Double.NaN;
			hits = Double.NaN;
		}
		long capacity = (flavour == EngineFlavour.SGLANG) ? count(combine(byName.get(flavour.capacity), false))
				: vllmCapacity(byName.get(flavour.capacity));
		return new EngineSnapshot(sampledAtNanos, waiting, running, kvUsage, queries, hits, capacity);
	}

	/** The flavour a body would be read as, {@code null} when it has no known metric. */
	public @Nullable EngineFlavour detect(CharSequence body) {
		Set<String> names = new HashSet<>();
		PrometheusText.read(body, EngineMetricsParser::normalise, KNOWN_NAMES::contains,
				(sample) -> names.add(sample.name()));
		return EngineFlavour.detect(names);
	}

	/**
	 * Newer SGLang versions name their metrics {@code sglang_x} instead of
	 * {@code sglang:x}.
	 */
	static String normalise(String name) {
		return name.startsWith("sglang_") ? "sglang:" + name.substring("sglang_".length()) : name;
	}

	private static double first(Map<String, List<PrometheusText.Sample>> byName, List<String> names, boolean average) {
		for (String name : names) {
			List<PrometheusText.Sample> samples = byName.get(name);
			if (samples != null) {
				return combine(samples, average);
			}
		}
		return Double.NaN;
	}

	/**
	 * Replicas collapse to their maximum, then groups are summed or averaged. NaN when
	 * absent.
	 */
	private static double combine(@Nullable List<PrometheusText.Sample> samples, boolean average) {
		if (samples == null || samples.isEmpty()) {
			return Double.NaN;
		}
		Map<Map<String, String>, Double> groups = new LinkedHashMap<>();
		for (PrometheusText.Sample sample : samples) {
			Map<String, String> key = new HashMap<>(sample.labels());
			key.keySet().removeAll(REPLICA_LABELS);
			groups.merge(key, sample.value(), Math::max);
		}
		double sum = 0;
		for (double v : groups.values()) {
			sum += v;
		}
		return average ? sum / groups.size() : sum;
	}

	private static int count(double value) {
		return (Double.isNaN(value) || value < 0) ? -1 : (int) Math.min(Integer.MAX_VALUE, Math.round(value));
	}

	/**
	 * Capacity from the {@code cache_config_info} info gauge: {@code num_gpu_blocks x
	 * block_size} per engine (or its {@code kv_cache_size_tokens} label), summed over
	 * engines; unknown if any engine's is ("None" before the engine profiled memory).
	 */
	private static long vllmCapacity(@Nullable List<PrometheusText.Sample> samples) {
		if (samples == null || samples.isEmpty()) {
			return -1;
		}
		Map<Map<String, String>, Long> engines = new LinkedHashMap<>();
		for (PrometheusText.Sample sample : samples) {
			Map<String, String> labels = sample.labels();
			long blocks = parseCount(labels.get("num_gpu_blocks"));
			long blockSize = parseCount(labels.get("block_size"));
			long tokens = (blocks > 0 && blockSize > 0) ? blocks * blockSize
					: parseCount(labels.get("kv_cache_size_tokens"));
			if (tokens <= 0) {
				return -1;
			}
			Map<String, String> key = new HashMap<>(labels);
			key.keySet().removeAll(REPLICA_LABELS);
			engines.merge(key, tokens, Math::max);
		}
		return engines.values().stream().mapToLong(Long::longValue).sum();
	}

	private static long parseCount(@Nullable String value) {
		if (value == null) {
			return -1;
		}
		try {
			return Long.parseLong(value.trim());
		}
		catch (NumberFormatException ex) {
			// "None" until the engine has sized its cache.
			return -1;
		}
	}

	private static Set<String> knownNames() {
		Set<String> names = new HashSet<>();
		for (EngineFlavour f : EngineFlavour.values()) {
			names.add(f.waiting);
			names.add(f.running);
			names.addAll(f.kvUsage);
			names.addAll(f.prefixQueries);
			names.addAll(f.prefixHits);
			if (f.hitRateGauge != null) {
				names.add(f.hitRateGauge);
			}
			names.add(f.capacity);
		}
		return Set.copyOf(names);
	}

}

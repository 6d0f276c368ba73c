package io.github.dualmap.sim;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code sim --replicates}: each replicate is the single run of its seed, the report
 * gives their median, min and max, and modes without replicates refuse it.
 */
class SimReplicatesTests {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	// Fields that time the router on the wall clock: no two runs share them.
	private static final List<String> WALL_CLOCK = List.of("decision_us_p99");

	private static final List<String> REPLICATE_FIELDS = List.of("capacity_median", "capacity_min", "capacity_max",
			"replicates");

	@TempDir
	Path dir;

	private final StringWriter out = new StringWriter();

	private final StringWriter err = new StringWriter();

	private int runs;

	private int run(String... args) {
		return new SimCommand().redirect(new PrintWriter(out, true), new PrintWriter(err, true), () -> 0L)
			.runWith(args);
	}

	/** results.json of a run with {@code common} and {@code more}. */
	private JsonNode results(List<String> common, String... more) throws IOException {
		Path outDir = dir.resolve("r" + runs++);
		List<String> args = new ArrayList<>(common);
		args.addAll(Arrays.asList(more));
		args.addAll(List.of("--out", outDir.toString()));
		out.getBuffer().setLength(0);
		assertThat(run(args.toArray(String[]::new))).as(err.toString()).isZero();
		return JSON.readTree(outDir.resolve("results.json").toFile());
	}

	/** A small Mooncake-format file written from the synthetic tenants workload. */
	private Path mooncakeFile(int requests) throws IOException {
		return TinyTraces.mooncakeFile(dir, requests);
	}

	/** A row of results.json without its replicates and wall-clock fields. */
	private static JsonNode comparable(JsonNode row) {
		ObjectNode copy = ((ObjectNode) row).deepCopy();
		copy.remove(WALL_CLOCK);
		copy.remove(REPLICATE_FIELDS);
		return copy;
	}

	/**
	 * Checks that every replicate of {@code replicated} (seeds {@code first} on) found
	 * the capacity of the single run of its seed, that the row's other fields are its
	 * lower median replicate's single run's, and that the median, min and max are those
	 * of the replicates.
	 */
	private void assertReplicatesAreTheSingleRuns(JsonNode replicated, List<String> common, long first, int count)
			throws IOException {
		List<JsonNode> singles = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			singles.add(results(common, "--seed", Long.toString(first + i)));
		}
		JsonNode rows = replicated.get("policies");
		for (int j = 0; j < rows.size(); j++) {
			JsonNode row = rows.get(j);
			JsonNode replicates = row.get("replicates");
			assertThat(replicates).hasSize(count);
			List<Double> capacities = new ArrayList<>();
			for (int i = 0; i < count; i++) {
				JsonNode single = singles.get(i).get("policies").get(j);
				assertThat(single.get("name")).isEqualTo(row.get("name"));
				assertThat(single.has("replicates")).isFalse();
				assertThat(replicates.get(i).propertyNames()).containsExactly("seed", "capacity");
				assertThat(replicates.get(i).get("seed").asLong()).isEqualTo(first + i);
				assertThat(replicates.get(i).get("capacity").asDouble()).as("%s seed %d", row.get("name"), first + i)
					.isEqualTo(single.get("capacity_rps").asDouble());
				capacities.add(single.get("capacity_rps").asDouble());
			}
			List<Double> sorted = capacities.stream().sorted().toList();
			double median = count % 2 == 1 ? sorted.get(count / 2)
					: (sorted.get(count / 2 - 1) + sorted.get(count / 2)) / 2;
			assertThat(row.get("capacity_median").asDouble()).isEqualTo(median);
			assertThat(row.get("capacity_min").asDouble()).isEqualTo(sorted.get(0));
			assertThat(row.get("capacity_max").asDouble()).isEqualTo(sorted.get(count - 1));
			double lowerMedian = sorted.get((count - 1) / 2);
			int representative = capacities.indexOf(lowerMedian);
			assertThat(row.get("capacity_rps").asDouble()).isEqualTo(lowerMedian);
			if (lowerMedian > 0) {
				// The row's other fields are that replicate's, as its single run found
				// them.
				assertThat(comparable(row)).isEqualTo(comparable(singles.get(representative).get("policies").get(j)));
			}
		}
	}

	@Test
	void eachReplicateOfAJitteredTraceIsTheSingleRunOfItsSeed() throws IOException {
		Path trace = mooncakeFile(400);
		List<String> common = List.of("--trace", trace.toString(), "--instances", "2", "--policies",
				"dualmap,round-robin", "--warmup", "100", "--quick", "--engine-jitter", "0.05", "--threads", "1");
		JsonNode replicated = results(common, "--seed", "7", "--replicates", "3");
		String printed = out.toString();
		assertThat(replicated.get("trace").asString()).isEqualTo("tiny.jsonl, engine step jitter 0.05, seeds 7 to 9");
		assertThat(replicated.get("policies").get(0).propertyNames()).startsWith("name", "capacity_rps",
				"capacity_median", "capacity_min", "capacity_max", "replicates", "goodput_rps");
		assertReplicatesAreTheSingleRuns(replicated, common, 7, 3);
		assertThat(printed).contains("3 replicates, seeds 7 to 9")
			.contains("| policy | capacity median (min-max) | replicates | capacity (req/s) |");
		JsonNode dualmap = replicated.get("policies").get(0);
		StringBuilder each = new StringBuilder();
		for (JsonNode r : dualmap.get("replicates")) {
			each.append(each.isEmpty() ? "" : ", ")
				.append(String.format(java.util.Locale.ROOT, "%.2f", r.get("capacity").asDouble()));
		}
		assertThat(printed).contains(String.format(java.util.Locale.ROOT, "| dualmap | %.2f (%.2f-%.2f) | %s | %.2f |",
				dualmap.get("capacity_median").asDouble(), dualmap.get("capacity_min").asDouble(),
				dualmap.get("capacity_max").asDouble(), each, dualmap.get("capacity_rps").asDouble()));
	}

	@Test
	void eachReplicateOfASyntheticWorkloadIsTheSingleRunOfItsSeedWithTheMedianOfAnEvenCount() throws IOException {
		List<String> common = List.of("--synthetic", "sessions", "--requests", "600", "--instances", "1", "--policies",
				"least-loaded", "--warmup", "100", "--quick", "--threads", "2");
		JsonNode replicated = results(common, "--seed", "1", "--replicates", "4");
		assertThat(replicated.get("trace").asString()).isEqualTo("synthetic-sessions, seeds 1 to 4");
		assertReplicatesAreTheSingleRuns(replicated, common, 1, 4);
	}

	@Test
	void oneReplicateAddsNothingToTheOutput() throws IOException {
		Path trace = mooncakeFile(300);
		List<String> common = List.of("--trace", trace.toString(), "--instances", "2", "--policies", "round-robin",
				"--warmup", "100", "--quick", "--engine-jitter", "0.05", "--seed", "3");
		JsonNode one = results(common, "--replicates", "1");
		String printed = out.toString();
		assertThat(comparable(one)).isEqualTo(comparable(results(common)));
		assertThat(one.get("trace").asString()).endsWith("seed 3");
		assertThat(one.get("policies").get(0).has("replicates")).isFalse();
		assertThat(one.get("policies").get(0).has("capacity_median")).isFalse();
		assertThat(printed).doesNotContain("replicates").doesNotContain("median");
	}

	@Test
	void theMedianOfAnEvenCountIsTheMeanOfTheMiddleTwoAndTheRowsReplicateTheLowerOne() {
		assertThat(ReplicatedCapacity.median(List.of(12.75, 13.0, 13.0, 12.75))).isEqualTo(12.875);
		assertThat(String.format(java.util.Locale.ROOT, "%.2f", 12.875)).isEqualTo("12.88");
		assertThat(ReplicatedCapacity.median(List.of(17.5, 17.25, 17.5, 17.5, 17.5))).isEqualTo(17.5);
		assertThat(ReplicatedCapacity.lowerMedian(List.of(12.75, 13.0, 13.0, 12.75))).isZero();
		assertThat(ReplicatedCapacity.lowerMedian(List.of(13.0, 13.0, 12.75, 12.75))).isEqualTo(2);
		assertThat(ReplicatedCapacity.lowerMedian(List.of(17.5, 17.25, 17.5, 17.5, 17.5))).isZero();
		assertThat(ReplicatedCapacity.lowerMedian(List.of(3.0, 1.0, 2.0))).isEqualTo(2);
		assertThat(ReplicatedCapacity.lowerMedian(List.of(5.0))).isZero();
	}

	@Test
	void replicatesAreRefusedWhereTheyWouldBeCopiesOrAreNotRun() throws IOException {
		Path trace = mooncakeFile(200);
		String t = trace.toString();
		String o = dir.resolve("refused").toString();
		String w = "--warmup=50";
		assertRefused("--replicates must be between 1 and 32 but was 0", "--trace", t, w, "--engine-jitter", "0.02",
				"--replicates", "0", "--out", o);
		assertRefused("--replicates must be between 1 and 32 but was 33", "--trace", t, w, "--engine-jitter", "0.02",
				"--replicates", "33", "--out", o);
		assertRefused("--replicates 2 on a trace replay would give identical copies", "--trace", t, w, "--replicates",
				"2", "--out", o);
		assertThat(err.toString()).contains("add --engine-jitter");
		assertRefused("--replicates is not supported with --tenants", "--trace", t, w, "--engine-jitter", "0.02",
				"--tenants", "noisy", "--replicates", "2", "--out", o);
		assertRefused("--replicates is not supported with --scale", "--trace", t, w, "--engine-jitter", "0.02",
				"--rate", "2", "--scale", "50%:+1", "--replicates", "2", "--out", o);
		assertRefused("--replicates is not supported with --rate", "--synthetic", "rag", "--requests", "200", w,
				"--rate", "2", "--replicates", "2", "--out", o);
		assertRefused(
				"--seed 9223372036854775807 with --replicates 2 runs seeds past 9223372036854775807; give a "
						+ "--seed at most 9223372036854775806",
				"--synthetic", "rag", "--requests", "200", w, "--seed", String.valueOf(Long.MAX_VALUE), "--replicates",
				"2", "--out", o);
	}

	private void assertRefused(String message, String... args) {
		err.getBuffer().setLength(0);
		assertThat(run(args)).as(err.toString()).isEqualTo(2);
		assertThat(err.toString()).contains(message);
	}

}

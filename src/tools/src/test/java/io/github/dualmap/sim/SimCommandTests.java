package io.github.dualmap.sim;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.sim.report.Charts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

class SimCommandTests {

	@TempDir
	Path dir;

	private final StringWriter out = new StringWriter();

	private final StringWriter err = new StringWriter();

	private int run(String... args) {
		SimCommand command = new SimCommand().redirect(new PrintWriter(out, true), new PrintWriter(err, true),
				() -> 0L);
		return command.runWith(args);
	}

	/** A small Mooncake-format file written from the synthetic tenants workload. */
	private Path mooncakeFile(int requests) throws IOException {
		return TinyTraces.mooncakeFile(dir, requests);
	}

	@Test
	void helpRendersEveryDescriptionWithoutPicocliFormatWarnings() {
		java.io.PrintStream original = System.err;
		java.io.ByteArrayOutputStream stderr = new java.io.ByteArrayOutputStream();
		System.setErr(new java.io.PrintStream(stderr, true, java.nio.charset.StandardCharsets.UTF_8));
		try {
			assertThat(run("--help")).isZero();
		}
		finally {
			System.setErr(original);
		}
		// A lone % in a description made picocli warn and print the raw text.
		assertThat(stderr.toString(java.nio.charset.StandardCharsets.UTF_8)).doesNotContain("picocli WARN");
		assertThat(out.toString()).contains("50%:+2");
	}

	@Test
	void writesResultsJsonWithExactlyTheContractFieldsAndCharts() throws IOException {
		Path trace = mooncakeFile(400);
		Path outDir = dir.resolve("out");
		int code = run("--trace", trace.toString(), "--instances", "2", "--policies", "dualmap,round-robin", "--warmup",
				"100", "--quick", "--out", outDir.toString());
		assertThat(code).as(err.toString()).isZero();
		JsonNode json = JsonMapper.builder().build().readTree(outDir.resolve("results.json").toFile());
		assertThat(json.propertyNames()).containsExactly("trace", "instances", "routers", "slo_ttft_s", "metric",
				"policies");
		assertThat(json.get("metric").asString()).isEqualTo(
				"feasible requests and prompt tokens >= 0.9 within SLO, every prompt-size quartile >= 0.8, steady state");
		assertThat(json.get("trace").asString()).isEqualTo("tiny.jsonl");
		assertThat(json.get("instances").asInt()).isEqualTo(2);
		assertThat(json.get("routers").asInt()).isEqualTo(1);
		assertThat(json.get("slo_ttft_s").asDouble()).isEqualTo(5.0);
		assertThat(json.get("policies")).hasSize(2);
		for (JsonNode p : json.get("policies")) {
			assertThat(p.propertyNames()).containsExactly("name", "capacity_rps", "goodput_rps", "ttft_p50_s",
					"ttft_p90_s", "ttft_p99_s", "hit_rate", "load_cv", "migrations", "decision_us_p99",
					"capacity_requests_rps", "feasible_share", "rejected_share", "rescue_share", "attainment_by_size",
					"transient", "requests_per_instance", "points");
			assertThat(p.get("capacity_rps").asDouble()).isPositive();
			assertThat(p.get("capacity_requests_rps").asDouble()).isPositive();
			assertThat(p.get("feasible_share").asDouble()).isBetween(0.5, 1.0);
			assertThat(p.get("rejected_share").asDouble()).isBetween(0.0, 0.1);
			assertThat(p.get("rescue_share").asDouble()).isBetween(0.0, 1.0);
			assertThat(p.get("attainment_by_size")).hasSize(4);
			JsonNode longest = p.get("attainment_by_size").get(3);
			assertThat(longest.propertyNames()).containsExactly("min_prompt_tokens", "max_prompt_tokens", "requests",
					"attainment");
			assertThat(longest.get("attainment").asDouble()).isGreaterThanOrEqualTo(0.8);
			assertThat(longest.get("min_prompt_tokens").asInt())
				.isGreaterThanOrEqualTo(p.get("attainment_by_size").get(2).get("max_prompt_tokens").asInt());
			assertThat(p.get("transient").asBoolean()).isFalse();
			assertThat(p.get("points").size()).isGreaterThan(2);
			assertThat(p.get("goodput_rps").asDouble()).isPositive()
				.isLessThanOrEqualTo(p.get("capacity_rps").asDouble());
			assertThat(p.get("migrations").isIntegralNumber()).isTrue();
			// Both instances got measured requests of the run at capacity, at most all of
			// them.
			JsonNode sent = p.get("requests_per_instance");
			assertThat(sent).hasSize(2).allSatisfy(n -> assertThat(n.isIntegralNumber() && n.asInt() > 0).isTrue());
			int measured = 0;
			for (JsonNode point : p.get("points")) {
				if (point.get("rate_rps").asDouble() == p.get("capacity_rps").asDouble()) {
					measured = point.get("measured").asInt();
				}
			}
			assertThat(sent.get(0).asInt() + sent.get(1).asInt()).isPositive().isLessThanOrEqualTo(measured);
		}
		assertThat(json.get("policies").get(0).get("name").asString()).isEqualTo("dualmap");
		for (String png : List.of(Charts.ATTAINMENT, Charts.TTFT_CDF, Charts.LOAD_OVER_TIME)) {
			Path file = outDir.resolve(png);
			assertThat(file).exists();
			byte[] head = Files.readAllBytes(file);
			assertThat(head.length).isGreaterThan(1000);
			assertThat(new String(head, 1, 3, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("PNG");
		}
		assertThat(out.toString()).contains("| policy | capacity (req/s)").contains("| dualmap |");
		// The engine-state table follows, one row per policy; results.json keeps its
		// shape.
		String printed = out.toString();
		String engines = printed.substring(printed.indexOf("| policy | rate (req/s) | running"),
				printed.indexOf("SLO attainment in the same runs"));
		assertThat(engines.lines().filter(l -> l.startsWith("| dualmap |"))).hasSize(1);
		// Its last column: the measured requests sent to each instance, as in
		// results.json.
		JsonNode dualmapSent = json.get("policies").get(0).get("requests_per_instance");
		assertThat(engines).contains(" | " + dualmapSent.get(0).asInt() + " / " + dualmapSent.get(1).asInt() + " |"
				+ System.lineSeparator());
		// The attainment table gives the served requests' own TTFT tail beside it.
		String attainment = printed.substring(printed.indexOf("SLO attainment in the same runs"));
		assertThat(attainment).contains("| TTFT p90 / p99 of the served (s) |");
		assertThat(attainment.lines().filter(l -> l.startsWith("| dualmap |")).findFirst().orElseThrow())
			.matches(".*\\| \\d+\\.\\d{3} / \\d+\\.\\d{3} \\| (whole trace|stopped.*) \\|$");
	}

	@Test
	void printsTheWorkBoundOfTheTraceAndEachCapacityAsAShareOfIt() throws IOException {
		Path trace = mooncakeFile(400);
		int code = run("--trace", trace.toString(), "--instances", "2", "--policies", "round-robin", "--warmup", "100",
				"--rate", "1", "--out", dir.resolve("bound").toString());
		assertThat(code).as(err.toString()).isZero();
		WorkBound bound = WorkBound.of(io.github.dualmap.sim.trace.MooncakeTraceReader.read(trace),
				io.github.dualmap.engine.EngineProfile.h100_8b(), 100);
		WorkBound lru = WorkBound.pooledLru(io.github.dualmap.sim.trace.MooncakeTraceReader.read(trace),
				io.github.dualmap.engine.EngineProfile.h100_8b(), 100, 2);
		io.github.dualmap.sim.trace.Trace read = io.github.dualmap.sim.trace.MooncakeTraceReader.read(trace);
		Yardstick judged = Yardstick.of(read, io.github.dualmap.engine.EngineProfile.h100_8b(), 100,
				i -> 5_000_000_000L, 0);
		double ceiling = judged.headlineCeiling(2, 0.9, 0.9, 0.8);
		double lruCeiling = judged
			.withWork(WorkBound.pooledLruWorkSeconds(read, io.github.dualmap.engine.EngineProfile.h100_8b(), 2))
			.headlineCeiling(2, 0.9, 0.9, 0.8);
		String printed = out.toString();
		assertThat(printed).contains("Work bound (no router can serve more)")
			.contains(String.format(java.util.Locale.ROOT, "2 h100-8b engines are busy all the time at %.2f req/s",
					bound.maxRate(2)))
			.contains(String.format(java.util.Locale.ROOT,
					"pooled into one that evicts least recently used blocks, as each engine does (no block held "
							+ "twice, none held by running requests, requests served in arrival order), %.1f %% of "
							+ "the measured prompt tokens are reused and the engines are busy all the time at %.2f req/s",
					100 * lru.reusableShare(), lru.maxRate(2)))
			.contains("The headline may leave some requests out (turned away or late): up to 10 % of the feasible "
					+ "requests, 10 % of their prompt tokens and 20 % of each prompt-size quartile.")
			.contains(String.format(java.util.Locale.ROOT,
					"the engines are busy all the time at %.2f req/s, the headline's ceiling: no router passes the "
							+ "headline above it. With the pooled LRU cache's reuse instead, %.2f req/s (not a bound).",
					ceiling, lruCeiling))
			.contains(String.format(java.util.Locale.ROOT,
					"| round-robin | 1.00 | %.1f %% | %.1f %% | %.1f %% | %.1f %% |", 100 / bound.maxRate(2),
					100 / lru.maxRate(2), 100 / ceiling, 100 / lruCeiling));
		// Leaving requests out lowers the work to do: each ceiling is above its rate.
		assertThat(ceiling).isGreaterThan(bound.maxRate(2));
		assertThat(lruCeiling).isGreaterThan(lru.maxRate(2)).isLessThanOrEqualTo(ceiling);
	}

	@Test
	void engineTimelineWritesEveryEnginesSeriesOnlyWhenAskedAndNotWithScale() throws IOException {
		Path trace = mooncakeFile(400);
		String[] run = { "--trace", trace.toString(), "--instances", "2", "--policies", "dualmap,round-robin",
				"--warmup", "100", "--rate", "3" };
		assertThat(run(concat(run, "--out", dir.resolve("plain").toString()))).as(err.toString()).isZero();
		assertThat(dir.resolve("plain").resolve("engine_timeline.json")).doesNotExist();
		Path out = dir.resolve("timeline");
		assertThat(run(concat(run, "--engine-timeline", "--out", out.toString()))).as(err.toString()).isZero();
		JsonNode json = JsonMapper.builder().build().readTree(out.resolve("engine_timeline.json").toFile());
		assertThat(json.get("instances").asInt()).isEqualTo(2);
		assertThat(json.get("rate_rps").asDouble()).isEqualTo(3.0);
		assertThat(json.get("policies")).hasSize(2);
		for (JsonNode p : json.get("policies")) {
			int samples = p.get("time_s").size();
			assertThat(samples).isGreaterThan(10);
			assertThat(p.get("instances")).hasSize(2);
			for (JsonNode i : p.get("instances")) {
				assertThat(i.get("id").asString()).startsWith("engine-");
				assertThat(i.propertyNames()).containsExactly("id", "running", "waiting", "kv_usage", "preemptions",
						"in_flight", "queued");
				for (String series : List.of("running", "waiting", "kv_usage", "preemptions", "in_flight", "queued")) {
					assertThat(i.get(series)).as(series).hasSize(samples);
				}
			}
		}
		assertThat(run("--trace", trace.toString(), "--instances", "2", "--rate", "3", "--scale", "50%:+1",
				"--engine-timeline", "--out", dir.resolve("scaled").toString()))
			.isEqualTo(2);
		assertThat(err.toString()).contains("--engine-timeline is not supported with --scale");
	}

	@Test
	void requestLogListsEveryMeasuredRequestOfTheHeadlineRunOnlyWhenAsked() throws IOException {
		Path trace = mooncakeFile(400);
		String[] run = { "--trace", trace.toString(), "--instances", "2", "--routers", "2", "--policies",
				"dualmap,round-robin", "--warmup", "100", "--rate", "3" };
		assertThat(run(concat(run, "--out", dir.resolve("plain").toString()))).as(err.toString()).isZero();
		try (var files = Files.list(dir.resolve("plain"))) {
			assertThat(files.map(f -> f.getFileName().toString())).noneMatch(f -> f.startsWith("requests-"));
		}
		Path out = dir.resolve("log");
		assertThat(run(concat(run, "--request-log", "--out", out.toString()))).as(err.toString()).isZero();
		JsonMapper mapper = JsonMapper.builder().build();
		JsonNode results = mapper.readTree(out.resolve("results.json").toFile());
		for (JsonNode p : results.get("policies")) {
			List<JsonNode> lines = new ArrayList<>();
			for (String line : Files.readAllLines(out.resolve("requests-" + p.get("name").asString() + ".jsonl"))) {
				lines.add(mapper.readTree(line));
			}
			JsonNode point = p.get("points").get(0);
			assertThat(lines).hasSize(point.get("measured").asInt());
			int within = 0;
			long moves = 0;
			java.util.Set<String> reasons = new java.util.HashSet<>();
			for (int k = 0; k < lines.size(); k++) {
				JsonNode r = lines.get(k);
				assertThat(r.propertyNames()).containsExactly("index", "router", "arrival_s", "prompt_tokens",
						"feasible", "slo_s", "instance", "released_s", "reason", "moves", "rescued", "cached_tokens",
						"ttft_s", "outcome", "rejection", "rejected_at");
				assertThat(r.get("index").asInt()).isEqualTo(100 + k);
				assertThat(r.get("router").asInt()).isEqualTo((100 + k) % 2);
				assertThat(r.get("slo_s").asDouble()).isEqualTo(5.0);
				String outcome = r.get("outcome").asString();
				if (outcome.equals("within_slo") || outcome.equals("late")) {
					within += outcome.equals("within_slo") ? 1 : 0;
					assertThat(r.get("ttft_s").asDouble() <= 5.0).isEqualTo(outcome.equals("within_slo"));
					assertThat(r.get("instance").asString()).matches("engine-00[01]");
					assertThat(r.get("released_s").asDouble()).isBetween(r.get("arrival_s").asDouble(),
							r.get("arrival_s").asDouble() + r.get("ttft_s").asDouble());
					assertThat(r.get("cached_tokens").asInt()).isBetween(0, r.get("prompt_tokens").asInt());
					assertThat(r.get("rejection").isNull()).isTrue();
					assertThat(r.get("reason").asString()).isIn("affinity", "slo-switch", "hotspot", "fallback",
							"idle-pull", "rescue", "third-choice", "cold", "load");
					reasons.add(r.get("reason").asString());
					moves += r.get("moves").asInt();
				}
			}
			// The measured requests' moves are among the run's migrations.
			assertThat(moves).isLessThanOrEqualTo(p.get("migrations").asLong());
			assertThat((double) within / lines.size()).as(p.get("name").asString())
				.isCloseTo(point.get("attainment").asDouble(), org.assertj.core.data.Offset.offset(1e-6));
			if (p.get("name").asString().equals("dualmap")) {
				// Prompts of a conversation follow their cached prefix.
				assertThat(reasons).contains("affinity");
			}
		}
	}

	@Test
	void requestLogNamesWhyARequestWasTurnedAwayAndIsRefusedWithScale() throws IOException {
		Path out = dir.resolve("overloaded");
		assertThat(run("--synthetic", "rag", "--requests", "300", "--warmup", "100", "--instances", "1", "--rate",
				"500", "--policies", "dualmap", "--min-duration", "0", "--no-stop", "--request-log", "--out",
				out.toString()))
			.as(err.toString())
			.isZero();
		JsonMapper mapper = JsonMapper.builder().build();
		JsonNode point = mapper.readTree(out.resolve("results.json").toFile())
			.get("policies")
			.get(0)
			.get("points")
			.get(0);
		int rejected = 0;
		for (String line : Files.readAllLines(out.resolve("requests-dualmap.jsonl"))) {
			JsonNode r = mapper.readTree(line);
			if (r.get("outcome").asString().equals("rejected")) {
				rejected++;
				assertThat(r.get("rejection").asString()).matches("(429|503): .+|refused by its engine");
				assertThat(r.get("instance").isNull()).isTrue();
				assertThat(r.get("ttft_s").isNull()).isTrue();
				// One instance: every turn-away here (its queue's bound, the wait bound
				// where
				// the request waited) concerns it.
				assertThat(r.get("rejected_at").asString()).isEqualTo("engine-000");
			}
			else {
				assertThat(r.get("rejection").isNull()).isTrue();
				assertThat(r.get("rejected_at").isNull()).isTrue();
			}
		}
		assertThat(rejected).isPositive();
		assertThat((double) rejected / point.get("measured").asInt()).isCloseTo(point.get("rejected_share").asDouble(),
				org.assertj.core.data.Offset.offset(1e-6));
		// A scheduled run logs its requests too, judged on the same yardstick as its
		// timeline's work in time.
		Path scaled = dir.resolve("scaled");
		assertThat(run("--synthetic", "rag", "--requests", "300", "--warmup", "100", "--instances", "2", "--policies",
				"dualmap", "--rate", "3", "--scale", "50%:+1", "--request-log", "--out", scaled.toString()))
			.as(err.toString())
			.isZero();
		List<String> lines = Files.readAllLines(scaled.resolve("requests-dualmap.jsonl"));
		assertThat(lines).hasSize(200);
		JsonNode timeline = JsonMapper.builder().build().readTree(scaled.resolve("timeline.json").toFile());
		int feasible = 0;
		for (JsonNode w : timeline.get("policies").get(0).get("windows")) {
			feasible += w.get("feasible_requests").asInt();
		}
		int logged = 0;
		for (String line : lines) {
			logged += JsonMapper.builder().build().readTree(line).get("feasible").asBoolean() ? 1 : 0;
		}
		assertThat(logged).isEqualTo(feasible).isPositive();
		assertThat(run("--synthetic", "tenants", "--requests", "300", "--instances", "2", "--rate", "3", "--tenants",
				"noisy", "--request-log", "--out", dir.resolve("noisy").toString()))
			.isEqualTo(2);
		assertThat(err.toString()).contains("--request-log is not supported with --tenants");
	}

	@Test
	void attainmentIsPrintedAndNoStopRunsAFailingRateToTheEnd() {
		String[] failing = { "--synthetic", "rag", "--requests", "300", "--warmup", "100", "--instances", "1", "--rate",
				"500", "--policies", "round-robin", "--min-duration", "0" };
		assertThat(run(concat(failing, "--out", dir.resolve("stop").toString()))).as(err.toString()).isZero();
		String stopped = out.toString();
		assertThat(stopped).contains("SLO attainment in the same runs")
			.containsPattern(
					"\\| round-robin \\| 500\\.00 \\| 200 \\| \\d+ \\| [\\d.]+ % \\| [\\d.]+ % \\| - / \\d+ \\| ([\\d.]+ / [\\d.]+|-) \\| stopped once over 10 % had missed");
		out.getBuffer().setLength(0);
		assertThat(run(concat(failing, "--no-stop", "--out", dir.resolve("whole").toString()))).as(err.toString())
			.isZero();
		assertThat(out.toString()).containsPattern(
				"\\| round-robin \\| 500\\.00 \\| 200 \\| \\d+ \\| [\\d.]+ % \\| [\\d.]+ % \\| - / \\d+ \\| ([\\d.]+ / [\\d.]+|-) \\| whole trace \\|");
	}

	@Test
	void aStricterTargetAttainmentIsNamedInTheOutputAndANonsenseOneRefused() {
		String[] run = { "--synthetic", "rag", "--requests", "300", "--warmup", "100", "--instances", "1", "--rate",
				"2", "--policies", "round-robin" };
		assertThat(run(concat(run, "--target-attainment", "0.95", "--out", dir.resolve("t95").toString())))
			.as(err.toString())
			.isZero();
		assertThat(out.toString()).contains("TTFT SLO 5.00 s\n")
			.contains(
					"Capacity: the highest rate with feasible requests >= 0.95, their prompt tokens >= 0.9 within SLO, "
							+ "every prompt-size quartile >= 0.8, steady state\n");
		out.getBuffer().setLength(0);
		assertThat(run(concat(run, "--out", dir.resolve("t90").toString()))).isZero();
		assertThat(out.toString()).contains("Capacity: the highest rate with feasible requests and prompt tokens "
				+ ">= 0.9 within SLO, every prompt-size quartile >= 0.8, steady state\n");
		assertThat(run(concat(run, "--target-attainment", "1.5", "--out", dir.resolve("bad").toString()))).isEqualTo(2);
		assertThat(err.toString()).contains("--target-attainment must be in (0, 1]");
		out.getBuffer().setLength(0);
		assertThat(run(concat(run, "--target-prompt-tokens", "0.8", "--out", dir.resolve("p80").toString())))
			.as(err.toString())
			.isZero();
		assertThat(out.toString()).contains("feasible requests >= 0.9, their prompt tokens >= 0.8 within SLO");
		out.getBuffer().setLength(0);
		assertThat(run(
				concat(run, "--target-prompt-tokens", "0", "--size-floor", "0", "--out", dir.resolve("p0").toString())))
			.as(err.toString())
			.isZero();
		assertThat(out.toString()).contains("with feasible requests >= 0.9 within SLO, steady state\n");
		assertThat(run(concat(run, "--size-floor", "2", "--out", dir.resolve("bad").toString()))).isEqualTo(2);
		assertThat(err.toString()).contains("--size-floor must be in [0, 1] but was 2.0");
		assertThat(run(concat(run, "--target-prompt-tokens", "-1", "--out", dir.resolve("bad").toString())))
			.isEqualTo(2);
		assertThat(err.toString()).contains("--target-prompt-tokens must be in [0, 1] but was -1.0");
	}

	private static String[] concat(String[] head, String... tail) {
		String[] all = Arrays.copyOf(head, head.length + tail.length);
		System.arraycopy(tail, 0, all, head.length, tail.length);
		return all;
	}

	@Test
	void sloClassesArePrintedAndWrittenBesideAnUnchangedResultsJson() throws IOException {
		Path outDir = dir.resolve("classes");
		int code = run("--synthetic", "rag", "--requests", "300", "--warmup", "100", "--instances", "2", "--rate", "2",
				"--policies", "dualmap", "--slo-classes", "interactive=1s:0.3,batch=60s:0.2", "--min-duration", "0",
				"--out", outDir.toString());
		assertThat(code).as(err.toString()).isZero();
		JsonNode results = JsonMapper.builder().build().readTree(outDir.resolve("results.json").toFile());
		assertThat(results.propertyNames()).containsExactly("trace", "instances", "routers", "slo_ttft_s", "metric",
				"policies");
		JsonNode classes = JsonMapper.builder().build().readTree(outDir.resolve("classes.json").toFile());
		JsonNode dualmap = classes.get("policies").get(0);
		assertThat(dualmap.get("name").asString()).isEqualTo("dualmap");
		assertThat(dualmap.get("classes").valueStream().map(c -> c.get("name").asString()).toList())
			.containsExactly("interactive", "batch", "default");
		assertThat(dualmap.get("classes").valueStream().mapToInt(c -> c.get("measured").asInt()).sum()).isEqualTo(200);
		assertThat(dualmap.get("classes").get(1).get("slo_ttft_s").asDouble()).isEqualTo(60.0);
		assertThat(out.toString()).contains("SLO classes in the same runs")
			.contains("| dualmap | 2.00 | batch | 60.0 |");
		// Without --slo-classes there is no classes.json.
		Path plain = dir.resolve("plain");
		assertThat(run("--synthetic", "rag", "--requests", "300", "--warmup", "100", "--instances", "2", "--rate", "2",
				"--policies", "dualmap", "--out", plain.toString()))
			.isZero();
		assertThat(plain.resolve("classes.json")).doesNotExist();
		assertThat(run("--synthetic", "rag", "--requests", "300", "--rate", "2", "--slo-classes", "a=1s:2", "--out",
				plain.toString()))
			.isEqualTo(2);
		assertThat(err.toString()).contains("share in (0, 1]");
	}

	@Test
	void syntheticWorkloadAtOneRateWithRouterReplicas() {
		Path outDir = dir.resolve("syn");
		int code = run("--synthetic", "rag", "--requests", "300", "--warmup", "100", "--instances", "2", "--routers",
				"2", "--rate", "2", "--policies", "least-loaded", "--network-delay", "2ms", "--replica-sync", "--out",
				outDir.toString());
		assertThat(code).as(err.toString()).isZero();
		assertThat(outDir.resolve("results.json")).content().contains("\"routers\" : 2").contains("synthetic-rag");
	}

	@Test
	void aRepeatedTraceIsMeasuredOverEveryCopyAfterTheWarmUp() {
		Path outDir = dir.resolve("repeat");
		assertThat(run("--synthetic", "rag", "--requests", "300", "--warmup", "100", "--instances", "2", "--rate", "2",
				"--repeat", "3", "--policies", "least-loaded", "--out", outDir.toString()))
			.as(err.toString())
			.isZero();
		assertThat(out.toString()).contains("synthetic-rag x3")
			.containsPattern("\\| least-loaded \\| 2\\.00 \\| 800 \\|");
		assertThat(run("--synthetic", "rag", "--repeat", "0", "--out", outDir.toString())).isEqualTo(2);
		assertThat(err.toString()).contains("--repeat must be > 0 but was 0");
	}

	@Test
	void tiesAreSpreadByDefaultAndReplayedAsStampedOnRequest() throws IOException {
		// Ten requests per 3 s stamp, as the Mooncake traces have them.
		List<String> lines = new ArrayList<>();
		for (int i = 0; i < 200; i++) {
			lines.add(String.format(java.util.Locale.ROOT,
					"{\"timestamp\": %d, \"input_length\": 600, \"output_length\": 20, \"hash_ids\": [0, %d]}",
					i / 10 * 3000, i + 1));
		}
		Path trace = dir.resolve("stamped.jsonl");
		Files.write(trace, lines);
		Path outDir = dir.resolve("spread");
		assertThat(run("--trace", trace.toString(), "--warmup", "50", "--instances", "2", "--rate", "2",
				"--min-duration", "0", "--policies", "round-robin", "--out", outDir.toString()))
			.as(err.toString())
			.isZero();
		assertThat(out.toString()).contains("stamped.jsonl, ties spread");
		assertThat(Files.readString(outDir.resolve("results.json")))
			.contains("\"trace\" : \"stamped.jsonl, ties spread\"");
		Path stampedDir = dir.resolve("stamped");
		assertThat(run("--trace", trace.toString(), "--ties", "stamped", "--warmup", "50", "--instances", "2", "--rate",
				"2", "--min-duration", "0", "--policies", "round-robin", "--out", stampedDir.toString()))
			.as(err.toString())
			.isZero();
		assertThat(Files.readString(stampedDir.resolve("results.json"))).contains("\"trace\" : \"stamped.jsonl\"");
		assertThat(run("--trace", trace.toString(), "--ties", "jittered", "--out", stampedDir.toString())).isEqualTo(2);
		assertThat(err.toString()).contains("unknown --ties 'jittered' (spread or stamped)");
	}

	@Test
	void routersTakeRequestsRoundRobinByDefaultAndSessionsOnRequest() throws IOException {
		Path trace = mooncakeFile(400);
		String[] common = { "--trace", trace.toString(), "--warmup", "50", "--instances", "2", "--routers", "2",
				"--rate", "3", "--min-duration", "0", "--policies", "dualmap" };
		String byRequest = resultsOf(common);
		assertThat(byRequest).contains("\"trace\" : \"tiny.jsonl, router phases staggered\"");
		assertThat(resultsOf(common, "--router-spread", "requests")).isEqualTo(byRequest);
		assertThat(resultsOf(common, "--router-spread", "sessions"))
			.contains("\"trace\" : \"tiny.jsonl, router phases staggered, spread by sessions\"")
			.contains("\"name\" : \"dualmap\"");
		Path outDir = dir.resolve("spread-by");
		assertThat(run("--trace", trace.toString(), "--routers", "2", "--router-spread", "tenants", "--out",
				outDir.toString()))
			.isEqualTo(2);
		assertThat(err.toString()).contains("unknown --router-spread 'tenants' (requests or sessions)");
	}

	@Test
	void routerPhasesAreStaggeredByDefaultAndAlignedOnRequest() throws IOException {
		Path trace = mooncakeFile(400);
		String[] common = { "--trace", trace.toString(), "--warmup", "50", "--instances", "2", "--routers", "2",
				"--rate", "3", "--min-duration", "0", "--policies", "dualmap" };
		String staggered = resultsOf(common);
		assertThat(staggered).contains("\"trace\" : \"tiny.jsonl, router phases staggered\"");
		assertThat(resultsOf(common, "--router-phases", "staggered")).isEqualTo(staggered);
		assertThat(resultsOf(common, "--router-phases", "aligned"))
			.contains("\"trace\" : \"tiny.jsonl, router phases aligned\"")
			.contains("\"name\" : \"dualmap\"");
		Path outDir = dir.resolve("phases");
		assertThat(run("--trace", trace.toString(), "--routers", "2", "--router-phases", "random", "--out",
				outDir.toString()))
			.isEqualTo(2);
		assertThat(err.toString()).contains("unknown --router-phases 'random' (staggered or aligned)");
	}

	@Test
	void engineJitterMakesOtherSeedsReplicatesAndIsNamed() throws IOException {
		Path trace = mooncakeFile(400);
		String[] common = { "--trace", trace.toString(), "--warmup", "50", "--instances", "2", "--rate", "3",
				"--min-duration", "0", "--policies", "least-loaded" };
		String jittered1 = resultsOf(common, "--engine-jitter", "0.05", "--seed", "1");
		String jittered1Again = resultsOf(common, "--engine-jitter", "0.05", "--seed", "1");
		String jittered2 = resultsOf(common, "--engine-jitter", "0.05", "--seed", "2");
		assertThat(jittered1).contains("engine step jitter 0.05, seed 1").isEqualTo(jittered1Again);
		assertThat(ttftP90(jittered2)).isNotEqualTo(ttftP90(jittered1));
		// Without jitter a trace's replay has no randomness: the seed changes nothing.
		String plain1 = resultsOf(common, "--seed", "1");
		assertThat(plain1).doesNotContain("jitter").isEqualTo(resultsOf(common, "--seed", "2"));
		for (String bad : List.of("-0.01", "0.5", "NaN")) {
			err.getBuffer().setLength(0);
			assertThat(run("--trace", trace.toString(), "--engine-jitter", bad, "--out", dir.resolve("j").toString()))
				.isEqualTo(2);
			assertThat(err.toString()).contains("--engine-jitter must be at least 0 and below 0.5 but was");
		}
	}

	@Test
	void theLongPrefillThresholdConfiguresEveryEngineAndIsNamed() throws IOException {
		Path trace = mooncakeFile(400);
		String[] common = { "--trace", trace.toString(), "--warmup", "50", "--instances", "2", "--rate", "3",
				"--min-duration", "0", "--policies", "least-loaded" };
		String capped = resultsOf(common, "--long-prefill-token-threshold", "256");
		String plain = resultsOf(common);
		assertThat(capped).contains("engine long-prefill-token-threshold 256");
		assertThat(plain).doesNotContain("long-prefill");
		// The synthetic prompts are longer than 256 tokens, so their prefills take more
		// steps.
		assertThat(ttftP90(capped)).isNotEqualTo(ttftP90(plain));
		err.getBuffer().setLength(0);
		assertThat(run("--trace", trace.toString(), "--long-prefill-token-threshold", "-1", "--out",
				dir.resolve("t").toString()))
			.isEqualTo(2);
		assertThat(err.toString()).contains("--long-prefill-token-threshold must be >= 0 but was -1");
	}

	@Test
	void aPoolMayMixProfilesAndIsNamedWithoutAWorkBound() throws IOException {
		Path trace = mooncakeFile(400);
		String[] common = { "--trace", trace.toString(), "--warmup", "50", "--instances", "2", "--rate", "3",
				"--min-duration", "0", "--policies", "round-robin" };
		String fast = resultsOf(common);
		assertThat(out.toString()).contains("Work bound (no router can serve more)");
		out.getBuffer().setLength(0);
		String mixed = resultsOf(common, "--profile", "h100-8b:1,a100-8b:1");
		assertThat(mixed).contains("engines h100-8b:1,a100-8b:1");
		assertThat(fast).doesNotContain("engines ");
		assertThat(out.toString())
			.contains("Work bound: not computed for a pool that mixes profiles (h100-8b:1,a100-8b:1)")
			.doesNotContain("Work bound (no router can serve more)");
		// Round robin sends every other request to the A100, whose steps are slower.
		assertThat(ttftP90(mixed)).isGreaterThan(ttftP90(fast));
		err.getBuffer().setLength(0);
		assertThat(run("--trace", trace.toString(), "--profile", "h100-8b:1,a100-8b:2", "--instances", "2", "--out",
				dir.resolve("m").toString()))
			.isEqualTo(2);
		assertThat(err.toString()).contains("makes a pool of 3 instances, but --instances is 2");
		assertThat(run("--trace", trace.toString(), "--profile", "h100-8b:1,a100-8b:1", "--instances", "2",
				"--policies", "dualmap-oracle-ttft", "--out", dir.resolve("m").toString()))
			.isEqualTo(2);
		assertThat(err.toString()).contains("dualmap-oracle-ttft takes one engine profile's coefficients");
	}

	@Test
	void aMixsRingWeightsReachTheRouters() throws IOException {
		Path trace = mooncakeFile(400);
		String[] common = { "--trace", trace.toString(), "--warmup", "50", "--instances", "2", "--rate", "1",
				"--min-duration", "0", "--policies", "bounded-load-ch" };
		// Two profiles of the same speed (they differ in their KV cache, which this
		// load does not fill).
		int[] even = requestsPerInstance(common, "--profile", "h100-8b:1,h100-8b-fp8:1");
		int[] heavy = requestsPerInstance(common, "--profile", "h100-8b:1:10,h100-8b-fp8:1");
		// Consistent hashing with bounded loads takes the key's instance on its ring
		// while that is below its share: with weight 10 the first instance holds about
		// ten keys in eleven, and a share ten times the other's.
		assertThat(heavy[0]).isGreaterThan(4 * heavy[1]);
		assertThat(even[0]).isLessThan(2 * even[1]);
		assertThat(even[1]).isLessThan(2 * even[0]);
	}

	/** The "measured requests per instance" of a run's single row. */
	private int[] requestsPerInstance(String[] common, String... more) throws IOException {
		out.getBuffer().setLength(0);
		resultsOf(common, more);
		String row = out.toString()
			.lines()
			.dropWhile(l -> !l.contains("| measured requests per instance |"))
			.skip(2)
			.findFirst()
			.orElseThrow();
		String[] cells = row.split("\\|");
		return Arrays.stream(cells[cells.length - 1].strip().split(" / ")).mapToInt(Integer::parseInt).toArray();
	}

	private int runs;

	private String resultsOf(String[] common, String... more) throws IOException {
		Path outDir = dir.resolve("r" + runs++);
		List<String> args = new ArrayList<>(Arrays.asList(common));
		args.addAll(Arrays.asList(more));
		args.addAll(List.of("--out", outDir.toString()));
		assertThat(run(args.toArray(String[]::new))).as(err.toString()).isZero();
		return Files.readString(outDir.resolve("results.json"));
	}

	private static double ttftP90(String resultsJson) {
		return JsonMapper.builder().build().readTree(resultsJson).get("policies").get(0).get("ttft_p90_s").asDouble();
	}

	@Test
	void gatewayPropertiesSetForTheRunAndBadOnesRefused() {
		String outDir = dir.resolve("set").toString();
		int code = run("--synthetic", "rag", "--requests", "300", "--warmup", "100", "--instances", "2", "--rate", "2",
				"--policies", "dualmap", "--set", "dualmap.switch-hit-charge=0", "--set",
				"dualmap.dispatch.max-queued-per-pool=4096", "--out", outDir);
		assertThat(code).as(err.toString()).isZero();
		assertThat(run("--synthetic", "rag", "--requests", "300", "--warmup", "100", "--rate", "2", "--set",
				"dualmap.switch-hit-charge=-1", "--out", outDir))
			.isEqualTo(2);
		assertThat(err.toString()).contains("sim: --set: dualmap.switch-hit-charge must be >= 0")
			.doesNotContain("at io.")
			.doesNotContain("HV000001");
	}

	@Test
	void malformedLineExitsWithTwoAndNamesTheLine() throws IOException {
		Path trace = dir.resolve("bad.jsonl");
		Files.writeString(trace, """
				{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [0]}
				{"timestamp": 1, "input_length": 10, "output_length": "many", "hash_ids": [0]}
				""");
		int code = run("--trace", trace.toString(), "--out", dir.resolve("x").toString());
		assertThat(code).isEqualTo(2);
		assertThat(err.toString()).contains("bad.jsonl, line 2").contains("output_length").doesNotContain("at io.");
	}

	@Test
	void badInputExitsWithTwoAndAClearMessage() throws IOException {
		Path trace = mooncakeFile(50);
		String outDir = dir.resolve("x").toString();
		assertThat(run("--trace", trace.toString(), "--policies", "dualmap,nope", "--out", outDir)).isEqualTo(2);
		assertThat(err.toString()).contains("unknown policy 'nope'");
		assertThat(run("--trace", trace.toString(), "--policies", "dualmap+queue", "--out", outDir)).isEqualTo(2);
		assertThat(err.toString()).contains("'dualmap+queue': +queue puts a peer policy behind the dispatch queue");
		assertThat(run("--trace", dir.resolve("missing.jsonl").toString(), "--out", outDir)).isEqualTo(2);
		assertThat(err.toString()).contains("cannot read trace file");
		assertThat(run("--trace", trace.toString(), "--instances", "0", "--out", outDir)).isEqualTo(2);
		assertThat(err.toString()).contains("--instances must be > 0 but was 0");
		assertThat(run("--trace", trace.toString(), "--slo-ttft", "soon", "--out", outDir)).isEqualTo(2);
		assertThat(err.toString()).contains("--slo-ttft must be a duration");
		// An option picocli cannot read: one line, not the usage text.
		err.getBuffer().setLength(0);
		assertThat(run("--trace", trace.toString(), "--instances", "many", "--out", outDir)).isEqualTo(2);
		assertThat(err.toString().lines()).singleElement()
			.asString()
			.contains("Invalid value for option '--instances'")
			.contains("sim --help lists the options");
		assertThat(run("--trace", trace.toString(), "--out", outDir)).isEqualTo(2);
		assertThat(err.toString()).contains("nothing would be measured");
		// An --out that cannot be written is found before any simulation.
		err.getBuffer().setLength(0);
		assertThat(run("--trace", trace.toString(), "--requests", "50", "--warmup", "0", "--policies", "round-robin",
				"--out", trace.toString()))
			.isEqualTo(2);
		assertThat(err.toString())
			.isEqualTo("sim: --out " + trace + " is a file, not a directory" + System.lineSeparator());
		assertThat(out.toString()).doesNotContain("round-robin");
		// An empty --out is not the current directory.
		err.getBuffer().setLength(0);
		assertThat(run("--trace", trace.toString(), "--requests", "50", "--warmup", "0", "--policies", "round-robin",
				"--out", ""))
			.isEqualTo(2);
		assertThat(err.toString()).isEqualTo("sim: --out must name a directory but was ''" + System.lineSeparator());
	}

	@Test
	void theProgressBarIsShownOnlyWhenStderrIsATerminal() throws IOException {
		Path pts = Files.createSymbolicLink(dir.resolve("fd-pts"), Path.of("/dev/pts/3"));
		Path tty = Files.createSymbolicLink(dir.resolve("fd-tty"), Path.of("/dev/tty1"));
		Path log = Files.createSymbolicLink(dir.resolve("fd-log"), dir.resolve("err.log"));
		Path pipe = Files.createSymbolicLink(dir.resolve("fd-pipe"), Path.of("pipe:[12345]"));
		Path devNull = Files.createSymbolicLink(dir.resolve("fd-null"), Path.of("/dev/null"));
		// A terminal's stderr shows the bar whatever the console says, and a redirected
		// one does not.
		assertThat(SimRun.stderrIsTerminal(pts, () -> false)).isTrue();
		assertThat(SimRun.stderrIsTerminal(tty, () -> false)).isTrue();
		for (Path redirected : List.of(log, pipe, devNull)) {
			assertThat(SimRun.stderrIsTerminal(redirected, () -> true)).as(redirected.toString()).isFalse();
		}
		// No link to read (not Linux): the console decides.
		assertThat(SimRun.stderrIsTerminal(dir.resolve("none"), () -> true)).isTrue();
		assertThat(SimRun.stderrIsTerminal(dir.resolve("none"), () -> false)).isFalse();
	}

	@Test
	void extremeDurationsAndRatesAreRefusedInsteadOfOverflowingTheClock() throws IOException {
		Path trace = mooncakeFile(60);
		String outDir = dir.resolve("x").toString();
		String[] small = { "--trace", trace.toString(), "--requests", "60", "--warmup", "10", "--policies",
				"round-robin", "--instances", "2", "--out", outDir };
		for (String[] bad : new String[][] {
				{ "--rate", "1", "--slo-ttft", "99999999999999s", "--slo-ttft must be at most 1 day" },
				{ "--rate", "1", "--network-delay", "9999999999999s", "--network-delay must be at most 1 day" },
				{ "--rate", "1e-12", "--rate must be between 0.01 and 1000000 req/s but was 1.0E-12" },
				{ "--rate", "0.001", "--rate must be between 0.01 and 1000000 req/s but was 0.001" },
				{ "--rate", "1e300", "--rate must be between 0.01 and 1000000 req/s" },
				{ "--rate", "1", "--slo-classes", "a=99999999999999s:0.5", "--slo-classes must be at most 1 day" } }) {
			err.getBuffer().setLength(0);
			String[] args = java.util.stream.Stream
				.concat(java.util.Arrays.stream(small), java.util.Arrays.stream(bad, 0, bad.length - 1))
				.toArray(String[]::new);
			assertThat(run(args)).as(String.join(" ", bad)).isEqualTo(2);
			assertThat(err.toString()).startsWith("sim: " + bad[bad.length - 1]);
			assertThat(err.toString().lines()).hasSize(1);
		}
		// Values the options accept but a run could not hold, and options that would do
		// nothing: refused up front, one line, no directory left.
		Path refusedOut = dir.resolve("refused");
		String[] few = { "--trace", trace.toString(), "--requests", "60", "--warmup", "10", "--policies", "round-robin",
				"--instances", "2", "--rate", "1", "--out", refusedOut.toString() };
		for (String[] bad : new String[][] {
				{ "--repeat", "1000000", "--repeat 1000000 makes 60000000 requests of the 60 of the workload" },
				{ "--routers", "100000", "--routers must be at most 64 but was 100000" },
				{ "--scrape-interval", "0.001ms", "--scrape-interval must be at least 1ms" },
				{ "--replica-sync", "--replica-sync needs --routers 2 or more" },
				{ "--scale", "50%:+99999999999", "--scale step '50%:+99999999999' adds or removes more instances" },
				{ "--scale", "50%:+1,", "--scale step '' must look like" },
				{ "--slow-down", "50%:0:2,", "--slow-down step '' must look like" },
				{ "--slow-down", "50%:0:2", "--scale", "60s:+1",
						"--scale and --slow-down mix times and shares of the trace ('60s:+1' and '50%:0:2')" },
				{ "--profile", "h100-8b:2147483647,h100-8b-fp8:2147483647", "makes a pool of 2147483647 instances" },
				{ "--slo-classes", "a=2s:0.2,", "--slo-classes takes NAME=DURATION:SHARE" },
				{ "--tenants", "noisy", "--engine-timeline", "--engine-timeline is not supported with --tenants" } }) {
			err.getBuffer().setLength(0);
			String[] args = java.util.stream.Stream
				.concat(java.util.Arrays.stream(few), java.util.Arrays.stream(bad, 0, bad.length - 1))
				.toArray(String[]::new);
			assertThat(run(args)).as(String.join(" ", bad)).isEqualTo(2);
			assertThat(err.toString()).as(String.join(" ", bad)).startsWith("sim: ").contains(bad[bad.length - 1]);
			assertThat(err.toString().lines()).hasSize(1);
			assertThat(refusedOut).doesNotExist();
		}
		err.getBuffer().setLength(0);
		assertThat(run("--trace", trace.toString(), "--requests", "60", "--warmup", "10", "--policies", "round-robin",
				"--instances", "2", "--rate", "1000000", "--out", refusedOut.toString()))
			.isEqualTo(2);
		assertThat(err.toString()).startsWith("sim: --rate 1000000.0 is more than 1000 req/s per instance of the 2");
		assertThat(refusedOut).doesNotExist();
		// The bounds themselves are accepted.
		assertThat(DurationOption.parse("--slo-ttft", "86400s").toSeconds()).isEqualTo(86_400);
		assertThat(DurationOption.parse("--slo-ttft", "1440m").toSeconds()).isEqualTo(86_400);
	}

	@Test
	void parsesDurations() {
		assertThat(DurationOption.parse("x", "5s").toMillis()).isEqualTo(5000);
		assertThat(DurationOption.parse("x", "800ms").toMillis()).isEqualTo(800);
		assertThat(DurationOption.parse("x", "1.5").toMillis()).isEqualTo(1500);
		assertThat(DurationOption.parse("x", "2m").toSeconds()).isEqualTo(120);
	}

}

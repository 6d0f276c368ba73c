package io.github.dualmap.overhead;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The overhead command end to end on loopback, at a size that proves the plumbing (every
 * path answers, the report and JSON have their shape), not performance.
 */
class OverheadCommandTests {

	@TempDir
	Path dir;

	private final StringWriter out = new StringWriter();

	private final StringWriter err = new StringWriter();

	private int run(String... args) {
		return new OverheadCommand().redirect(new PrintWriter(this.out), new PrintWriter(this.err)).runWith(args);
	}

	@Test
	void everyPathAnswersEveryRequestAndTheReportHasItsShape() {
		int code = run("--requests", "40", "--rounds", "2", "--warmup-rounds", "1", "--concurrency", "4", "--backends",
				"2", "--prompt-chars", "600", "--prompts", "4", "--stream", "--policy", "dualmap-directory", "--out",
				this.dir.toString());
		assertThat(code).as(this.err.toString()).isZero();
		String table = this.out.toString();
		assertThat(table).contains("| path | throughput (req/s) | p50 (ms)")
			.contains("| direct |")
			.contains("| stock-gateway |")
			.contains("| dualmap-gateway |")
			.contains("DualMap / stock gateway: throughput")
			.contains("2 rounds per path after 1 warm-up round,")
			.contains("CPU per request, second half of the rounds over the first: direct ");
		JsonNode json = JsonMapper.builder().build().readTree(this.dir.resolve(OverheadCommand.JSON_FILE).toFile());
		assertThat(json.get("rounds").asInt()).isEqualTo(2);
		assertThat(json.get("warmup_rounds").asInt()).isEqualTo(1);
		assertThat(json.get("stream").asBoolean()).isTrue();
		assertThat(json.get("policy").asString()).isEqualTo("dualmap-directory");
		assertThat(json.get("paths")).hasSize(3);
		for (JsonNode p : json.get("paths")) {
			assertThat(p.get("errors").asLong()).as(p.get("name").asString()).isZero();
			assertThat(p.get("throughput_rps").asDouble()).isPositive();
			assertThat(p.get("p99_ms").asDouble()).isGreaterThanOrEqualTo(p.get("p50_ms").asDouble());
			assertThat(p.get("rounds")).hasSize(2);
			assertThat(p.get("rounds").get(0).get("requests").asInt()).isEqualTo(40);
			assertThat(p.get("cpu_second_half_over_first").asDouble()).isPositive();
		}
		assertThat(json.get("dualmap_over_stock").get("throughput").asDouble()).isPositive();
		// Process CPU per request: a gateway path costs more than the direct call.
		assertThat(table).contains("| CPU / request (us) |").contains("gateway CPU per request");
		double direct = json.get("paths").get(0).get("cpu_us_per_request").asDouble();
		assertThat(direct).isPositive();
		for (int i = 1; i < 3; i++) {
			JsonNode p = json.get("paths").get(i);
			assertThat(p.get("cpu_us_per_request").asDouble()).as(p.get("name").asString()).isGreaterThan(direct);
			assertThat(p.get("gateway_cpu_us_per_request").asDouble()).isPositive();
		}
		assertThat(json.get("dualmap_over_stock").get("gateway_cpu").asDouble()).isPositive();
	}

	@Test
	void badOptionsEndWithExitCodeTwoNamingTheOption() {
		assertThat(run("--requests", "0")).isEqualTo(2);
		assertThat(this.err.toString()).contains("--requests must be > 0 but was 0");
		assertThat(run("--warmup-rounds", "-1")).isEqualTo(2);
		assertThat(this.err.toString()).contains("--warmup-rounds must be >= 0 but was -1");
		assertThat(run("--dispatch-mode", "later")).isEqualTo(2);
		assertThat(this.err.toString()).contains("--dispatch-mode must be queue or pass-through");
		assertThat(run("--policy", "round-robin")).isEqualTo(2);
		assertThat(this.err.toString()).contains("--policy must be one of dualmap, ")
			.contains("dualmap-directory")
			.contains("but was 'round-robin'");
	}

	@Test
	void setRefusesWhatTheCommandDecidesOrWhatWouldFalsifyTheComparison() {
		String[] small = { "--requests", "4", "--rounds", "1", "--backends", "1", "--prompt-chars", "10" };
		for (String[] refused : new String[][] {
				{ "dualmap.dispatch.mode=pass-through", "--set dualmap.dispatch.mode is decided by --dispatch-mode" },
				{ "dualmap.enabled=false", "--set dualmap.enabled is decided by" },
				{ "dualmap.pools.pool.dispatch.mode=queue", "--set dualmap.pools.pool.dispatch.mode is decided by" },
				{ "dualmap.Dispatch.Mode=queue", "--set dualmap.Dispatch.Mode is decided by --dispatch-mode" },
				{ "dualmap.services=other", "--set dualmap.services is decided by" },
				{ "dualmap.policy=least-loaded", "--set dualmap.policy is decided by --policy" },
				{ "dualmap.services[0]=other", "--set dualmap.services[0] is decided by" } }) {
			this.err.getBuffer().setLength(0);
			assertThat(run(concat(small, "--set", refused[0]))).as(refused[0]).isEqualTo(2);
			assertThat(this.err.toString()).startsWith("overhead: " + refused[1]);
			assertThat(this.err.toString().strip().lines()).hasSize(1);
		}
	}

	@Test
	void aBadSetPropertyIsOneLineBeforeAnythingStarts() {
		// Small sizes: before the fix these ran until the DualMap gateway failed to
		// start.
		String[] small = { "--requests", "4", "--rounds", "1", "--backends", "1", "--prompt-chars", "10" };
		for (String[] bad : new String[][] { { "dualmap.nope=1", "dualmap.nope" },
				{ "dualmap.switch-factor=abc", "dualmap.switch-factor" } }) {
			this.err.getBuffer().setLength(0);
			assertThat(run(concat(small, "--set", bad[0]))).isEqualTo(2);
			assertThat(this.err.toString()).startsWith("overhead: --set: ").contains(bad[1]);
			assertThat(this.err.toString().strip().lines()).as(this.err.toString()).hasSize(1);
			assertThat(this.out.toString()).isEmpty();
		}
	}

	private static String[] concat(String[] a, String... b) {
		return java.util.stream.Stream.concat(java.util.Arrays.stream(a), java.util.Arrays.stream(b))
			.toArray(String[]::new);
	}

	@Test
	void aPathWhoseCpuStillFallsDuringTheMeasuredRoundsIsReportedAsNotAtSteadyState() {
		// CPU per request by round: the stock gateway's falls from 400 to 300 us (second
		// half over first 0.75), DualMap's stays within a tenth, the direct call's second
		// half is 0.80 of its first for one round with a collection in it.
		Map<String, List<LoadDriver.Round>> results = new LinkedHashMap<>();
		results.put("direct", rounds(160, 275, 160, 175, 175));
		results.put("stock-gateway", rounds(400, 400, 350, 300, 300));
		results.put("dualmap-gateway", rounds(500, 480, 520, 470, 490));
		OverheadCommand.Report report = OverheadCommand.Report.of(results);
		assertThat(OverheadCommand.Report.cpuDrift(results.get("stock-gateway"))).isEqualTo(0.75);
		assertThat(OverheadCommand.Report.cpuDrift(results.get("dualmap-gateway"))).isCloseTo(480.0 / 490,
				within(1e-9));
		assertThat(OverheadCommand.Report.cpuDrift(rounds(100))).isNaN();
		assertThat(OverheadCommand.Report.stillFalling(results.get("stock-gateway"),
				OverheadCommand.Report.cpuDrift(results.get("stock-gateway"))))
			.isTrue();
		assertThat(OverheadCommand.Report.stillFalling(results.get("direct"),
				OverheadCommand.Report.cpuDrift(results.get("direct"))))
			.isFalse();
		assertThat(OverheadCommand.Report.stillFalling(rounds(100), OverheadCommand.Report.cpuDrift(rounds(100))))
			.isFalse();
		String table = report.markdown(new OverheadCommand());
		assertThat(table).contains("second half of the rounds over the first: direct 0.80x, stock 0.75x, DualMap 0.98x")
			.contains("warning: stock-gateway's CPU per request still fell 25 % during the measured rounds")
			.doesNotContain("warning: dualmap-gateway")
			.doesNotContain("warning: direct");
	}

	private static List<LoadDriver.Round> rounds(double... cpuMicros) {
		List<LoadDriver.Round> out = new ArrayList<>();
		for (int i = 0; i < cpuMicros.length; i++) {
			out.add(new LoadDriver.Round(i + 1, 100, 0.1, 1000, 1000, 2000, 3000, 0, cpuMicros[i]));
		}
		return out;
	}

	@Test
	void percentilesAreNearestRank() {
		long[] nanos = { 1_000, 2_000, 3_000, 4_000 };
		assertThat(LoadDriver.percentile(nanos, 0.5)).isEqualTo(2.0);
		assertThat(LoadDriver.percentile(nanos, 0.99)).isEqualTo(4.0);
		assertThat(LoadDriver.percentile(new long[0], 0.5)).isZero();
	}

}

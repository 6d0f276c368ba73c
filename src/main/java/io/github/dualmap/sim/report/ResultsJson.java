package io.github.dualmap.sim.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import io.github.dualmap.sim.BenchmarkReport;
import io.github.dualmap.sim.RunResult;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Writes {@code results.json} with exactly the fields of the output contract, in its
 * order.
 */
public final class ResultsJson {

	private static final JsonMapper JSON = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

	private ResultsJson() {
	}

	/** The contract's JSON tree for {@code report}. */
	public static ObjectNode toJson(BenchmarkReport report) {
		ObjectNode root = JSON.createObjectNode();
		root.put("trace", report.trace());
		root.put("instances", report.instances());
		root.put("routers", report.routers());
		root.put("slo_ttft_s", report.sloTtftSeconds());
		ArrayNode policies = root.putArray("policies");
		for (BenchmarkReport.PolicyReport p : report.policies()) {
			RunResult r = p.headline();
			ObjectNode o = policies.addObject();
			o.put("name", p.name());
			o.put("capacity_rps", round(p.search().capacity()));
			o.put("goodput_rps", round(p.search().atCapacity() == null ? 0 : r.goodput()));
			o.put("ttft_p50_s", round(r.ttftP50Seconds()));
			o.put("ttft_p90_s", round(r.ttftP90Seconds()));
			o.put("ttft_p99_s", round(r.ttftP99Seconds()));
			o.put("hit_rate", round(r.hitRate()));
			o.put("load_cv", round(r.loadCv()));
			o.put("migrations", r.migrations());
			o.put("decision_us_p99", round(r.decisionNanosP99() / 1000.0));
		}
		return root;
	}

	public static void write(BenchmarkReport report, Path file) throws IOException {
		Files.writeString(file, JSON.writeValueAsString(toJson(report)) + System.lineSeparator());
	}

	// Six significant decimals: enough for every metric, and stable text for diffs.
	private static double round(double v) {
		return Math.round(v * 1e6) / 1e6;
	}

}

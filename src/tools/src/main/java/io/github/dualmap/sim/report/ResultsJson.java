package io.github.dualmap.sim.report;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import io.github.dualmap.sim.BenchmarkReport;
import io.github.dualmap.sim.RequestLog;
import io.github.dualmap.sim.RunResult;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Writes {@code results.json}: the output contract's fields in its order, then the
 * yardstick's (request-only capacity, feasible, rejected and rescued shares, attainment
 * by prompt size, whether the headline run is transient), the measured requests sent to
 * each instance in the headline run, and every evaluated rate. With replicates, each row
 * also has the median, lowest and highest capacity of its replicates and every
 * replicate's seed and capacity after {@code capacity_rps}; its other fields are those of
 * its replicate with the lower median capacity.
 */
public final class ResultsJson {

	private static final JsonMapper JSON = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

	private static final JsonMapper COMPACT = JsonMapper.builder().build();

	private ResultsJson() {
	}

	/** The contract's JSON tree for {@code report}. */
	public static ObjectNode toJson(BenchmarkReport report) {
		ObjectNode root = run(report);
		root.put("metric", report.metric());
		ArrayNode policies = root.putArray("policies");
		for (BenchmarkReport.PolicyReport p : report.policies()) {
			RunResult r = p.headline();
			ObjectNode o = policies.addObject();
			o.put("name", p.name());
			o.put("capacity_rps", round(p.search().capacity()));
			if (!p.replicates().isEmpty()) {
				o.put("capacity_median", round(p.capacityMedian()));
				o.put("capacity_min", round(p.capacityMin()));
				o.put("capacity_max", round(p.capacityMax()));
				ArrayNode replicates = o.putArray("replicates");
				for (BenchmarkReport.Replicate x : p.replicates()) {
					replicates.addObject().put("seed", x.seed()).put("capacity", round(x.capacity()));
				}
			}
			o.put("goodput_rps", round(p.search().atCapacity() == null ? 0 : r.goodput()));
			o.put("ttft_p50_s", round(r.ttft().p50Seconds()));
			o.put("ttft_p90_s", round(r.ttft().p90Seconds()));
			o.put("ttft_p99_s", round(r.ttft().p99Seconds()));
			o.put("hit_rate", round(r.hitRate()));
			o.put("load_cv", round(r.loadCv()));
			o.put("migrations", r.migrations());
			o.put("decision_us_p99", round(r.decisionNanosP99() / 1000.0));
			o.put("capacity_requests_rps", round(p.search().requestsCapacity()));
			o.put("feasible_share", round(r.feasibleShare()));
			o.put("rejected_share", round(r.rejectedShare()));
			o.put("rescue_share", round(r.rescueShare()));
			ArrayNode sizes = o.putArray("attainment_by_size");
			for (RunResult.SizeQuartile q : r.judged().quartiles()) {
				sizes.addObject()
					.put("min_prompt_tokens", q.minPromptTokens())
					.put("max_prompt_tokens", q.maxPromptTokens())
					.put("requests", q.requests())
					.put("attainment", round(q.attainment()));
			}
			o.put("transient", r.judged().isTransient());
			ints(o.putArray("requests_per_instance"), r.requestsPerInstance());
			ArrayNode points = o.putArray("points");
			for (RunResult x : p.search().points()) {
				RunResult.Judged j = x.judged();
				ObjectNode point = points.addObject()
					.put("rate_rps", round(x.rate()))
					.put("measured", x.requests().measured())
					.put("attainment", round(x.attainment()))
					.put("feasible_attainment", round(j.requestShare()))
					.put("feasible_token_attainment", round(j.tokenShare()))
					.put("worst_size_attainment", round(j.worstQuartile()))
					.put("rejected_share", round(x.rejectedShare()))
					.put("rescue_share", round(x.rescueShare()))
					.put("stopped_early", x.requests().stoppedEarly())
					.put("transient", j.isTransient());
				if (Double.isFinite(j.engineSeconds())) {
					point.put("in_time_work_share",
							round(j.engineSeconds() == 0 ? 0 : j.inTimeWorkSeconds() / j.engineSeconds()));
				}
			}
		}
		return root;
	}

	public static void write(BenchmarkReport report, Path file) throws IOException {
		Files.writeString(file, JSON.writeValueAsString(toJson(report)) + System.lineSeparator());
	}

	/**
	 * {@code classes.json} of a run with SLO classes (outside the contract of
	 * {@code results.json}, which stays as it is): per policy, at the rate of its
	 * headline run, each class's objective, measured requests, attainment and TTFT tail.
	 */
	public static ObjectNode classesJson(BenchmarkReport report) {
		ObjectNode root = run(report);
		ArrayNode policies = root.putArray("policies");
		for (BenchmarkReport.PolicyReport p : report.policies()) {
			RunResult r = p.headline();
			ObjectNode o = policies.addObject();
			o.put("name", p.name());
			o.put("rate_rps", round(r.rate()));
			o.put("attainment", round(r.attainment()));
			ArrayNode classes = o.putArray("classes");
			for (RunResult.ClassResult c : r.classes()) {
				classes.addObject()
					.put("name", c.name())
					.put("slo_ttft_s", round(c.sloSeconds()))
					.put("measured", c.measured())
					.put("attainment", round(c.attainment()))
					.put("ttft_p90_s", round(c.ttftP90Seconds()))
					.put("ttft_p99_s", round(c.ttftP99Seconds()));
			}
		}
		return root;
	}

	/**
	 * {@code engine_timeline.json} (outside the contract of {@code results.json}): per
	 * policy, every engine's state at each scrape of the run behind the load chart, at
	 * the report's fixed rate; one array per series, indexed by sample.
	 */
	public static ObjectNode timelineJson(BenchmarkReport report) {
		ObjectNode root = run(report);
		root.put("rate_rps", round(report.fixedRate()));
		ArrayNode policies = root.putArray("policies");
		for (BenchmarkReport.PolicyReport p : report.policies()) {
			RunResult.Timeline t = p.atFixedRate().timeline();
			ObjectNode o = policies.addObject();
			o.put("name", p.name());
			ArrayNode seconds = o.putArray("time_s");
			ArrayNode instances = o.putArray("instances");
			if (t == null) {
				continue;
			}
			for (double x : t.seconds()) {
				seconds.add(round(x));
			}
			for (int k = 0; k < t.instances().length; k++) {
				if (t.instances()[k] == null) {
					// A slot no instance ever took.
					continue;
				}
				ObjectNode i = instances.addObject();
				i.put("id", t.instances()[k]);
				ints(i.putArray("running"), t.running()[k]);
				ints(i.putArray("waiting"), t.waiting()[k]);
				ArrayNode kv = i.putArray("kv_usage");
				for (double x : t.kvUsage()[k]) {
					kv.add(round(x));
				}
				ArrayNode preemptions = i.putArray("preemptions");
				for (long x : t.preemptions()[k]) {
					preemptions.add(x);
				}
				ints(i.putArray("in_flight"), t.inFlight()[k]);
				ints(i.putArray("queued"), t.queued()[k]);
			}
		}
		return root;
	}

	private static void ints(ArrayNode array, int[] values) {
		for (int v : values) {
			array.add(v);
		}
	}

	/** Compact: a series per array, thousands of samples each. */
	public static void writeTimeline(BenchmarkReport report, Path file) throws IOException {
		Files.writeString(file, COMPACT.writeValueAsString(timelineJson(report)) + System.lineSeparator());
	}

	public static void writeClasses(BenchmarkReport report, Path file) throws IOException {
		Files.writeString(file, JSON.writeValueAsString(classesJson(report)) + System.lineSeparator());
	}

	/**
	 * The file {@link #writeRequestLogs} writes for {@code policy}:
	 * {@code requests-<policy>.jsonl}.
	 */
	public static String requestLogFile(String policy) {
		return "requests-" + policy + ".jsonl";
	}

	/**
	 * {@code requests-<policy>.jsonl} in {@code dir} for every policy whose headline run
	 * kept its requests ({@code --request-log}): one JSON object per measured request, in
	 * arrival order (outside the contract of {@code results.json}).
	 */
	public static void writeRequestLogs(BenchmarkReport report, Path dir) throws IOException {
		for (BenchmarkReport.PolicyReport p : report.policies()) {
			RequestLog log = p.headline().requestLog();
			if (log != null) {
				writeRequestLog(p.name(), log, dir);
			}
		}
	}

	/**
	 * {@code requests-<policy>.jsonl} in {@code dir}: one JSON object per entry of
	 * {@code log}.
	 */
	public static void writeRequestLog(String policy, RequestLog log, Path dir) throws IOException {
		try (BufferedWriter w = Files.newBufferedWriter(dir.resolve(requestLogFile(policy)))) {
			for (RequestLog.Entry e : log.entries()) {
				w.write(COMPACT.writeValueAsString(requestJson(e)));
				w.newLine();
			}
		}
	}

	/** One line of {@code requests-<policy>.jsonl}. */
	public static ObjectNode requestJson(RequestLog.Entry e) {
		ObjectNode o = COMPACT.createObjectNode();
		o.put("index", e.index());
		o.put("router", e.router());
		o.put("arrival_s", round(e.arrivalSeconds()));
		o.put("prompt_tokens", e.promptTokens());
		o.put("feasible", e.feasible());
		o.put("slo_s", round(e.sloSeconds()));
		o.put("instance", e.instance());
		putRounded(o, "released_s", e.releasedSeconds());
		o.put("reason", e.reason());
		o.put("moves", e.moves());
		o.put("rescued", e.rescued());
		if (e.cachedTokens() >= 0) {
			o.put("cached_tokens", e.cachedTokens());
		}
		else {
			o.putNull("cached_tokens");
		}
		putRounded(o, "ttft_s", e.ttftSeconds());
		o.put("outcome", e.outcome().jsonName());
		o.put("rejection", e.rejection());
		o.put("rejected_at", e.rejectedAt());
		return o;
	}

	/**
	 * {@code v} rounded as {@link #round} does under {@code name}, or {@code null} where
	 * it is NaN (unknown, or an empty window), which JSON has no number for.
	 */
	static void putRounded(ObjectNode o, String name, double v) {
		if (Double.isNaN(v)) {
			o.putNull(name);
		}
		else {
			o.put(name, round(v));
		}
	}

	/** What was run: the members both files start with. */
	private static ObjectNode run(BenchmarkReport report) {
		ObjectNode root = JSON.createObjectNode();
		root.put("trace", report.trace());
		root.put("instances", report.instances());
		root.put("routers", report.routers());
		root.put("slo_ttft_s", report.sloTtftSeconds());
		return root;
	}

	// Six significant decimals: enough for every metric, and stable text for diffs.
	static double round(double v) {
		return Math.round(v * 1e6) / 1e6;
	}

}

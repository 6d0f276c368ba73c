package io.github.dualmap.gateway;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import io.github.dualmap.WebTestClients;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code config-samples/prometheus-rules.yml} and {@code grafana-dashboard.json} are well
 * formed, and every metric and label they query is one a running gateway (scraping, queue
 * mode, replica sync on) exports under a name Prometheus keeps.
 */
@GatewayIntegrationTest(properties = { "dualmap.scrape.interval=50ms", "dualmap.replicas.enabled=true",
		"dualmap.replicas.token=t0123456789abcdef", "management.endpoints.web.exposure.include=prometheus" })
class MonitoringSamplesTests {

	private static final Pattern METRIC = Pattern.compile("\\bdualmap_[a-z_]+");

	/**
	 * Labels Prometheus sets on every series of a target: a scraped label of the same
	 * name is renamed {@code exported_<name>} (the default {@code honor_labels: false}),
	 * so the series would carry the gateway's address or Service where the samples expect
	 * the pool's or the engine's. {@code job} and {@code instance} always, the others
	 * under the Prometheus Operator's ServiceMonitor and PodMonitor.
	 */
	private static final Set<String> TARGET_LABELS = Set.of("job", "instance", "namespace", "service", "pod",
			"container", "endpoint");

	/** Labels a query groups or matches by, and that templates print. */
	private static final List<Pattern> LABEL_USES = List.of(
			Pattern.compile("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\(([^()]*)\\)"),
			Pattern.compile("[{,]\\s*([a-z_]+)\\s*(?:=~|!~|!=|=)\\s*\""), Pattern.compile("\\$labels\\.([a-z_]+)"),
			Pattern.compile("\\{\\{\\s*([a-z_]+)\\s*}}"), Pattern.compile("label_values\\([^,]+,\\s*([a-z_]+)\\)"));

	@Discovered
	static final StubEngine ENGINE = new StubEngine("only");

	@Autowired
	WebTestClient client;

	@SuppressWarnings("unchecked")
	private static List<Map<String, Object>> rules() throws IOException {
		try (Reader in = Files.newBufferedReader(Path.of("config-samples", "prometheus-rules.yml"))) {
			Map<String, Object> root = new Yaml().load(in);
			List<Map<String, Object>> rules = new ArrayList<>();
			for (Map<String, Object> group : (List<Map<String, Object>>) root.get("groups")) {
				assertThat(group).containsKeys("name", "rules");
				rules.addAll((List<Map<String, Object>>) group.get("rules"));
			}
			return rules;
		}
	}

	/** {@code config-samples/grafana-dashboard.json}, parsed. */
	private static JsonNode dashboard() throws IOException {
		return JsonMapper.shared().readTree(Files.readString(Path.of("config-samples", "grafana-dashboard.json")));
	}

	/**
	 * The queries of every dashboard panel, each panel checked for what Grafana needs.
	 */
	private static List<String> dashboardQueries() throws IOException {
		JsonNode dashboard = dashboard();
		assertThat(dashboard.path("uid").stringValue()).isNotBlank();
		List<String> queries = new ArrayList<>();
		Set<Integer> ids = new HashSet<>();
		for (JsonNode panel : dashboard.path("panels")) {
			assertThat(ids.add(panel.path("id").intValue())).as("unique panel id").isTrue();
			assertThat(panel.path("title").stringValue()).isNotBlank();
			assertThat(panel.path("gridPos").path("w").intValue()).isPositive();
			assertThat(panel.path("targets")).as(panel.path("title").stringValue()).isNotEmpty();
			for (JsonNode target : panel.path("targets")) {
				queries.add(target.path("expr").stringValue());
			}
		}
		return queries;
	}

	/** Every text of the samples a label can appear in: queries, legends, annotations. */
	private static List<String> labelledTexts() throws IOException {
		List<String> texts = new ArrayList<>(dashboardQueries());
		JsonNode dashboard = dashboard();
		for (JsonNode panel : dashboard.path("panels")) {
			for (JsonNode target : panel.path("targets")) {
				texts.add(target.path("legendFormat").asString(""));
			}
		}
		for (JsonNode variable : dashboard.path("templating").path("list")) {
			texts.add(variable.path("query").asString(""));
		}
		for (Map<String, Object> rule : rules()) {
			texts.add(String.valueOf(rule.get("expr")));
			Object annotations = rule.get("annotations");
			if (annotations instanceof Map<?, ?> map) {
				map.values().forEach(v -> texts.add(String.valueOf(v)));
			}
		}
		return texts;
	}

	/**
	 * What the gateway exports at {@code /actuator/prometheus} after one streamed request
	 * (TTFT and SLO meters exist once a first token was seen).
	 */
	private String exported() {
		this.client.post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
			.exchange()
			.expectStatus()
			.isOk();
		return WebTestClients.okBody(this.client, "/actuator/prometheus");
	}

	@Test
	void theRulesAndTheDashboardAreWellFormedAndQueryMetricsTheGatewayExports() throws IOException {
		List<Map<String, Object>> rules = rules();
		Set<String> names = new HashSet<>();
		Set<String> queried = new TreeSet<>();
		List<String> queries = new ArrayList<>(dashboardQueries());
		for (Map<String, Object> rule : rules) {
			assertThat(rule.containsKey("record") ^ rule.containsKey("alert")).as("record or alert: %s", rule).isTrue();
			assertThat(rule.get("expr")).as("expr of %s", rule).isInstanceOf(String.class);
			assertThat(names.add(String.valueOf(rule.containsKey("record") ? rule.get("record") : rule.get("alert"))))
				.as("unique name: %s", rule)
				.isTrue();
			if (rule.containsKey("alert")) {
				assertThat(rule).containsKeys("labels", "annotations");
			}
			queries.add((String) rule.get("expr"));
		}
		for (String query : queries) {
			Matcher m = METRIC.matcher(query);
			while (m.find()) {
				queried.add(m.group().replaceAll("_(bucket|count|sum)$", ""));
			}
		}
		assertThat(queried).hasSizeGreaterThan(15);

		String exported = exported();
		assertThat(queried).allSatisfy(metric -> assertThat(exported).as(metric).containsPattern("(?m)^" + metric));

		// Every label they use is one of those the gateway's series carry, and none of
		// those is a target label Prometheus would rename.
		Set<String> carried = new TreeSet<>();
		Matcher series = Pattern.compile("(?m)^(?:dualmap|gen_ai)_[a-z_]+\\{([^}]*)}").matcher(exported);
		while (series.find()) {
			Matcher label = Pattern.compile("([a-z_]+)=\"").matcher(series.group(1));
			while (label.find()) {
				carried.add(label.group(1));
			}
		}
		assertThat(carried).contains("pool", "instance_id").doesNotContainAnyElementsOf(TARGET_LABELS);
		Set<String> used = new TreeSet<>();
		for (String text : labelledTexts()) {
			for (Pattern use : LABEL_USES) {
				Matcher m = use.matcher(text);
				while (m.find()) {
					for (String label : m.group(1).split(",")) {
						if (!label.isBlank()) {
							used.add(label.strip());
						}
					}
				}
			}
		}
		used.removeAll(Set.of("le", "value"));
		assertThat(used).contains("pool", "instance_id", "class", "status");
		assertThat(carried).containsAll(used);
	}

	/**
	 * {@code config-samples/prometheus-rules-test.yml}, promtool's unit tests of the
	 * rules (run with {@code promtool test rules}, which needs Prometheus, so not here),
	 * tests every alert and recording rule, with input series named and labelled as the
	 * gateway exports them, so that what promtool checks is what a gateway's series would
	 * do.
	 */
	@Test
	@SuppressWarnings("unchecked")
	void theRulesUnitTestsCoverEveryRuleWithSeriesAsTheGatewayExportsThem() throws IOException {
		Map<String, Object> root;
		try (Reader in = Files.newBufferedReader(Path.of("config-samples", "prometheus-rules-test.yml"))) {
			root = new Yaml().load(in);
		}
		assertThat(root.get("rule_files")).isEqualTo(List.of("prometheus-rules.yml"));
		Set<String> alerts = new TreeSet<>();
		Set<String> records = new TreeSet<>();
		for (Map<String, Object> rule : rules()) {
			if (rule.containsKey("alert")) {
				alerts.add((String) rule.get("alert"));
			}
			else {
				records.add((String) rule.get("record"));
			}
		}
		Set<String> tested = new TreeSet<>();
		Set<String> evaluated = new TreeSet<>();
		List<String> series = new ArrayList<>();
		for (Map<String, Object> test : (List<Map<String, Object>>) root.get("tests")) {
			for (Map<String, Object> input : (List<Map<String, Object>>) test.get("input_series")) {
				series.add((String) input.get("series"));
			}
			for (Map<String, Object> check : (List<Map<String, Object>>) test.getOrDefault("alert_rule_test",
					List.of())) {
				tested.add((String) check.get("alertname"));
			}
			for (Map<String, Object> check : (List<Map<String, Object>>) test.getOrDefault("promql_expr_test",
					List.of())) {
				Matcher record = Pattern.compile("dualmap:[a-z_:0-9]+").matcher((String) check.get("expr"));
				while (record.find()) {
					evaluated.add(record.group());
				}
			}
		}
		assertThat(tested).isEqualTo(alerts);
		assertThat(evaluated).isEqualTo(records);

		// Per exported metric, each label's values.
		Map<String, Map<String, Set<String>>> exportedLabels = new HashMap<>();
		Matcher line = Pattern.compile("(?m)^(dualmap_[a-z_]+)(?:\\{([^}]*)})? ").matcher(exported());
		while (line.find()) {
			Map<String, Set<String>> labels = exportedLabels.computeIfAbsent(line.group(1), k -> new HashMap<>());
			labels(line.group(2) == null ? "" : line.group(2))
				.forEach((name, value) -> labels.computeIfAbsent(name, k -> new TreeSet<>()).add(value));
		}
		Pattern input = Pattern.compile("(dualmap_[a-z_]+)\\{([^}]*)}");
		for (String s : series) {
			Matcher m = input.matcher(s);
			assertThat(m.matches()).as(s).isTrue();
			Map<String, String> labels = labels(m.group(2));
			labels.keySet().removeAll(TARGET_LABELS);
			Map<String, Set<String>> exportedOfMetric = exportedLabels.get(m.group(1));
			assertThat(exportedOfMetric).as(s).isNotNull();
			assertThat(labels.keySet()).as(s).isEqualTo(exportedOfMetric.keySet());
			// Labels with a fixed set of values take one the gateway gives them (names of
			// pools, instances and classes are the test's own).
			for (String fixed : List.of("outcome", "cause", "status")) {
				if (labels.containsKey(fixed)) {
					assertThat(exportedOfMetric.get(fixed)).as(s).contains(labels.get(fixed));
				}
			}
		}
	}

	/** The labels of a series' {@code name="value",...} list. */
	private static Map<String, String> labels(String labels) {
		Map<String, String> parsed = new HashMap<>();
		Matcher label = Pattern.compile("([a-z_]+)=\"([^\"]*)\"").matcher(labels);
		while (label.find()) {
			parsed.put(label.group(1), label.group(2));
		}
		return parsed;
	}

	/**
	 * A rejected request is never released to an instance, so rejections per release is
	 * no share of requests (it reaches 195 % in overload and +Inf for a pool that rejects
	 * everything): every ratio of rejections, in the rules, the dashboard and
	 * operations.md, has the rejections in its denominator too.
	 */
	@Test
	void rejectionRatiosAreSharesOfRequests() throws IOException {
		List<String> queries = new ArrayList<>(dashboardQueries());
		Map<String, Object> shedding = null;
		String recorded = null;
		for (Map<String, Object> rule : rules()) {
			queries.add((String) rule.get("expr"));
			if ("DualMapShedding".equals(rule.get("alert"))) {
				shedding = rule;
			}
			if ("dualmap:rejections:ratio_rate5m".equals(rule.get("record"))) {
				recorded = (String) rule.get("expr");
			}
		}
		Matcher promql = Pattern.compile("(?s)```promql\\n(.*?)```")
			.matcher(Files.readString(Path.of("docs", "operations.md")));
		while (promql.find()) {
			for (String line : promql.group(1).split("\\n")) {
				if (!line.isBlank() && !line.startsWith("#")) {
					queries.add(line);
				}
			}
		}
		int ratios = 0;
		for (String query : queries) {
			int slash = topLevelDivision(query);
			if (slash >= 0 && query.substring(0, slash).contains("dualmap_rejections_total")) {
				ratios++;
				assertThat(query.substring(slash + 1)).as(query)
					.contains("dualmap_rejections_total")
					.contains("dualmap_queue_releases_total");
			}
		}
		assertThat(ratios).as("rejection ratios checked").isGreaterThanOrEqualTo(2);
		assertThat(recorded).isEqualTo("sum by (pool) (rate(dualmap_rejections_total[5m])) / "
				+ "(sum by (pool) (rate(dualmap_rejections_total[5m])) "
				+ "+ sum by (pool) (rate(dualmap_queue_releases_total[5m])))");
		assertThat(shedding).isNotNull();
		assertThat((String) shedding.get("expr")).startsWith("dualmap:rejections:ratio_rate5m > 0.05 and ");
		assertThat(String.valueOf(((Map<?, ?>) shedding.get("annotations")).get("summary")))
			.contains("{{ $value | humanizePercentage }} of requests");
	}

	/** Where a query divides outside any parentheses or brackets, else -1. */
	private static int topLevelDivision(String query) {
		int depth = 0;
		for (int i = 0; i < query.length(); i++) {
			char c = query.charAt(i);
			if (c == '(' || c == '[' || c == '{') {
				depth++;
			}
			else if (c == ')' || c == ']' || c == '}') {
				depth--;
			}
			else if (c == '/' && depth == 0) {
				return i;
			}
		}
		return -1;
	}

}

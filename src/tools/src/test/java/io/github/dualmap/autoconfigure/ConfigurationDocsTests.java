package io.github.dualmap.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.github.dualmap.core.RoutingPolicies;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * docs/configuration.md, which users read for each property's default and meaning,
 * against the metadata the configuration processor generates (and IDEs read): every
 * {@code dualmap.*} property has a row {@code | `name` | default | meaning |}, a literal
 * default in a row is the metadata's, and every documented property exists. Failures name
 * the row to add or correct.
 * <p>
 * The doc is found by walking up from the working directory, so the test runs from the
 * repository root or from a module directory alike.
 */
class ConfigurationDocsTests {

	private static final String METADATA = "META-INF/spring-configuration-metadata.json";

	/** A table row whose first cell is one property name in backticks. */
	private static final Pattern ROW = Pattern.compile("(?m)^\\| `([a-z][a-z0-9.<>-]*)` \\| ([^|]*) \\|");

	/** A default cell that is exactly one literal in backticks. */
	private static final Pattern LITERAL = Pattern.compile("`([^`]+)`");

	@Test
	void everyPropertyHasARow() throws IOException {
		Map<String, JsonNode> metadata = properties();
		Map<String, String> rows = rows();
		List<String> missing = new ArrayList<>();
		for (Map.Entry<String, JsonNode> property : metadata.entrySet()) {
			String name = property.getKey();
			boolean documented = isMap(property.getValue())
					? rows.keySet().stream().anyMatch(row -> row.startsWith(name + ".")) : rows.containsKey(name);
			if (!documented) {
				missing.add(isMap(property.getValue())
						? "| `" + name + ".<key>.<property>` | ... | ... |  (a map: one row per key property)"
						: "| `" + name + "` | " + suggestedDefault(property.getValue())
								+ " | <one or two sentences> |");
			}
		}
		assertThat(metadata).containsKeys("dualmap.retry.statuses", "dualmap.dispatch.max-wait",
				"dualmap.demo.instances", "management.health.dualmap-replicas.enabled");
		assertThat(metadata).doesNotContainKey("dualmap.demo");
		if (!missing.isEmpty()) {
			fail(configurationDoc() + " has no row for " + missing.size()
					+ " propert(ies) of the metadata; add each to the table of its group:\n"
					+ String.join("\n", missing));
		}
	}

	@Test
	void everyRowIsInATable() throws IOException {
		// A row after a paragraph, with no header and delimiter row above it, renders as
		// text: the row is there for the other tests, and not in a table for a reader.
		List<String> lines = Files.readAllLines(configurationDoc());
		List<String> stray = new ArrayList<>();
		for (int i = 0; i < lines.size(); i++) {
			if (ROW.matcher(lines.get(i)).find() && (i == 0 || !lines.get(i - 1).startsWith("|"))) {
				stray.add((i + 1) + ": " + lines.get(i));
			}
		}
		assertThat(stray).as(configurationDoc() + ": rows outside a table (move them under a header)").isEmpty();
	}

	@Test
	void documentedDefaultsAreTheMetadataDefaults() throws IOException {
		Map<String, JsonNode> metadata = properties();
		List<String> wrong = new ArrayList<>();
		List<String> checked = new ArrayList<>();
		for (Map.Entry<String, String> row : rows().entrySet()) {
			JsonNode property = metadata.get(row.getKey());
			if (property == null) {
				continue; // everyDocumentedPropertyExists reports it
			}
			String cell = row.getValue();
			Matcher literal = LITERAL.matcher(cell);
			boolean isLiteral = literal.matches() && !metadata.containsKey(literal.group(1));
			JsonNode defaultValue = property.path("defaultValue");
			String type = property.path("type").stringValue();
			if (defaultValue.isMissingNode()) {
				if (isLiteral) {
					wrong.add("| `" + row.getKey() + "` | " + cell + " |: the metadata has no default; give the field"
							+ " an initial value the processor can read, or add the default to"
							+ " additional-spring-configuration-metadata.json, or describe it in words");
				}
				continue;
			}
			checked.add(row.getKey());
			if (!isLiteral) {
				wrong.add("| `" + row.getKey() + "` | " + cell + " |: expected the metadata's default, | `"
						+ row.getKey() + "` | `" + text(defaultValue) + "` |");
			}
			else if (!canonical(type, literal.group(1)).equals(canonical(type, text(defaultValue)))) {
				wrong.add("| `" + row.getKey() + "` | " + cell + " |: the metadata's default is `" + text(defaultValue)
						+ "`");
			}
		}
		assertThat(checked).contains("dualmap.body-read-timeout", "dualmap.server.header-read-timeout",
				"dualmap.retry.statuses", "dualmap.ttft.prefill-per-token", "management.endpoint.dualmap.access");
		if (!wrong.isEmpty()) {
			fail(configurationDoc() + ": " + wrong.size() + " default(s) differ from the metadata:\n"
					+ String.join("\n", wrong));
		}
	}

	@Test
	void everyDocumentedPropertyExists() throws IOException {
		Map<String, JsonNode> metadata = properties();
		List<String> unknown = new ArrayList<>();
		for (String name : rows().keySet()) {
			if (!name.contains("dualmap") || metadata.containsKey(name)) {
				continue; // Spring's own properties are Spring's to document
			}
			int key = name.indexOf(".<");
			boolean mapEntry = key > 0 && metadata.containsKey(name.substring(0, key))
					&& isMap(metadata.get(name.substring(0, key)));
			if (!mapEntry) {
				unknown.add("| `" + name + "` |");
			}
		}
		if (!unknown.isEmpty()) {
			fail(configurationDoc() + " documents propert(ies) the metadata does not have (renamed or removed?):\n"
					+ String.join("\n", unknown));
		}
	}

	@Test
	void theConstantDefaultsInTheAdditionalMetadataAreTheCodes() throws IOException {
		Map<String, JsonNode> metadata = properties();
		// Initialised from constants, which the configuration processor cannot read:
		// they are in additional-spring-configuration-metadata.json and must be what the
		// code starts from.
		DualMapProperties defaults = new DualMapProperties();
		assertThat(DurationStyle.detectAndParse(text(defaultOf(metadata, "dualmap.body-read-timeout"))))
			.isEqualTo(defaults.getBodyReadTimeout());
		assertThat(DurationStyle.detectAndParse(text(defaultOf(metadata, "dualmap.server.header-read-timeout"))))
			.isEqualTo(defaults.getServer().getHeaderReadTimeout());
		assertThat(defaultOf(metadata, "dualmap.dispatch.max-prefill-requests").longValue())
			.isEqualTo(defaults.getDispatch().getMaxPrefillRequests());
		assertThat(defaultOf(metadata, "dualmap.dispatch.max-prefill-tokens").longValue())
			.isEqualTo(defaults.getDispatch().getMaxPrefillTokens());
		assertThat(defaultOf(metadata, "dualmap.prompt.max-nesting-depth").longValue())
			.isEqualTo(defaults.getPrompt().getMaxNestingDepth());
		assertThat(defaultOf(metadata, "dualmap.prompt.max-json-tokens").longValue())
			.isEqualTo(defaults.getPrompt().getMaxJsonTokens());
		assertThat(text(defaultOf(metadata, "dualmap.retry.statuses"))).isEqualTo(
				defaults.getRetry().getStatuses().stream().map(String::valueOf).collect(Collectors.joining(", ")));
	}

	@Test
	void theIdeOffersEveryRoutingPolicyByName() throws IOException {
		List<String> offered = new ArrayList<>();
		for (JsonNode metadata : metadataFiles()) {
			for (JsonNode hint : metadata.path("hints")) {
				if ("dualmap.policy".equals(hint.path("name").stringValue())) {
					hint.path("values").forEach(v -> offered.add(v.path("value").stringValue()));
				}
			}
		}
		assertThat(offered).containsExactlyElementsOf(RoutingPolicies.names());
	}

	/** This project's properties: {@code dualmap.*} and the actuator's for DualMap. */
	private static Map<String, JsonNode> properties() throws IOException {
		Map<String, JsonNode> properties = new TreeMap<>();
		for (JsonNode metadata : metadataFiles()) {
			for (JsonNode property : metadata.path("properties")) {
				String name = property.path("name").stringValue();
				if (name != null && (name.startsWith(DualMapProperties.PREFIX + ".")
						|| name.startsWith("management.") && name.contains(DualMapProperties.PREFIX))) {
					properties.put(name, property);
				}
			}
		}
		assertThat(properties).as("dualmap.* properties in " + METADATA + " on the test classpath").isNotEmpty();
		return properties;
	}

	/** Every metadata file on the classpath (Spring Boot's own jars carry theirs too). */
	private static List<JsonNode> metadataFiles() throws IOException {
		List<JsonNode> files = new ArrayList<>();
		for (URL url : Collections.list(ConfigurationDocsTests.class.getClassLoader().getResources(METADATA))) {
			try (InputStream in = url.openStream()) {
				files.add(JsonMapper.shared().readTree(in));
			}
		}
		return files;
	}

	/** Property name to its default cell, for every property row of the doc. */
	private static Map<String, String> rows() throws IOException {
		Map<String, String> rows = new LinkedHashMap<>();
		List<String> duplicates = new ArrayList<>();
		Matcher row = ROW.matcher(Files.readString(configurationDoc()));
		while (row.find()) {
			if (rows.put(row.group(1), row.group(2).strip()) != null) {
				duplicates.add(row.group(1));
			}
		}
		assertThat(duplicates).as("properties with more than one row in " + configurationDoc()).isEmpty();
		return rows;
	}

	/** docs/configuration.md, from the working directory or a directory above it. */
	static Path configurationDoc() {
		Path start = Path.of("").toAbsolutePath();
		for (Path dir = start; dir != null; dir = dir.getParent()) {
			Path doc = dir.resolve("docs").resolve("configuration.md");
			if (Files.isRegularFile(doc)) {
				return doc;
			}
		}
		return fail("docs/configuration.md is neither in " + start + " nor in a directory above it");
	}

	private static boolean isMap(JsonNode property) {
		String type = property.path("type").stringValue();
		return type != null && type.startsWith("java.util.Map<");
	}

	private static String suggestedDefault(JsonNode property) {
		JsonNode value = property.path("defaultValue");
		return value.isMissingNode() ? "<in words, or ->" : "`" + text(value) + "`";
	}

	private static JsonNode defaultOf(Map<String, JsonNode> metadata, String name) {
		assertThat(metadata).containsKey(name);
		JsonNode value = metadata.get(name).path("defaultValue");
		assertThat(value.isMissingNode()).as("default of " + name + " in the metadata").isFalse();
		return value;
	}

	private static String text(JsonNode value) {
		if (value.isArray()) {
			List<String> elements = new ArrayList<>();
			value.forEach(e -> elements.add(text(e)));
			return String.join(", ", elements);
		}
		return value.isString() ? value.stringValue() : value.toString();
	}

	/**
	 * A value as its type compares it: 25us is 25000ns, 1.0 is 1, read-only is read_only.
	 */
	private static Object canonical(String type, String value) {
		try {
			return switch (type) {
				case "java.time.Duration" -> DurationStyle.detectAndParse(value);
				case "org.springframework.util.unit.DataSize" -> DataSize.parse(value);
				case "java.lang.Integer", "java.lang.Long", "java.lang.Float", "java.lang.Double" ->
					new BigDecimal(value).stripTrailingZeros();
				default -> value.toLowerCase(Locale.ROOT).replace('_', '-');
			};
		}
		catch (RuntimeException ex) {
			return "unreadable as " + type + ": " + value;
		}
	}

}

package io.github.dualmap.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.math.BigDecimal;
import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.dualmap.actuate.DualMapMeters;
import io.github.dualmap.core.RoutingPolicies;
import io.github.dualmap.tenant.TenantDirectory;
import io.github.dualmap.tenant.TenantProperties;
import io.github.dualmap.tenant.TenantSettings;
import jakarta.validation.constraints.AssertTrue;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The defaults the IDE metadata shows are the defaults the properties have. A default is
 * written once in Java (a literal in the properties class, or the core's
 * {@code DEFAULT_*} constant that the core builders and the properties both start from);
 * the configuration processor reads only literals, so a default taken from a constant is
 * written a second time in {@code additional-spring-configuration-metadata.json}, and
 * this test fails when the two drift, or when a default is missing from the metadata.
 */
class PropertiesMetadataDefaultsTests {

	private static final String METADATA = "META-INF/spring-configuration-metadata.json";

	/**
	 * Defaults an unset property takes in code rather than in its field: what that code
	 * gives, by property name.
	 */
	private static final Map<String, Object> RESOLVED_WHEN_UNSET = resolvedWhenUnset();

	/**
	 * Properties with a default the metadata cannot show, which their description gives
	 * in words instead.
	 */
	private static final Set<String> DESCRIBED_IN_WORDS = Set.of("dualmap.metrics.latency-buckets");

	/** "dualmap.x.y (default 20s)" in a validation message. */
	private static final Pattern DEFAULT_IN_MESSAGE = Pattern.compile("(dualmap\\.[a-z0-9.-]+) \\(default ([^)]+)\\)");

	@Test
	void everyMetadataDefaultIsTheDefaultOfItsProperty() throws IOException {
		Map<String, JsonNode> metadata = properties();
		List<String> wrong = new ArrayList<>();
		List<String> checked = new ArrayList<>();
		for (Map.Entry<String, JsonNode> entry : metadata.entrySet()) {
			String name = entry.getKey();
			JsonNode property = entry.getValue();
			String type = property.path("type").asString();
			if (type.startsWith("java.util.Map<")) {
				continue;
			}
			Object actual = RESOLVED_WHEN_UNSET.containsKey(name) ? RESOLVED_WHEN_UNSET.get(name)
					: runtimeDefault(name);
			JsonNode documented = property.path("defaultValue");
			if (documented.isMissingNode() || documented.isNull()) {
				if (actual != null && !isEmpty(actual) && !DESCRIBED_IN_WORDS.contains(name)) {
					wrong.add(name + ": the metadata has no default but the property starts at " + actual);
				}
				continue;
			}
			checked.add(name);
			if (!same(type, documented, actual)) {
				wrong.add(name + ": the metadata's default is " + documented + " but the property starts at " + actual);
			}
		}
		assertThat(checked).contains("dualmap.dispatch.max-wait-share", "dualmap.hot-prefix.min-samples",
				"dualmap.ttft.attention-per-million-pairs", "dualmap.slow-start", "dualmap.dispatch.expiry",
				"dualmap.retry.statuses", "dualmap.max-body-size", "dualmap.tenants.default.weight");
		if (!wrong.isEmpty()) {
			fail(wrong.size() + " default(s) of " + METADATA + " differ from the properties'"
					+ " (a default from a constant is in additional-spring-configuration-metadata.json):\n"
					+ String.join("\n", wrong));
		}
	}

	@Test
	void aDefaultNamedInAValidationMessageIsTheMetadataDefault() throws Exception {
		Map<String, JsonNode> metadata = properties();
		Set<Class<?>> types = new LinkedHashSet<>();
		types.add(DualMapProperties.class);
		for (JsonNode property : metadata.values()) {
			types.add(Class.forName(property.path("sourceType").asString()));
		}
		List<String> messages = new ArrayList<>();
		for (Class<?> type : types) {
			for (Method method : type.getDeclaredMethods()) {
				AssertTrue check = method.getAnnotation(AssertTrue.class);
				if (check != null && DEFAULT_IN_MESSAGE.matcher(check.message()).find()) {
					messages.add(check.message());
				}
			}
		}
		assertThat(messages).hasSizeGreaterThanOrEqualTo(2);
		for (String message : messages) {
			Matcher m = DEFAULT_IN_MESSAGE.matcher(message);
			while (m.find()) {
				JsonNode property = metadata.get(m.group(1));
				assertThat(property).as(message).isNotNull();
				assertThat(text(property.path("defaultValue"))).as(message).isEqualTo(m.group(2));
			}
		}
	}

	@Test
	void aDefaultNamedInADescriptionIsTheMetadataDefault() throws IOException {
		Pattern named = Pattern.compile("\\(default ([^:)][^)]*)\\)");
		List<String> checked = new ArrayList<>();
		for (Map.Entry<String, JsonNode> property : properties().entrySet()) {
			Matcher m = named.matcher(property.getValue().path("description").asString());
			while (m.find()) {
				checked.add(property.getKey());
				assertThat(text(property.getValue().path("defaultValue"))).as(property.getKey()).isEqualTo(m.group(1));
			}
		}
		assertThat(checked).contains("dualmap.tenants.default.weight", "dualmap.tenants.default.priority");
	}

	/**
	 * The meters' own default buckets (the meters are optional, so the properties cannot
	 * start from them without loading Micrometer) and the metadata's description.
	 */
	@Test
	void thePolicyHintsNameEveryRegisteredPolicy() throws IOException {
		List<String> hinted = new ArrayList<>();
		for (JsonNode hint : metadata().path("hints")) {
			if (hint.path("name").asString().equals("dualmap.policy")) {
				hint.path("values").forEach(v -> hinted.add(v.path("value").asString()));
			}
		}
		assertThat(hinted).containsExactlyInAnyOrderElementsOf(RoutingPolicies.names());
	}

	@Test
	void theLatencyBucketsAreTheMetersDefault() {
		assertThat(new DualMapProperties().getMetrics().getLatencyBuckets())
			.isEqualTo(DualMapMeters.DEFAULT_LATENCY_BUCKETS);
	}

	private static Map<String, Object> resolvedWhenUnset() {
		TenantSettings tenant = new TenantDirectory(Map.of(), new TenantProperties().getDefault(), 64).defaults();
		Map<String, Object> resolved = new LinkedHashMap<>();
		resolved.put("dualmap.tenants.default.weight", tenant.weight());
		resolved.put("dualmap.tenants.default.priority", tenant.priority());
		return resolved;
	}

	/** The value a property has when nothing sets it. */
	private static Object runtimeDefault(String name) {
		Object root;
		String path;
		if (name.startsWith(TenantProperties.PREFIX + ".")) {
			root = new TenantProperties();
			path = name.substring(TenantProperties.PREFIX.length() + 1);
		}
		else {
			root = new DualMapProperties();
			path = name.substring(DualMapProperties.PREFIX.length() + 1);
		}
		List<String> segments = new ArrayList<>();
		for (String segment : path.split("\\.")) {
			segments.add(camelCase(segment));
		}
		return new BeanWrapperImpl(root).getPropertyValue(String.join(".", segments));
	}

	private static String camelCase(String dashed) {
		StringBuilder out = new StringBuilder();
		boolean upper = false;
		for (char c : dashed.toCharArray()) {
			if (c == '-') {
				upper = true;
			}
			else {
				out.append(upper ? Character.toUpperCase(c) : c);
				upper = false;
			}
		}
		return out.toString();
	}

	private static boolean isEmpty(Object value) {
		return value instanceof Collection<?> c && c.isEmpty() || value instanceof Map<?, ?> m && m.isEmpty();
	}

	private static boolean same(String type, JsonNode documented, Object actual) {
		if (actual == null) {
			return false;
		}
		if (documented.isArray()) {
			if (!(actual instanceof List<?> list) || list.size() != documented.size()) {
				return false;
			}
			for (int i = 0; i < list.size(); i++) {
				if (!text(documented.get(i)).equals(String.valueOf(list.get(i)))) {
					return false;
				}
			}
			return true;
		}
		String text = text(documented);
		if (actual instanceof Duration duration) {
			return DurationStyle.detectAndParse(text).equals(duration);
		}
		if (actual instanceof DataSize size) {
			return DataSize.parse(text).equals(size);
		}
		if (actual instanceof Enum<?> constant) {
			return constant.name().toLowerCase(Locale.ROOT).replace('_', '-').equals(text);
		}
		if (actual instanceof Number number) {
			return documented.isNumber() && new BigDecimal(text).compareTo(new BigDecimal(number.toString())) == 0;
		}
		if (actual instanceof Boolean || actual instanceof String) {
			return text.equals(actual.toString());
		}
		throw new IllegalStateException("no comparison for " + type + " (" + actual.getClass() + ")");
	}

	private static String text(JsonNode node) {
		return node.isString() ? node.asString() : node.toString();
	}

	/** The gateway's properties in the generated metadata, by name. */
	private static Map<String, JsonNode> properties() throws IOException {
		Map<String, JsonNode> out = new LinkedHashMap<>();
		for (JsonNode property : metadata().path("properties")) {
			String name = property.path("name").asString();
			if (name.startsWith(DualMapProperties.PREFIX + ".")) {
				out.put(name, property);
			}
		}
		assertThat(out).containsKeys("dualmap.policy", "dualmap.dispatch.max-wait", "dualmap.tenants.enabled");
		return out;
	}

	/** The gateway's generated metadata: not a dependency's, nor one of test classes. */
	private static JsonNode metadata() throws IOException {
		String gateway = DualMapProperties.class.getProtectionDomain().getCodeSource().getLocation().getPath();
		Enumeration<URL> resources = PropertiesMetadataDefaultsTests.class.getClassLoader().getResources(METADATA);
		while (resources.hasMoreElements()) {
			URL resource = resources.nextElement();
			if (resource.getPath().contains(gateway)) {
				try (InputStream in = resource.openStream()) {
					return JsonMapper.builder().build().readTree(in);
				}
			}
		}
		return fail("no " + METADATA + " in " + gateway);
	}

}

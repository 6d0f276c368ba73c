package io.github.dualmap.emulator.demo;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@code dualmap.demo.*} property the configuration processor finds in this module
 * is in docs/configuration.md with the default the IDE offers (the library's own
 * properties are checked by the library's ConfigurationDocsTests).
 */
class DemoPropertiesDocsTests {

	@Test
	void everyDemoPropertyIsDocumentedWithItsDefault() throws IOException {
		List<JsonNode> properties = new ArrayList<>();
		for (URL url : Collections
			.list(getClass().getClassLoader().getResources("META-INF/spring-configuration-metadata.json"))) {
			try (InputStream in = url.openStream()) {
				for (JsonNode property : JsonMapper.shared().readTree(in).path("properties")) {
					if (property.path("name").stringValue().startsWith("dualmap.demo.")) {
						properties.add(property);
					}
				}
			}
		}
		assertThat(properties).extracting(p -> p.path("name").stringValue())
			.contains("dualmap.demo.instances", "dualmap.demo.base-port", "dualmap.demo.time-scale");
		String docs = Files.readString(Path.of("docs", "configuration.md"));
		List<String> wrong = new ArrayList<>();
		for (JsonNode property : properties) {
			String name = property.path("name").stringValue();
			// A table row: | `property` | default | meaning |
			Matcher row = Pattern.compile("(?m)^\\| `" + Pattern.quote(name) + "` \\| `([^`|]*)` \\|").matcher(docs);
			if (!row.find()) {
				wrong.add(name + ": no row with a default in docs/configuration.md");
				continue;
			}
			JsonNode value = property.path("defaultValue");
			String metadata = value.isString() ? value.stringValue() : value.toString();
			if (!canonical(row.group(1)).equals(canonical(metadata))) {
				wrong.add(name + ": documented default " + row.group(1) + ", metadata default " + metadata);
			}
		}
		assertThat(wrong).isEmpty();
	}

	/** 1.0 is 1; anything else as written. */
	private static Object canonical(String value) {
		try {
			return new BigDecimal(value).stripTrailingZeros();
		}
		catch (NumberFormatException ex) {
			return value;
		}
	}

}

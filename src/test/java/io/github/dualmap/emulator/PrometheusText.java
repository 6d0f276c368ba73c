package io.github.dualmap.emulator;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Test-local reader of Prometheus text format: sample name plus sorted labels to value,
 * checking that every sample has a TYPE line. Stands in for the stats package's parser.
 */
final class PrometheusText {

	private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)\\})? (\\S+)");

	private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

	final Map<String, Double> samples = new HashMap<>();

	final Map<String, String> types = new HashMap<>();

	PrometheusText(String text) {
		for (String line : text.split("\n")) {
			if (line.startsWith("# TYPE ")) {
				String[] parts = line.split(" ");
				types.put(parts[2], parts[3]);
			}
			else if (!line.isBlank() && !line.startsWith("#")) {
				Matcher m = SAMPLE.matcher(line);
				if (!m.matches()) {
					throw new IllegalArgumentException("not a sample line: " + line);
				}
				String name = m.group(1);
				if (types.keySet().stream().noneMatch(name::startsWith)) {
					throw new IllegalArgumentException("sample without TYPE: " + line);
				}
				Map<String, String> labels = new java.util.TreeMap<>();
				if (m.group(3) != null) {
					Matcher l = LABEL.matcher(m.group(3));
					while (l.find()) {
						labels.put(l.group(1), l.group(2));
					}
				}
				samples.put(name + labels, Double.parseDouble(m.group(4)));
			}
		}
	}

	/** Value of the one sample of {@code name} whose labels include {@code labels}. */
	double value(String name, String... labels) {
		return samples.entrySet()
			.stream()
			.filter(e -> e.getKey().startsWith(name + "{")
					&& java.util.Arrays.stream(labels).allMatch(e.getKey()::contains))
			.mapToDouble(Map.Entry::getValue)
			.reduce((a, b) -> {
				throw new IllegalStateException("more than one sample of " + name);
			})
			.orElseThrow(() -> new IllegalStateException("no sample " + name + " in " + samples.keySet()));
	}

}

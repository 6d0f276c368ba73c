package io.github.dualmap.emulator;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Test-local strict reader of Prometheus text format 0.0.4, as a strict client (such as
 * prometheus_client's parser) reads it: sample name plus sorted labels to value, checking
 * that every family has a HELP then a TYPE line of its name and that every sample belongs
 * to the family above it, a counter's family named with its {@code _total} as
 * prometheus_client writes it. Stands in for the stats package's parser.
 */
final class PrometheusText {

	private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)\\})? (\\S+)");

	private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

	final Map<String, Double> samples = new HashMap<>();

	final Map<String, String> types = new HashMap<>();

	PrometheusText(String text) {
		String help = null;
		String family = null;
		for (String line : text.split("\n")) {
			if (line.startsWith("# HELP ")) {
				help = line.split(" ")[2];
			}
			else if (line.startsWith("# TYPE ")) {
				String[] parts = line.split(" ");
				family = parts[2];
				if (!family.equals(help)) {
					throw new IllegalArgumentException("TYPE of " + family + " after HELP of " + help);
				}
				if (parts[3].equals("counter") && !family.endsWith("_total")) {
					// Text format 0.0.4 (prometheus_client's generate_latest, which vLLM
					// serves) names a counter's family with its _total suffix.
					throw new IllegalArgumentException("counter family without _total: " + line);
				}
				types.put(family, parts[3]);
			}
			else if (!line.isBlank() && !line.startsWith("#")) {
				Matcher m = SAMPLE.matcher(line);
				if (!m.matches()) {
					throw new IllegalArgumentException("not a sample line: " + line);
				}
				String name = m.group(1);
				if (family == null || !sampleNames(family, types.get(family)).contains(name)) {
					throw new IllegalArgumentException("sample not of the family " + family + ": " + line);
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

	/** The names a sample of {@code family} of {@code type} may have. */
	private static java.util.Set<String> sampleNames(String family, String type) {
		return type.equals("histogram") ? java.util.Set.of(family + "_bucket", family + "_count", family + "_sum")
				: java.util.Set.of(family);
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

package io.github.dualmap.stats;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * A reader of the Prometheus text exposition format (0.0.4, and the OpenMetrics text that
 * engines also serve): comments, escaped label values, NaN and infinities, optional
 * timestamps. Only lines of wanted metric names are parsed fully; other lines are skipped
 * by name, so a large body of histogram buckets costs little and a quirk in a metric we
 * do not read cannot fail the scrape. Prometheus' Java client ships writers only, hence
 * this small reader.
 */
final class PrometheusText {

	/** One sample of a wanted metric. */
	record Sample(String name, Map<String, String> labels, double value) {
	}

	/** Receives the samples of wanted metrics in body order. */
	@FunctionalInterface
	interface SampleSink {

		void accept(Sample sample);

	}

	private static final int MAX_LINE_IN_MESSAGE = 200;

	private final CharSequence text;

	private int pos;

	private int lineStart;

	private int lineNumber;

	private PrometheusText(CharSequence text) {
		this.text = text;
	}

	/**
	 * Reads every sample whose (normalised) name {@code wanted} accepts.
	 * @param normalise maps a raw metric name to the name the caller knows it by
	 * @throws MetricsParseException on a malformed line of a wanted metric
	 */
	static void read(CharSequence text, UnaryOperator<String> normalise, Predicate<String> wanted, SampleSink sink) {
		new PrometheusText(text).readAll(normalise, wanted, sink);
	}

	private void readAll(UnaryOperator<String> normalise, Predicate<String> wanted, SampleSink sink) {
		int len = text.length();
		while (pos < len) {
			lineStart = pos;
			lineNumber++;
			int end = pos;
			while (end < len && text.charAt(end) != '\n') {
				end++;
			}
			int next = end + 1;
			if (end > pos && text.charAt(end - 1) == '\r') {
				end--;
			}
			readLine(end, normalise, wanted, sink);
			pos = next;
		}
	}

	private void readLine(int end, UnaryOperator<String> normalise, Predicate<String> wanted, SampleSink sink) {
		skipBlanks(end);
		if (pos >= end || text.charAt(pos) == '#') {
			return;
		}
		int nameStart = pos;
		while (pos < end && isNameChar(text.charAt(pos))) {
			pos++;
		}
		if (pos == nameStart) {
			// Not a classic metric name (for example a quoted UTF-8 name): not one we
			// read.
			return;
		}
		String name = normalise.apply(text.subSequence(nameStart, pos).toString());
		if (!wanted.test(name)) {
			return;
		}
		Map<String, String> labels = Map.of();
		int beforeBlank = pos;
		skipBlanks(end);
		if (pos < end && text.charAt(pos) == '{') {
			pos++;
			labels = labels(end);
			beforeBlank = pos;
			skipBlanks(end);
		}
		if (pos == beforeBlank || pos >= end) {
			throw malformed(end, "expected a value after the metric name and labels");
		}
		double value = number(token(end), end);
		skipBlanks(end);
		if (pos < end) {
			String timestamp = token(end);
			if (!isTimestamp(timestamp)) {
				throw malformed(end, "expected a timestamp or the end of the line but found '" + timestamp + "'");
			}
			skipBlanks(end);
			if (pos < end) {
				throw malformed(end, "unexpected text after the timestamp");
			}
		}
		sink.accept(new Sample(name, labels, value));
	}

	private Map<String, String> labels(int end) {
		Map<String, String> labels = new LinkedHashMap<>();
		while (true) {
			skipBlanks(end);
			if (pos >= end) {
				throw malformed(end, "unterminated label set");
			}
			if (text.charAt(pos) == '}') {
				pos++;
				return labels;
			}
			int nameStart = pos;
			while (pos < end && isLabelNameChar(text.charAt(pos))) {
				pos++;
			}
			if (pos == nameStart) {
				throw malformed(end, "expected a label name at column " + (pos - lineStart + 1));
			}
			String name = text.subSequence(nameStart, pos).toString();
			skipBlanks(end);
			expect('=', end);
			skipBlanks(end);
			expect('"', end);
			labels.put(name, labelValue(end));
			skipBlanks(end);
			if (pos < end && text.charAt(pos) == ',') {
				pos++;
			}
			else if (pos >= end || text.charAt(pos) != '}') {
				throw malformed(end, "expected ',' or '}' after label " + name);
			}
		}
	}

	private String labelValue(int end) {
		StringBuilder value = new StringBuilder();
		while (pos < end) {
			char c = text.charAt(pos++);
			if (c == '"') {
				return value.toString();
			}
			if (c == '\\') {
				if (pos >= end) {
					break;
				}
				char e = text.charAt(pos++);
				switch (e) {
					case 'n' -> value.append('\n');
					case '\\' -> value.append('\\');
					case '"' -> value.append('"');
					default -> throw malformed(end, "invalid escape '\\" + e + "' in a label value");
				}
			}
			else {
				value.append(c);
			}
		}
		throw malformed(end, "unterminated label value");
	}

	private double number(String token, int end) {
		switch (token) {
			case "NaN":
				return Double.NaN;
			case "+Inf", "Inf", "+inf", "inf":
				return Double.POSITIVE_INFINITY;
			case "-Inf", "-inf":
				return Double.NEGATIVE_INFINITY;
			default:
		}
		// Double.parseDouble also takes Java-only forms ("1d", "0x1p3", "Infinity").
		for (int i = 0; i < token.length(); i++) {
			char c = token.charAt(i);
			if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
				throw malformed(end, "'" + token + "' is not a number");
			}
		}
		try {
			return Double.parseDouble(token);
		}
		catch (NumberFormatException ex) {
			throw malformed(end, "'" + token + "' is not a number");
		}
	}

	private static boolean isTimestamp(String token) {
		int start = token.startsWith("-") ? 1 : 0;
		if (start == token.length()) {
			return false;
		}
		for (int i = start; i < token.length(); i++) {
			char c = token.charAt(i);
			// OpenMetrics timestamps are seconds with a fraction.
			if (!((c >= '0' && c <= '9') || c == '.')) {
				return false;
			}
		}
		return true;
	}

	private String token(int end) {
		int start = pos;
		while (pos < end && !isBlank(text.charAt(pos))) {
			pos++;
		}
		return text.subSequence(start, pos).toString();
	}

	private void expect(char c, int end) {
		if (pos >= end || text.charAt(pos) != c) {
			throw malformed(end, "expected '" + c + "' at column " + (pos - lineStart + 1));
		}
		pos++;
	}

	private void skipBlanks(int end) {
		while (pos < end && isBlank(text.charAt(pos))) {
			pos++;
		}
	}

	private MetricsParseException malformed(int end, String reason) {
		int lineEnd = end;
		while (lineEnd < text.length() && text.charAt(lineEnd) != '\n') {
			lineEnd++;
		}
		String line = text.subSequence(lineStart, Math.min(lineEnd, lineStart + MAX_LINE_IN_MESSAGE)).toString();
		return new MetricsParseException("line " + lineNumber + ": " + reason + ": " + line);
	}

	private static boolean isBlank(char c) {
		return c == ' ' || c == '\t';
	}

	private static boolean isNameChar(char c) {
		return isLabelNameChar(c) || c == ':';
	}

	private static boolean isLabelNameChar(char c) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
	}

}

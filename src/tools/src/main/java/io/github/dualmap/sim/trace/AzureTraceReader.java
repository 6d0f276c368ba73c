package io.github.dualmap.sim.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Reads an Azure-style CSV of lengths only, with the header
 * {@code TIMESTAMP,ContextTokens,GeneratedTokens} (columns in any order, extra columns
 * ignored). {@code TIMESTAMP} is either a date-time as in the Azure LLM inference traces
 * ({@code 2023-11-16 18:15:46.6805900}) or a number of seconds. The format carries no
 * prefix information, so every request gets blocks of its own: no reuse.
 */
public final class AzureTraceReader {

	/** Tokens per generated block id. */
	public static final int BLOCK_TOKENS = 512;

	private static final DateTimeFormatter DATE_TIME = new DateTimeFormatterBuilder()
		.appendPattern("yyyy-MM-dd HH:mm:ss")
		.optionalStart()
		.appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true)
		.optionalEnd()
		.toFormatter(Locale.ROOT);

	private AzureTraceReader() {
	}

	public static Trace read(Path file) {
		try (BufferedReader in = TraceText.open(file)) {
			return read(file.getFileName().toString(), in);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot read trace " + file + ": " + ex.getMessage(), ex);
		}
	}

	public static Trace read(String name, Reader reader) throws IOException {
		BufferedReader in = reader instanceof BufferedReader b ? b : new BufferedReader(reader);
		String header = in.readLine();
		if (header == null) {
			throw new TraceFormatException(name, 1,
					"empty file, expected the header TIMESTAMP,ContextTokens,GeneratedTokens");
		}
		// A byte order mark (spreadsheet exports write one) is not part of the first
		// name.
		if (header.startsWith("\uFEFF")) {
			header = header.substring(1);
		}
		List<String> columns = Arrays.stream(header.split(",", -1)).map(String::strip).toList();
		int ts = column(name, columns, "TIMESTAMP");
		int ctx = column(name, columns, "ContextTokens");
		int gen = column(name, columns, "GeneratedTokens");
		List<TraceRequest> out = new ArrayList<>();
		LocalDateTime origin = null;
		long nextId = 0;
		int lineNo = 1;
		String line;
		while ((line = in.readLine()) != null) {
			lineNo++;
			if (line.isBlank()) {
				continue;
			}
			String[] cells = line.split(",", -1);
			if (cells.length < columns.size()) {
				throw new TraceFormatException(name, lineNo,
						"expected " + columns.size() + " columns but found " + cells.length);
			}
			String stamp = cells[ts].strip();
			double millis;
			LocalDateTime at = parseDateTime(stamp);
			if (at != null) {
				origin = origin == null ? at : origin;
				millis = Duration.between(origin, at).toNanos() / 1_000_000.0;
			}
			else {
				millis = parseNumber(name, lineNo, "TIMESTAMP", stamp) * 1000.0;
			}
			int input = parseCount(name, lineNo, "ContextTokens", cells[ctx].strip());
			int output = parseCount(name, lineNo, "GeneratedTokens", cells[gen].strip());
			// Going backwards first: a date-time before the first row's is below 0 too,
			// but "must be >= 0 seconds" would not say what is wrong with it.
			if (!out.isEmpty() && millis < out.get(out.size() - 1).timestampMillis()) {
				throw new TraceFormatException(name, lineNo,
						"TIMESTAMP '" + stamp + "' is earlier than the line before");
			}
			if (millis < 0) {
				throw new TraceFormatException(name, lineNo, "TIMESTAMP must be >= 0 seconds but was '" + stamp + "'");
			}
			long[] ids = new long[(input + BLOCK_TOKENS - 1) / BLOCK_TOKENS];
			for (int i = 0; i < ids.length; i++) {
				ids[i] = nextId++;
			}
			out.add(new TraceRequest(millis, input, output, ids));
		}
		if (out.size() < 2) {
			throw new TraceFormatException(name, lineNo, "a trace needs at least 2 requests but has " + out.size());
		}
		try {
			return new Trace(name, BLOCK_TOKENS, out);
		}
		catch (IllegalArgumentException ex) {
			throw new TraceFormatException(name, lineNo, ex.getMessage());
		}
	}

	private static int column(String name, List<String> columns, String wanted) {
		int i = columns.indexOf(wanted);
		if (i < 0) {
			throw new TraceFormatException(name, 1, "header " + columns + " has no column '" + wanted
					+ "' (expected TIMESTAMP,ContextTokens,GeneratedTokens)");
		}
		return i;
	}

	private static @Nullable LocalDateTime parseDateTime(String stamp) {
		if (stamp.indexOf('-') <= 0) {
			return null;
		}
		try {
			return LocalDateTime.parse(stamp, DATE_TIME);
		}
		catch (DateTimeParseException ex) {
			return null;
		}
	}

	private static double parseNumber(String name, int lineNo, String column, String value) {
		try {
			double v = Double.parseDouble(value);
			if (Double.isFinite(v)) {
				return v;
			}
		}
		catch (NumberFormatException ex) {
			// reported below
		}
		throw new TraceFormatException(name, lineNo,
				column + " '" + value + "' is neither a date-time (yyyy-MM-dd HH:mm:ss.f) nor a number of seconds");
	}

	private static int parseCount(String name, int lineNo, String column, String value) {
		try {
			int v = Integer.parseInt(value);
			if (v > 0) {
				return v;
			}
		}
		catch (NumberFormatException ex) {
			// reported below
		}
		throw new TraceFormatException(name, lineNo, column + " must be a positive integer but was '" + value + "'");
	}

}

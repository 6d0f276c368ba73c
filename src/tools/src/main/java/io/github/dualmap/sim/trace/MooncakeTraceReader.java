package io.github.dualmap.sim.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.prompt.PromptParser;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads the Mooncake trace format: one JSON object per line with {@code timestamp} (ms),
 * {@code input_length}, {@code output_length} and {@code hash_ids} over 512-token blocks.
 * Blank lines are skipped; any other bad line fails with its line number.
 */
public final class MooncakeTraceReader {

	/** Tokens per hash id in Mooncake traces. */
	public static final int BLOCK_TOKENS = 512;

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private MooncakeTraceReader() {
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
		List<TraceRequest> out = new ArrayList<>();
		int lineNo = 0;
		String line;
		while ((line = in.readLine()) != null) {
			lineNo++;
			if (line.isBlank()) {
				continue;
			}
			TraceRequest request = parse(name, lineNo, line);
			if (!out.isEmpty() && request.timestampMillis() < out.get(out.size() - 1).timestampMillis()) {
				throw new TraceFormatException(name, lineNo,
						"timestamp " + request.timestampMillis() + " is earlier than the request before ("
								+ out.get(out.size() - 1).timestampMillis()
								+ "): a trace lists requests in arrival order");
			}
			out.add(request);
		}
		if (out.isEmpty()) {
			throw new TraceFormatException(name, Math.max(1, lineNo), "no requests in the file");
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

	private static TraceRequest parse(String name, int lineNo, String line) {
		JsonNode node;
		try {
			node = JSON.readTree(line);
		}
		catch (JacksonException ex) {
			throw new TraceFormatException(name, lineNo, "not valid JSON (" + PromptParser.syntaxError(ex) + ")");
		}
		if (node == null || !node.isObject()) {
			throw new TraceFormatException(name, lineNo, "expected a JSON object");
		}
		double timestamp = number(name, lineNo, node, "timestamp");
		long input = integer(name, lineNo, node, "input_length");
		long output = integer(name, lineNo, node, "output_length");
		if (!(timestamp >= 0) || !Double.isFinite(timestamp)) {
			throw new TraceFormatException(name, lineNo, "timestamp must be a finite number >= 0 but was " + timestamp);
		}
		if (input <= 0 || input > Integer.MAX_VALUE) {
			throw new TraceFormatException(name, lineNo,
					"input_length must be between 1 and " + Integer.MAX_VALUE + " but was " + input);
		}
		if (output <= 0 || output > Integer.MAX_VALUE) {
			throw new TraceFormatException(name, lineNo,
					"output_length must be between 1 and " + Integer.MAX_VALUE + " but was " + output);
		}
		JsonNode ids = node.get("hash_ids");
		if (ids == null || !ids.isArray()) {
			throw new TraceFormatException(name, lineNo, "missing array field 'hash_ids'");
		}
		long expected = (input + BLOCK_TOKENS - 1) / BLOCK_TOKENS;
		if (ids.size() != expected) {
			throw new TraceFormatException(name, lineNo, "hash_ids has " + ids.size() + " entries but input_length "
					+ input + " needs " + expected + " blocks of " + BLOCK_TOKENS + " tokens");
		}
		long[] hashIds = new long[ids.size()];
		for (int i = 0; i < hashIds.length; i++) {
			JsonNode id = ids.get(i);
			if (!id.isIntegralNumber() || !id.canConvertToLong()) {
				throw new TraceFormatException(name, lineNo, "hash_ids[" + i + "] is not an integer: " + id);
			}
			hashIds[i] = id.longValue();
		}
		return new TraceRequest(timestamp, (int) input, (int) output, hashIds);
	}

	private static double number(String name, int lineNo, JsonNode node, String field) {
		JsonNode v = node.get(field);
		if (v == null) {
			throw new TraceFormatException(name, lineNo, "missing numeric field '" + field + "'");
		}
		if (!v.isNumber()) {
			throw new TraceFormatException(name, lineNo, "'" + field + "' must be a number but was " + v);
		}
		return v.doubleValue();
	}

	private static long integer(String name, int lineNo, JsonNode node, String field) {
		JsonNode v = node.get(field);
		if (v == null) {
			throw new TraceFormatException(name, lineNo, "missing integer field '" + field + "'");
		}
		if (!v.isIntegralNumber() || !v.canConvertToLong()) {
			throw new TraceFormatException(name, lineNo, "'" + field + "' must be an integer but was " + v);
		}
		return v.longValue();
	}

}

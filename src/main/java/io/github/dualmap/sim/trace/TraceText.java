package io.github.dualmap.sim.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Trace files as lines of UTF-8 text. Bytes that are not UTF-8 are read as U+FFFD and
 * reported with the line they are on: a strict decoder fails while filling its buffer,
 * lines ahead of the bad one, so its error names no line.
 */
final class TraceText {

	private TraceText() {
	}

	static BufferedReader open(Path file) throws IOException {
		return new BufferedReader(new InputStreamReader(Files.newInputStream(file),
				StandardCharsets.UTF_8.newDecoder()
					.onMalformedInput(CodingErrorAction.REPLACE)
					.onUnmappableCharacter(CodingErrorAction.REPLACE)));
	}

	/** Fails when {@code line} holds bytes that were not UTF-8. */
	static void check(String name, int lineNo, String line) {
		if (line.indexOf('\uFFFD') >= 0) {
			throw new TraceFormatException(name, lineNo, "not UTF-8 text");
		}
	}

}

package io.github.dualmap.sim.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Trace files as lines of UTF-8 text. A file is checked byte by byte first, so bytes that
 * are not UTF-8 are reported with their line: a decoding reader fails while filling its
 * buffer, lines ahead of the bad one, and names no line.
 */
final class TraceText {

	private TraceText() {
	}

	/** A reader of {@code file}, once its bytes are known to be UTF-8. */
	static BufferedReader open(Path file) throws IOException {
		requireUtf8(file);
		return Files.newBufferedReader(file, StandardCharsets.UTF_8);
	}

	/**
	 * Fails naming the first line of {@code file} that holds bytes that are not UTF-8.
	 */
	static void requireUtf8(Path file) throws IOException {
		CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
			.onMalformedInput(CodingErrorAction.REPORT)
			.onUnmappableCharacter(CodingErrorAction.REPORT);
		ByteBuffer in = ByteBuffer.allocate(64 * 1024);
		CharBuffer out = CharBuffer.allocate(64 * 1024);
		int line = 1;
		try (InputStream bytes = Files.newInputStream(file)) {
			boolean end = false;
			while (!end) {
				int n = bytes.read(in.array(), in.position(), in.remaining());
				end = n < 0;
				in.position(in.position() + Math.max(n, 0));
				in.flip();
				int start = in.position();
				CoderResult result = decoder.decode(in, out, end);
				line += newlines(in.array(), start, in.position());
				if (result.isError()) {
					throw new TraceFormatException(file.getFileName().toString(), line, "not UTF-8 text");
				}
				out.clear();
				in.compact();
			}
			if (decoder.flush(out).isError()) {
				throw new TraceFormatException(file.getFileName().toString(), line, "not UTF-8 text");
			}
		}
	}

	private static int newlines(byte[] bytes, int from, int to) {
		int n = 0;
		for (int i = from; i < to; i++) {
			n += bytes[i] == '\n' ? 1 : 0;
		}
		return n;
	}

}

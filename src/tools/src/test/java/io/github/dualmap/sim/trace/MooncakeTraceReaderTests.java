package io.github.dualmap.sim.trace;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class MooncakeTraceReaderTests {

	private static Trace read(String text) throws IOException {
		return MooncakeTraceReader.read("t.jsonl", new StringReader(text));
	}

	@Test
	void readsRequestsAndSkipsBlankLines() throws IOException {
		Trace t = read("""
				{"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [0, 1]}

				{"timestamp": 1500, "input_length": 512, "output_length": 7, "hash_ids": [0]}

				""");
		assertThat(t.size()).isEqualTo(2);
		assertThat(t.blockTokens()).isEqualTo(512);
		assertThat(t.requests().get(0).hashIds()).containsExactly(0, 1);
		assertThat(t.requests().get(1).timestampMillis()).isEqualTo(1500);
		assertThat(t.requests().get(1).outputTokens()).isEqualTo(7);
		assertThat(t.nativeRate()).isCloseTo(1 / 1.5, org.assertj.core.data.Offset.offset(1e-9));
	}

	@Test
	void malformedJsonNamesTheLine() {
		assertThatThrownBy(() -> read("""
				{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [0]}
				{"timestamp": 1, "input_length": 10, "output_length": 5, "hash_ids": [0]}

				{"timestamp": 2, "input_length": 10, "output_length": 5, "hash_ids": [0
				""")).isInstanceOf(TraceFormatException.class)
			.hasMessageContaining("t.jsonl, line 4")
			.hasMessageContaining("not valid JSON")
			.extracting(e -> ((TraceFormatException) e).line())
			.isEqualTo(4);
	}

	@Test
	void messagesSayWhatIsWrongWithoutParserNoise() {
		String good = "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [0]}\n";
		assertThatThrownBy(() -> read(good + "{\"timestamp\": 1, \"input_length\": 1000000000000, "
				+ "\"output_length\": 5, \"hash_ids\": [0]}\n"))
			.hasMessage("t.jsonl, line 2: input_length must be between 1 and 2147483647 but was 1000000000000");
		assertThatThrownBy(() -> read(
				good + "{\"timestamp\": 1, \"input_length\": 10, " + "\"output_length\": 0, \"hash_ids\": [0]}\n"))
			.hasMessage("t.jsonl, line 2: output_length must be between 1 and 2147483647 but was 0");
		for (String bad : new String[] { "{\"timestamp\": 1,, }", "{\"timestamp\": 1} x", "\u00ff",
				"{\"timestamp\": 2, \"input_length\": 10", "[1, 2" }) {
			assertThatThrownBy(() -> read(good + bad + "\n")).as(bad)
				.hasMessageStartingWith("t.jsonl, line 2: not valid JSON (")
				.hasMessageNotContaining("Source")
				.hasMessageNotContaining("REDACTED");
		}
	}

	@Test
	void missingFieldIsNamed() {
		assertThatThrownBy(() -> read("""
				{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [0]}
				{"timestamp": 1, "output_length": 5, "hash_ids": [0]}
				""")).isInstanceOf(TraceFormatException.class)
			.hasMessageContaining("line 2")
			.hasMessageContaining("input_length");
	}

	@Test
	void hashIdsMustCoverThePrompt() {
		assertThatThrownBy(() -> read("""
				{"timestamp": 0, "input_length": 1100, "output_length": 5, "hash_ids": [0, 1]}
				""")).isInstanceOf(TraceFormatException.class)
			.hasMessageContaining("line 1")
			.hasMessageContaining("needs 3 blocks");
	}

	@Test
	void decreasingTimestampsAreRejectedAtTheirLine() {
		assertThatThrownBy(() -> read("""
				{"timestamp": 5, "input_length": 10, "output_length": 5, "hash_ids": [0]}
				{"timestamp": 1, "input_length": 10, "output_length": 5, "hash_ids": [1]}
				{"timestamp": 9, "input_length": 10, "output_length": 5, "hash_ids": [1]}
				""")).isInstanceOf(TraceFormatException.class)
			.hasMessage("t.jsonl, line 2: timestamp 1.0 is earlier than the request before (5.0):"
					+ " a trace lists requests in arrival order");
	}

	@Test
	void eachBadValueIsNamedWithItsLine() {
		String good = "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [0]}\n";
		assertThatThrownBy(() -> read(
				good + "{\"timestamp\": 1e400, \"input_length\": 10, \"output_length\": 5," + " \"hash_ids\": [0]}\n"))
			.hasMessage("t.jsonl, line 2: timestamp must be a finite number >= 0 but was Infinity");
		assertThatThrownBy(() -> read(
				good + "{\"timestamp\": 1, \"input_length\": 10.5, \"output_length\": 5," + " \"hash_ids\": [0]}\n"))
			.hasMessage("t.jsonl, line 2: 'input_length' must be an integer but was 10.5");
		assertThatThrownBy(() -> read(good + "{\"timestamp\": \"now\", \"input_length\": 10, \"output_length\": 5,"
				+ " \"hash_ids\": [0]}\n"))
			.hasMessage("t.jsonl, line 2: 'timestamp' must be a number but was \"now\"");
		assertThatThrownBy(() -> read("\n\n")).hasMessage("t.jsonl, line 2: no requests in the file");
	}

	@Test
	void bytesThatAreNotUtf8AreNamedWithTheirLine(@TempDir Path dir) throws IOException {
		StringBuilder text = new StringBuilder();
		for (int i = 0; i < 2000; i++) {
			text.append("{\"timestamp\": ")
				.append(i)
				.append(", \"input_length\": 10, \"output_length\": 5,")
				.append(" \"hash_ids\": [0]}\n");
		}
		byte[] bytes = text.toString().getBytes(StandardCharsets.UTF_8);
		// Line 1500 gets a Latin-1 e-acute after its opening brace.
		int at = text.indexOf("{\"timestamp\": 1499,") + 1;
		byte[] bad = new byte[bytes.length + 1];
		System.arraycopy(bytes, 0, bad, 0, at);
		bad[at] = (byte) 0xE9;
		System.arraycopy(bytes, at, bad, at + 1, bytes.length - at);
		Path file = dir.resolve("latin1.jsonl");
		Files.write(file, bad);
		assertThatThrownBy(() -> MooncakeTraceReader.read(file)).hasMessage("latin1.jsonl, line 1500: not UTF-8 text");
		// A replacement character that is UTF-8 itself is text like any other.
		Path replacement = dir.resolve("replacement.jsonl");
		Files.writeString(replacement,
				"{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [0], \"note\": \"\uFFFD\"}\n"
						+ text.substring(text.indexOf("\n") + 1),
				StandardCharsets.UTF_8);
		assertThat(MooncakeTraceReader.read(replacement).size()).isEqualTo(2000);
	}

	@Test
	void readsTheSharedMooncakeTrace() {
		// The shared trace sits beside the project checkout (as in CI); skipped where it
		// does not.
		Path file = Path.of("..", "shared", "traces", "conversation_trace.jsonl");
		assumeTrue(Files.isReadable(file), "shared trace not found at " + file.toAbsolutePath());
		Trace t = MooncakeTraceReader.read(file);
		assertThat(t.size()).isEqualTo(12_031);
		assertThat(t.nativeRate()).isBetween(3.3, 3.5);
	}

}

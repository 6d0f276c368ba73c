package io.github.dualmap.sim.trace;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

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
	void decreasingTimestampsAreRejected() {
		assertThatThrownBy(() -> read("""
				{"timestamp": 5, "input_length": 10, "output_length": 5, "hash_ids": [0]}
				{"timestamp": 1, "input_length": 10, "output_length": 5, "hash_ids": [1]}
				""")).isInstanceOf(TraceFormatException.class).hasMessageContaining("must not decrease");
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

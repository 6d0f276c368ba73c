package io.github.dualmap.sim.trace;

import java.io.IOException;
import java.io.StringReader;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AzureTraceReaderTests {

	private static Trace read(String text) throws IOException {
		return AzureTraceReader.read("a.csv", new StringReader(text));
	}

	@Test
	void readsDateTimesAsMillisecondsFromTheFirstRequest() throws IOException {
		Trace t = read("""
				TIMESTAMP,ContextTokens,GeneratedTokens
				2023-11-16 18:15:46.6805900,374,44
				2023-11-16 18:15:50.9951690,1100,16
				2023-11-16 18:15:51,512,1
				""");
		assertThat(t.size()).isEqualTo(3);
		assertThat(t.requests().get(0).timestampMillis()).isZero();
		assertThat(t.requests().get(1).timestampMillis()).isCloseTo(4314.579,
				org.assertj.core.data.Offset.offset(1e-3));
		assertThat(t.requests().get(1).hashIds()).hasSize(3);
		assertThat(t.requests().get(2).outputTokens()).isEqualTo(1);
	}

	@Test
	void everyBlockIsUniqueSoNothingIsReused() throws IOException {
		Trace t = read("""
				ContextTokens,TIMESTAMP,GeneratedTokens
				2000,0.0,10
				2000,0.5,10
				2000,1.25,10
				""");
		assertThat(t.requests().get(2).timestampMillis()).isEqualTo(1250);
		Set<Long> ids = new HashSet<>();
		t.requests().forEach(r -> {
			for (long id : r.hashIds()) {
				assertThat(ids.add(id)).isTrue();
			}
		});
		assertThat(ids).hasSize(12);
	}

	@Test
	void badCountNamesTheLineAndColumn() {
		assertThatThrownBy(() -> read("""
				TIMESTAMP,ContextTokens,GeneratedTokens
				0,100,10
				1,-4,10
				""")).isInstanceOf(TraceFormatException.class)
			.hasMessageContaining("a.csv, line 3")
			.hasMessageContaining("ContextTokens must be a positive integer but was '-4'");
	}

	@Test
	void badTimestampAndShortLinesAreReported() {
		assertThatThrownBy(() -> read("TIMESTAMP,ContextTokens,GeneratedTokens\nyesterday,100,10\n"))
			.hasMessageContaining("line 2")
			.hasMessageContaining("TIMESTAMP 'yesterday'");
		assertThatThrownBy(() -> read("TIMESTAMP,ContextTokens,GeneratedTokens\n0,100\n"))
			.hasMessageContaining("line 2")
			.hasMessageContaining("expected 3 columns");
	}

	@Test
	void aByteOrderMarkIsNoPartOfTheHeaderAndANegativeFirstTimestampIsNamedAsSuch() throws IOException {
		assertThat(read("\uFEFFTIMESTAMP,ContextTokens,GeneratedTokens\n0,100,10\n1,100,10\n").size()).isEqualTo(2);
		assertThatThrownBy(() -> read("TIMESTAMP,ContextTokens,GeneratedTokens\n-5,100,10\n1,100,10\n"))
			.hasMessage("a.csv, line 2: TIMESTAMP must be >= 0 seconds but was '-5'");
		assertThatThrownBy(() -> read("TIMESTAMP,ContextTokens,GeneratedTokens\n5,100,10\n1,100,10\n"))
			.hasMessage("a.csv, line 3: TIMESTAMP '1' is earlier than the line before");
	}

	@Test
	void aDateTimeEarlierThanTheFirstIsATimestampGoingBackwards() {
		assertThatThrownBy(() -> read("TIMESTAMP,ContextTokens,GeneratedTokens\n"
				+ "2023-11-16 18:15:50.0000000,100,10\n2023-11-16 18:15:46.0000000,100,10\n"))
			.hasMessage("a.csv, line 3: TIMESTAMP '2023-11-16 18:15:46.0000000' is earlier than the line before");
	}

	@Test
	void missingColumnIsNamed() {
		assertThatThrownBy(() -> read("TIMESTAMP,ContextTokens\n0,100\n")).isInstanceOf(TraceFormatException.class)
			.hasMessageContaining("line 1")
			.hasMessageContaining("GeneratedTokens");
	}

}

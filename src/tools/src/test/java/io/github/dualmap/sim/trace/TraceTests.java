package io.github.dualmap.sim.trace;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TraceTests {

	private static TraceRequest at(double millis) {
		return new TraceRequest(millis, 100, 10, new long[] { (long) millis });
	}

	@Test
	void rateScalingKeepsRelativeGaps() {
		Trace t = new Trace("t", 512, List.of(at(1000), at(1000), at(2000), at(5000)));
		assertThat(t.nativeRate()).isEqualTo(0.75);
		long[] native_ = t.arrivalNanos(0.75);
		assertThat(native_).containsExactly(0, 0, 1_000_000_000L, 4_000_000_000L);
		long[] twice = t.arrivalNanos(1.5);
		assertThat(twice).containsExactly(0, 0, 500_000_000L, 2_000_000_000L);
		assertThat(t.first(3).arrivalNanos(1.0)).containsExactly(0, 0, 2_000_000_000L);
		// The span is the last arrival, at any rate.
		assertThat(t.arrivalSpanNanos(0.75)).isEqualTo(4_000_000_000L);
		assertThat(t.arrivalSpanNanos(1.5)).isEqualTo(2_000_000_000L);
	}

	@Test
	void tiesSpreadEvenlyOverTheGapToTheNextTimestamp() {
		Trace t = new Trace("t", 512, List.of(at(0), at(0), at(0), at(3000), at(6000), at(6000)));
		Trace spread = t.spreadTies();
		assertThat(spread.name()).isEqualTo("t, ties spread");
		// Three at 0 over the 3 s to the next stamp; the last two over the mean gap
		// between the three distinct stamps (3 s).
		assertThat(spread.requests()).extracting(TraceRequest::timestampMillis)
			.containsExactly(0.0, 1000.0, 2000.0, 3000.0, 6000.0, 7500.0);
		// Order and content are kept.
		assertThat(spread.requests()).extracting(r -> r.hashIds()[0]).containsExactly(0L, 0L, 0L, 3000L, 6000L, 6000L);
		assertThat(spread.arrivalNanos(1.0)).doesNotHaveDuplicates();
		assertThat(t.arrivalNanos(1.0)[1]).isZero();
		// No ties, nothing to do.
		Trace distinct = new Trace("d", 512, List.of(at(0), at(10), at(20)));
		assertThat(distinct.spreadTies()).isSameAs(distinct);
	}

	@Test
	void aRateThatWouldSpreadTheTraceBeyondTheClockIsRejectedNotClamped() {
		Trace t = new Trace("t", 512, List.of(at(0), at(10), at(20)));
		// 2 gaps at 1e-12 req/s: 2e12 s, beyond what nanoseconds in a long hold safely.
		assertThatThrownBy(() -> t.arrivalNanos(1e-12)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("1.0E-12");
		assertThatThrownBy(() -> t.arrivalSpanNanos(1e-12)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("1.0E-12");
		assertThat(t.arrivalNanos(1e-3)[2]).isEqualTo(2_000_000_000_000L);
	}

	@Test
	void aRepeatedTraceReplaysItsCopiesBackToBackWithDisjointPrefixes() {
		Trace t = new Trace("t", 512,
				List.of(new TraceRequest(1000, 100, 10, new long[] { 0, 1 }),
						new TraceRequest(2000, 200, 20, new long[] { 0, 2 }),
						new TraceRequest(4000, 300, 30, new long[] { 3 })));
		Trace three = t.repeated(3);
		assertThat(three.name()).isEqualTo("t x3");
		assertThat(three.size()).isEqualTo(9);
		// Span 3 s over 2 gaps: a copy lasts 4.5 s (its span plus one mean gap).
		assertThat(three.requests()).extracting(TraceRequest::timestampMillis)
			.containsExactly(0.0, 1000.0, 3000.0, 4500.0, 5500.0, 7500.0, 9000.0, 10000.0, 12000.0);
		assertThat(three.requests()).extracting(TraceRequest::inputTokens)
			.containsExactly(100, 200, 300, 100, 200, 300, 100, 200, 300);
		assertThat(three.requests().get(4).hashIds()).containsExactly(4, 6);
		assertThat(three.requests().get(7).hashIds()).containsExactly(8, 10);
		// Same relative timing, so the same rate replays each copy as the original.
		long[] arrivals = three.arrivalNanos(1.0);
		long[] original = t.arrivalNanos(1.0 * t.nativeRate() / three.nativeRate());
		assertThat(arrivals[4] - arrivals[3]).isEqualTo(original[1] - original[0]);
		// The original is untouched, and one copy is the trace itself.
		assertThat(t.requests().get(1).hashIds()).containsExactly(0, 2);
		assertThat(t.repeated(1)).isSameAs(t);
		assertThatThrownBy(() -> t.repeated(0)).hasMessageContaining("repeat count must be > 0 but was 0");
		// Ids as a trace file may have them: negative, or so far apart that copies
		// shifted
		// past each other would overflow.
		Trace wide = new Trace("wide", 512, List.of(new TraceRequest(0, 100, 10, new long[] { -5 }),
				new TraceRequest(10, 100, 10, new long[] { 5 })));
		assertThat(wide.repeated(2).requests()).extracting(r -> r.hashIds()[0]).containsExactly(-5L, 5L, 6L, 16L);
		Trace huge = new Trace("huge", 512, List.of(new TraceRequest(0, 100, 10, new long[] { Long.MIN_VALUE }),
				new TraceRequest(10, 100, 10, new long[] { Long.MAX_VALUE / 2 })));
		assertThatThrownBy(() -> huge.repeated(2)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("span too much to shift 2 copies apart");
	}

	@Test
	void badRatesAndTracesAreRejected() {
		Trace t = new Trace("t", 512, List.of(at(0), at(10)));
		assertThatThrownBy(() -> t.arrivalNanos(0)).hasMessageContaining("rate must be > 0");
		assertThatThrownBy(() -> new Trace("flat", 512, List.of(at(3), at(3)))).hasMessageContaining("same timestamp");
		assertThatThrownBy(() -> t.first(0)).hasMessageContaining("was 0");
	}

}

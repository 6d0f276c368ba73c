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
	}

	@Test
	void aRateThatWouldSpreadTheTraceBeyondTheClockIsRejectedNotClamped() {
		Trace t = new Trace("t", 512, List.of(at(0), at(10), at(20)));
		// 2 gaps at 1e-12 req/s: 2e12 s, beyond what nanoseconds in a long hold safely.
		assertThatThrownBy(() -> t.arrivalNanos(1e-12)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("1.0E-12");
		assertThat(t.arrivalNanos(1e-3)[2]).isEqualTo(2_000_000_000_000L);
	}

	@Test
	void badRatesAndTracesAreRejected() {
		Trace t = new Trace("t", 512, List.of(at(0), at(10)));
		assertThatThrownBy(() -> t.arrivalNanos(0)).hasMessageContaining("rate must be > 0");
		assertThatThrownBy(() -> new Trace("flat", 512, List.of(at(3), at(3)))).hasMessageContaining("same timestamp");
		assertThatThrownBy(() -> t.first(0)).hasMessageContaining("was 0");
	}

}

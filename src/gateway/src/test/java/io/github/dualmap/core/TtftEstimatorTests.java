package io.github.dualmap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

class TtftEstimatorTests {

	@Test
	void estimateIsPendingPlusOwnTokensTimesRatePlusBase() {
		TtftEstimator e = new TtftEstimator(100, 5_000, 0.1);
		assertThat(e.estimate(1_000, 200)).isEqualTo(1_200 * 100 + 5_000);
		assertThat(e.estimate(0, 0)).isEqualTo(5_000);
	}

	@Test
	void calibrationMovesTowardObserved() {
		TtftEstimator e = new TtftEstimator(100, 0, 0.5);
		// 1000 tokens took 200 us: 200 ns per token observed.
		e.observe(800, 200, 200_000);
		assertThat(e.nanosPerToken()).isCloseTo(150, within(1e-9));
		e.observe(800, 200, 200_000);
		assertThat(e.nanosPerToken()).isCloseTo(175, within(1e-9));
	}

	@Test
	void calibrationFitsTheRateAfterTheBase() {
		TtftEstimator e = new TtftEstimator(25_000, 20_000_000, 1.0);
		// 45 ms = the 20 ms base + 1000 tokens at 25 us: the configured rate was right.
		e.observe(0, 1_000, 45_000_000);
		assertThat(e.nanosPerToken()).isEqualTo(25_000.0);
	}

	@Test
	void outliersAreClampedToTheDriftBound() {
		TtftEstimator e = new TtftEstimator(100, 0, 1.0);
		e.observe(0, 10, 1_000_000_000L);
		assertThat(e.nanosPerToken()).isEqualTo(100 * TtftEstimator.MAX_DRIFT);
		e.observe(0, 1_000_000, 1);
		assertThat(e.nanosPerToken()).isEqualTo(100 / TtftEstimator.MAX_DRIFT);
	}

	@Test
	void uninformativeObservationsAreIgnored() {
		TtftEstimator e = new TtftEstimator(100, 1_000, 0.5);
		e.observe(0, 0, 50_000);
		e.observe(10, 10, 500);
		assertThat(e.nanosPerToken()).isEqualTo(100);
		TtftEstimator off = new TtftEstimator(100, 0, 0);
		off.observe(10, 10, 1_000_000);
		assertThat(off.nanosPerToken()).isEqualTo(100);
	}

	@Test
	void validationNamesTheBadValue() {
		assertThatIllegalArgumentException().isThrownBy(() -> new TtftEstimator(0, 0, 0.1))
			.withMessageContaining("nanosPerToken");
		assertThatIllegalArgumentException().isThrownBy(() -> new TtftEstimator(1, -1, 0.1))
			.withMessageContaining("baseNanos");
		assertThatIllegalArgumentException().isThrownBy(() -> new TtftEstimator(1, 0, 1.5))
			.withMessageContaining("1.5");
	}

}

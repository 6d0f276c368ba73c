package io.github.dualmap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SchedulerSettingsTests {

	@Test
	void defaultsAreTheReferenceValues() {
		SchedulerSettings s = SchedulerSettings.ofDefaults();
		assertThat(s.hotWindow()).isEqualTo(200);
		assertThat(s.hotRatio()).isEqualTo(0.0612);
		assertThat(s.hotMinSamples()).isEqualTo(20);
		assertThat(s.switchFactor()).isEqualTo(0.5);
		assertThat(s.switchHitCharge()).isEqualTo(1.0);
		assertThat(s.toBuilder().build()).isEqualTo(s);
		assertThat(s.toBuilder().switchHitCharge(0).build().switchHitCharge()).isZero();
	}

	@Test
	void minSamplesBeyondTheWindowAreRejected() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SchedulerSettings.custom().hotWindow(10).hotMinSamples(20).build())
			.withMessageContaining("hotMinSamples")
			.withMessageContaining("20");
		assertThatIllegalArgumentException().isThrownBy(() -> SchedulerSettings.custom().hotRatio(1.5).build())
			.withMessageContaining("hotRatio");
		assertThatIllegalArgumentException().isThrownBy(() -> SchedulerSettings.custom().switchHitCharge(-0.5).build())
			.withMessageContaining("switchHitCharge");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SchedulerSettings.custom().switchHitCharge(Double.NaN).build())
			.withMessageContaining("switchHitCharge");
	}

}

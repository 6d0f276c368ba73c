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
	void theColdRuleIsLeftToTheDispatchModeUnlessConfigured() {
		SchedulerSettings unset = SchedulerSettings.ofDefaults();
		assertThat(unset.coldCachedShare()).isNaN();
		assertThat(unset.spreadsCold()).as("unresolved: off").isFalse();
		SchedulerSettings passThrough = unset.forDispatchMode(DispatchMode.PASS_THROUGH);
		assertThat(passThrough.coldCachedShare()).isEqualTo(SchedulerSettings.COLD_CACHED_SHARE);
		assertThat(passThrough.spreadsCold()).isTrue();
		SchedulerSettings queued = unset.forDispatchMode(DispatchMode.QUEUE);
		assertThat(queued.coldCachedShare()).isZero();
		assertThat(queued.spreadsCold()).isFalse();
		assertThat(queued.toBuilder().coldCachedShare(Double.NaN).build()).isEqualTo(unset);
		SchedulerSettings off = unset.toBuilder().coldCachedShare(0).build();
		assertThat(off.forDispatchMode(DispatchMode.PASS_THROUGH)).isSameAs(off);
		SchedulerSettings half = unset.toBuilder().coldCachedShare(0.5).build();
		assertThat(half.forDispatchMode(DispatchMode.QUEUE)).isSameAs(half);
		assertThat(passThrough.forDispatchMode(DispatchMode.QUEUE)).as("resolved once").isSameAs(passThrough);
		assertThatIllegalArgumentException().isThrownBy(() -> SchedulerSettings.custom().coldCachedShare(1.5).build())
			.withMessageContaining("coldCachedShare must be in [0, 1]");
		assertThatIllegalArgumentException().isThrownBy(() -> SchedulerSettings.custom().coldCachedShare(-0.1).build())
			.withMessageContaining("coldCachedShare");
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

	@Test
	void theTtftModelSettingsAreValidated() {
		SchedulerSettings s = SchedulerSettings.custom()
			.ttftModel(TtftModel.LINEAR)
			.attentionNanosPerPair(2)
			.ttftForgetting(1)
			.build();
		assertThat(s.toBuilder().build()).isEqualTo(s);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SchedulerSettings.custom().attentionNanosPerPair(0).build())
			.withMessageContaining("attentionNanosPerPair must be > 0");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SchedulerSettings.custom().attentionNanosPerPair(Double.POSITIVE_INFINITY).build())
			.withMessageContaining("attentionNanosPerPair");
		assertThatIllegalArgumentException().isThrownBy(() -> SchedulerSettings.custom().ttftForgetting(0).build())
			.withMessageContaining("ttftForgetting must be in (0, 1]");
		assertThatIllegalArgumentException().isThrownBy(() -> SchedulerSettings.custom().ttftForgetting(1.2).build())
			.withMessageContaining("ttftForgetting");
		assertThat(SchedulerSettings.ofDefaults().switchMaxKvUsage()).isEqualTo(0.9);
		assertThatIllegalArgumentException().isThrownBy(() -> SchedulerSettings.custom().switchMaxKvUsage(0).build())
			.withMessageContaining("switchMaxKvUsage must be in (0, 1]");
		assertThatIllegalArgumentException().isThrownBy(() -> SchedulerSettings.custom().switchMaxKvUsage(1.1).build())
			.withMessageContaining("switchMaxKvUsage");
		assertThat(SchedulerSettings.ofDefaults().tieBreak()).isEqualTo(TieBreak.AUTO);
		assertThat(TieBreak.RING_ORDER.value()).as("as the property names it").isEqualTo("ring-order");
		assertThatIllegalArgumentException().isThrownBy(() -> SchedulerSettings.custom().tieBreak(null).build())
			.withMessageContaining("tieBreak must be set");
	}

}

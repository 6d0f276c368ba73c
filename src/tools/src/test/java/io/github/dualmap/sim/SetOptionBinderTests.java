package io.github.dualmap.sim;

import java.util.List;

import io.github.dualmap.autoconfigure.DualMapProperties;
import io.github.dualmap.core.DispatchMode;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.core.TieBreak;
import io.github.dualmap.core.TtftModel;
import io.github.dualmap.engine.EngineProfile;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

class SetOptionBinderTests {

	@Test
	void withoutAssignmentsTheGatewayDefaultsAreTheCoreDefaults() {
		DualMapProperties p = SetOptionBinder.bind(List.of());
		assertThat(p.toSchedulerSettings()).isEqualTo(SchedulerSettings.ofDefaults());
		assertThat(p.toQueueSettings()).isEqualTo(QueueSettings.ofDefaults());
	}

	@Test
	void assignmentsBindAsTheGatewayBindsThem() {
		DualMapProperties p = SetOptionBinder
			.bind(List.of("dualmap.switch-hit-charge=2", "dualmap.dispatch.max-queued-per-pool = 4096",
					"dualmap.hot-prefix.max-depth=32", "dualmap.dispatch.aging=500ms", "dualmap.tie-break=estimate"));
		assertThat(p.toSchedulerSettings().switchHitCharge()).isEqualTo(2.0);
		assertThat(p.toSchedulerSettings().tieBreak()).isEqualTo(TieBreak.ESTIMATE);
		assertThat(p.toSchedulerSettings().maxPrefixDepth()).isEqualTo(32);
		assertThat(p.toQueueSettings().maxQueuedPerPool()).isEqualTo(4096);
		assertThat(p.toQueueSettings().agingNanos()).isEqualTo(500_000_000L);
	}

	@Test
	void badAssignmentsAreRefusedNamingWhatIsWrong() {
		assertThatIllegalArgumentException().isThrownBy(() -> SetOptionBinder.bind(List.of("dualmap.switch-factor")))
			.withMessage("--set needs PROPERTY=VALUE but got 'dualmap.switch-factor'");
		assertThatIllegalArgumentException().isThrownBy(() -> SetOptionBinder.bind(List.of("server.port=1")))
			.withMessageContaining("takes dualmap.* properties but got 'server.port'");
		assertThatIllegalArgumentException().isThrownBy(() -> SetOptionBinder.bind(List.of("dualmap.slo.ttft=2s")))
			.withMessage("--set dualmap.slo.ttft is decided by --slo-ttft in sim");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SetOptionBinder.bind(List.of("dualmap.dispatch.mode=pass-through")))
			.withMessageContaining("--policies");
		assertThatIllegalArgumentException().isThrownBy(() -> SetOptionBinder.bind(List.of("dualmap.no-such=1")))
			.withMessageContaining("dualmap.no-such");
		assertThatIllegalArgumentException().isThrownBy(() -> SetOptionBinder.bind(List.of("dualmap.demo.instances=8")))
			.withMessageContaining("'dualmap.demo.instances', a property of the demo profile");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SetOptionBinder.bind(List.of("dualmap.switch-hit-charge=-1")))
			.withMessage("--set: dualmap.switch-hit-charge must be >= 0");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SetOptionBinder.bind(List.of("dualmap.ring.virtual-nodes=100000000")))
			.withMessage("--set: dualmap.ring.virtual-nodes must be <= 10000");
		// Checks whose messages name the value apply here too.
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SetOptionBinder.bind(List.of("dualmap.services=llm", "dualmap.pools.llm.policy=Nope")))
			.withMessageStartingWith("--set: dualmap.pools.llm.policy names no known routing policy: 'Nope'; known: ");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SetOptionBinder.bind(List.of("dualmap.dispatch.max-queued-per-pool=many")))
			.withMessageContaining("dualmap.dispatch.max-queued-per-pool")
			.withMessageContaining("many");
	}

	@Test
	void rowsStartFromTheGatewayQueueAndKeepTheirOwnMode() {
		QueueSettings base = QueueSettings.custom().maxQueuedPerPool(4096).idlePull(true).build();
		assertThat(PolicySpec.named("dualmap", base).queue()).satisfies(q -> {
			assertThat(q.mode()).isEqualTo(DispatchMode.QUEUE);
			assertThat(q.maxQueuedPerPool()).isEqualTo(4096);
		});
		assertThat(PolicySpec.named(PolicySpec.DUALMAP_PASS_THROUGH, base).queue().mode())
			.isEqualTo(DispatchMode.PASS_THROUGH);
		assertThat(PolicySpec.named(PolicySpec.DUALMAP_NO_PULL, base).queue().idlePull()).isFalse();
		assertThat(PolicySpec.named("dualmap-no-rebalance", base).queue().maxMigrations()).isZero();
		assertThat(PolicySpec.named("dualmap-no-rebalance", base).queue().maxQueuedPerPool()).isEqualTo(4096);
		assertThat(PolicySpec.named("sglang-cache-aware", base).queue()).isNull();
	}

	@Test
	void theLocalReleaseRowIsDualMapWhoseEngineQueueHoldsNothing() {
		QueueSettings base = QueueSettings.custom().maxQueuedPerPool(4096).build();
		assertThat(base.holdOnEngineQueue()).as("the default").isTrue();
		assertThat(PolicySpec.named("dualmap", base).queue().holdOnEngineQueue()).isTrue();
		QueueSettings local = PolicySpec.named(PolicySpec.DUALMAP_LOCAL_RELEASE, base).queue();
		assertThat(local.holdOnEngineQueue()).isFalse();
		assertThat(local.mode()).isEqualTo(DispatchMode.QUEUE);
		assertThat(local.maxQueuedPerPool()).isEqualTo(4096);
		assertThat(PolicySpec.names()).contains(PolicySpec.DUALMAP_LOCAL_RELEASE);
	}

	@Test
	void theTtftRowsSetTheModelAndTheOracleTakesTheEnginesCoefficients() {
		SchedulerSettings run = SchedulerSettings.ofDefaults();
		EngineProfile engine = EngineProfile.a100_8b();
		QueueSettings base = QueueSettings.ofDefaults();
		assertThat(PolicySpec.named(PolicySpec.DUALMAP_LINEAR_TTFT, base, engine).settingsFor(run).ttftModel())
			.isEqualTo(TtftModel.LINEAR);
		assertThat(PolicySpec.named(PolicySpec.DUALMAP_ATTENTION_TTFT, base, engine)
			.settingsFor(run.toBuilder().ttftModel(TtftModel.LINEAR).build())
			.ttftModel()).isEqualTo(TtftModel.ATTENTION);
		PolicySpec oracle = PolicySpec.named(PolicySpec.DUALMAP_ORACLE_TTFT, base, engine);
		SchedulerSettings s = oracle.settingsFor(run);
		assertThat(s.ttftModel()).isEqualTo(TtftModel.ATTENTION);
		assertThat(s.prefillNanosPerToken()).isCloseTo(65_000, within(1e-6));
		assertThat(s.attentionNanosPerPair()).isCloseTo(engine.cAttnSeconds() * 1e9, within(1e-12));
		assertThat(s.calibrationAlpha()).as("no learning").isZero();
		assertThat(oracle.queue().mode()).isEqualTo(DispatchMode.QUEUE);
		assertThat(PolicySpec.names()).contains(PolicySpec.DUALMAP_LINEAR_TTFT, PolicySpec.DUALMAP_ATTENTION_TTFT,
				PolicySpec.DUALMAP_ORACLE_TTFT, PolicySpec.DUALMAP_NO_SWITCH_KV_LIMIT);
		assertThat(PolicySpec.named(PolicySpec.DUALMAP_NO_SWITCH_KV_LIMIT, base, engine)
			.settingsFor(run)
			.switchMaxKvUsage()).isEqualTo(1.0);
		assertThat(run.switchMaxKvUsage()).isLessThan(1.0);
	}

	@Test
	void theColdRuleRowsTurnItOnAndOffWhateverTheRun() {
		SchedulerSettings off = SchedulerSettings.ofDefaults();
		SchedulerSettings half = off.toBuilder().coldCachedShare(0.5).build();
		QueueSettings base = QueueSettings.ofDefaults();
		EngineProfile engine = EngineProfile.a100_8b();
		PolicySpec cold = PolicySpec.named(PolicySpec.DUALMAP_COLD_OCCUPANCY, base, engine);
		PolicySpec two = PolicySpec.named(PolicySpec.DUALMAP_TWO_CHOICE, base, engine);
		assertThat(off.spreadsCold()).isFalse();
		assertThat(cold.settingsFor(off).coldCachedShare()).isEqualTo(SchedulerSettings.COLD_CACHED_SHARE);
		assertThat(cold.settingsFor(half).coldCachedShare()).isEqualTo(0.5);
		assertThat(two.settingsFor(half).spreadsCold()).isFalse();
		assertThat(cold.queue().mode()).isEqualTo(DispatchMode.QUEUE);
		assertThat(PolicySpec.names()).contains(PolicySpec.DUALMAP_TWO_CHOICE, PolicySpec.DUALMAP_COLD_OCCUPANCY);
	}

	@Test
	void unsetTheColdRuleFollowsEachRowsDispatchMode() {
		SchedulerSettings run = SetOptionBinder.bind(List.of()).toSchedulerSettings();
		PolicySpec passThrough = PolicySpec.named(PolicySpec.DUALMAP_PASS_THROUGH);
		PolicySpec queued = PolicySpec.named("dualmap");
		assertThat(passThrough.settingsFor(run).coldCachedShare()).isEqualTo(SchedulerSettings.COLD_CACHED_SHARE);
		assertThat(queued.settingsFor(run).spreadsCold()).isFalse();
		assertThat(queued.settingsFor(run).coldCachedShare()).isZero();
		SchedulerSettings off = SetOptionBinder.bind(List.of("dualmap.cold.cached-share=0")).toSchedulerSettings();
		assertThat(passThrough.settingsFor(off).spreadsCold()).as("--set turns it off").isFalse();
		SchedulerSettings on = SetOptionBinder.bind(List.of("dualmap.cold.cached-share=0.3")).toSchedulerSettings();
		assertThat(queued.settingsFor(on).spreadsCold()).as("--set turns it on behind the queue").isTrue();
	}

}

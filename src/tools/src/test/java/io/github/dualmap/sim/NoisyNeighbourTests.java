package io.github.dualmap.sim;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import io.github.dualmap.core.FairnessSettings;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.engine.EngineProfile;
import io.github.dualmap.sim.trace.SyntheticWorkload;
import io.github.dualmap.sim.trace.Trace;
import io.github.dualmap.sim.trace.TraceRequest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** Two tenants on one simulated pool: the noisy-neighbour workload. */
class NoisyNeighbourTests {

	private static final SchedulerSettings SETTINGS = SchedulerSettings.custom().blockTokens(512).build();

	private static SimulationConfig config(int warmup) {
		return SimulationConfig.builder()
			.instances(2)
			.routers(1)
			.slo(Duration.ofSeconds(5))
			.networkDelay(Duration.ofMillis(1))
			.warmup(warmup)
			.seed(3)
			.settings(SETTINGS)
			.instanceModels(EngineInstance.factory(EngineProfile.h100_8b(), 512))
			.decisionTimer(() -> 0L)
			.build();
	}

	@Test
	void theMixGivesWholeConversationsToTenantsInTheirShares() {
		Trace t = SyntheticWorkload.SESSIONS.generate(6000, 5);
		TenantMix mix = TenantMix.NOISY;
		Map<Long, Integer> byConversation = new HashMap<>();
		int quiet = 0;
		int[] tenants = mix.assign(t, 3);
		for (int i = 0; i < t.size(); i++) {
			TraceRequest r = t.requests().get(i);
			int tenant = tenants[i];
			// Two blocks of system prompt, then the session's own first block.
			if (r.hashIds().length > 2) {
				assertThat(byConversation.merge(r.hashIds()[2], tenant, (a, b) -> a.equals(b) ? a : -1))
					.as("one conversation, one tenant")
					.isNotNegative();
			}
			quiet += tenant == mix.indexOf(TenantMix.QUIET) ? 1 : 0;
		}
		assertThat((double) quiet / t.size()).isBetween(0.06, 0.12);
		TenantMix.Alone alone = mix.alone(t, mix.indexOf(TenantMix.QUIET), 500, 3);
		assertThat(alone.trace().size()).isEqualTo(quiet);
		// At the rate rateFor gives, the quiet requests arrive when they do in the mix.
		long[] whole = t.arrivalNanos(20);
		long[] own = alone.trace().arrivalNanos(alone.rateFor(t, 20));
		int k = 0;
		long offset = -1;
		for (int i = 0; i < t.size(); i++) {
			if (tenants[i] == mix.indexOf(TenantMix.QUIET)) {
				if (offset < 0) {
					offset = whole[i] - own[k];
				}
				assertThat(Math.abs(whole[i] - own[k] - offset)).isLessThanOrEqualTo(1_000L);
				k++;
			}
		}
		assertThatIllegalArgumentException().isThrownBy(() -> TenantMix.fromCliName("loud"))
			.withMessageContaining("'loud'");
	}

	@Test
	void withOneTenantFairQueuingChangesNothing() {
		Workload w = Workload.of(SyntheticWorkload.TENANTS.generate(2000, 4));
		PolicySpec dualmap = PolicySpec.named("dualmap");
		TenantMix one = new TenantMix("one",
				java.util.List.of(new TenantMix.Member(new io.github.dualmap.core.Tenant("only", 1, 0), 1.0)));
		FairnessSettings on = FairnessSettings.ofDefaults();
		RunResult plain = Simulation.run(w, null, dualmap, config(300), 60, false, false);
		TenantRun fair = Simulation.run(w, null, dualmap, config(300), 60, one, on, false);
		TenantRun off = Simulation.run(w, null, dualmap, config(300), 60, one, on.withEnabled(false), false);
		assertThat(plain.attainment()).as("past capacity").isLessThan(0.95);
		assertThat(fair.result().ttftSeconds()).containsExactly(plain.ttftSeconds());
		assertThat(off.result().ttftSeconds()).containsExactly(plain.ttftSeconds());
		assertThat(fair.result().requests().rejected()).isEqualTo(plain.requests().rejected());
	}

	@Test
	void pastCapacityFairQueuingKeepsTheQuietTenantsAttainmentAndServesTheNoisyOne() {
		Workload w = Workload.of(SyntheticWorkload.NO_REUSE.generate(4000, 11));
		PolicySpec dualmap = PolicySpec.named("dualmap");
		// Past the two instances' capacity: a fifth of the requests miss without
		// fairness.
		double rate = 60;
		FairnessSettings on = FairnessSettings.ofDefaults();
		TenantRun off = Simulation.run(w, null, dualmap, config(300), rate, TenantMix.NOISY, on.withEnabled(false),
				false);
		TenantRun fair = Simulation.run(w, null, dualmap, config(300), rate, TenantMix.NOISY, on, false);
		TenantMix.Alone alone = TenantMix.NOISY.alone(w.trace(), TenantMix.NOISY.indexOf(TenantMix.QUIET), 300, 3);
		TenantRun quietAlone = Simulation.run(Workload.of(alone.trace()), null, dualmap, config(alone.warmup()),
				alone.rateFor(w.trace(), rate), TenantMix.NOISY, on, false);
		assertThat(off.result().attainment()).as("past capacity").isLessThan(0.85);
		double attainmentAlone = quietAlone.tenant(TenantMix.QUIET).attainment();
		assertThat(attainmentAlone).isGreaterThan(0.99);
		assertThat(off.tenant(TenantMix.QUIET).attainment()).as("the noisy neighbour hurts without fairness")
			.isLessThan(0.9 * attainmentAlone);
		assertThat(fair.tenant(TenantMix.QUIET).attainment()).isGreaterThanOrEqualTo(0.95 * attainmentAlone);
		// The noisy tenant gets what the quiet one leaves of the pool's service.
		long pool = off.tenants().stream().mapToLong(TenantRun.TenantResult::servedTokens).sum();
		long quietDemand = fair.tenant(TenantMix.QUIET).demandTokens();
		double noisyFair = pool - Math.min(quietDemand, pool / 2.0);
		assertThat(fair.tenant(TenantMix.NOISY_TENANT).servedTokens())
			.isGreaterThanOrEqualTo((long) (0.95 * noisyFair));
		assertThat(fair.tenant(TenantMix.NOISY_TENANT).servedTokens())
			.isLessThan(off.tenant(TenantMix.NOISY_TENANT).servedTokens());
	}

}

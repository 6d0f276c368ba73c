package io.github.dualmap.sim;

import java.time.Duration;
import java.util.stream.IntStream;

import io.github.dualmap.core.DispatchMode;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.RoutingPolicies;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.engine.EngineProfile;
import io.github.dualmap.sim.trace.SyntheticWorkload;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The simulator driving {@link io.github.dualmap.core.DispatchQueues} like the gateway.
 */
class LateBindingSimulationTests {

	private static final SchedulerSettings SETTINGS = SchedulerSettings.custom().blockTokens(512).build();

	private static SimulationConfig config(int instances) {
		return SimulationConfig.builder()
			.instances(instances)
			.routers(1)
			.slo(Duration.ofSeconds(5))
			.networkDelay(Duration.ofMillis(1))
			.warmup(200)
			.seed(3)
			.settings(SETTINGS)
			.instanceModels(EngineInstance.factory(EngineProfile.h100_8b(), 512))
			.decisionTimer(() -> 0L)
			.build();
	}

	@Test
	void dualMapRowsRunBehindTheQueuesAndPeersDispatchAtOnce() {
		assertThat(PolicySpec.named("dualmap").queue().mode()).isEqualTo(DispatchMode.QUEUE);
		assertThat(PolicySpec.named("dualmap").queue().maxMigrations()).isPositive();
		assertThat(PolicySpec.named("dualmap-no-rebalance").queue().maxMigrations()).isZero();
		assertThat(PolicySpec.named(PolicySpec.DUALMAP_PASS_THROUGH).queue().mode())
			.isEqualTo(DispatchMode.PASS_THROUGH);
		assertThat(PolicySpec.named("sglang-cache-aware").queue()).isNull();
		SchedulerSettings fixed = PolicySpec.named(PolicySpec.DUALMAP_FIXED_DEPTH).settingsFor(SETTINGS);
		assertThat(fixed.maxPrefixDepth()).isEqualTo(SETTINGS.minPrefixDepth());
		assertThat(PolicySpec.named("dualmap").settingsFor(SETTINGS))
			.isEqualTo(SETTINGS.forDispatchMode(DispatchMode.QUEUE));
		assertThat(PolicySpec.names()).contains(PolicySpec.DUALMAP_PASS_THROUGH).containsAll(RoutingPolicies.names());
	}

	@Test
	void aPeerNamedWithTheQueueSuffixRunsBehindTheQueueWithoutMoves() {
		QueueSettings base = QueueSettings.custom().maxWaitShare(0.2).build();
		PolicySpec queued = PolicySpec.named("dynamo-cost" + PolicySpec.QUEUED_SUFFIX, base);
		assertThat(queued.name()).isEqualTo("dynamo-cost+queue");
		assertThat(queued.queue()).satisfies(q -> {
			assertThat(q.mode()).isEqualTo(DispatchMode.QUEUE);
			assertThat(q.maxMigrations()).isZero();
			assertThat(q.maxWaitShare()).isEqualTo(0.2);
		});
		assertThat(queued.create(SETTINGS)).isInstanceOf(RoutingPolicies.create("dynamo-cost", SETTINGS).getClass());
		assertThat(queued.dispatchLabel()).isEqualTo("queue, no migration");
		assertThatIllegalArgumentException().isThrownBy(() -> PolicySpec.named("dualmap+queue"))
			.withMessageContaining("known peers: ")
			.withMessageNotContaining("dualmap-");
		assertThatIllegalArgumentException().isThrownBy(() -> PolicySpec.named("nope+queue"))
			.withMessageContaining("'nope+queue'");
	}

	@Test
	void theQueueTurnsAwayAPeersRequestsItWouldOtherwiseSendAtOnce() {
		Workload w = Workload.of(SyntheticWorkload.TENANTS.generate(900, 4));
		QueueSettings tiny = QueueSettings.custom().maxQueuedPerPool(1).maxPrefillRequests(1).build();
		RunResult direct = Simulation.run(w, PolicySpec.named("least-loaded", tiny), config(2), 40, false);
		RunResult queued = Simulation.run(w, PolicySpec.named("least-loaded+queue", tiny), config(2), 40, false);
		assertThat(direct.requests().rejected()).isZero();
		assertThat(direct.prompts().rejected()).isZero();
		assertThat(queued.requests().rejected()).isPositive();
		assertThat(queued.prompts().rejected()).isGreaterThanOrEqualTo(queued.requests().rejected());
		assertThat(queued.migrations()).isZero();
	}

	@Test
	void passThroughQueuesDecideExactlyLikeDirectDispatch() {
		Workload w = Workload.of(SyntheticWorkload.TENANTS.generate(900, 4));
		PolicySpec direct = new PolicySpec("dualmap", s -> RoutingPolicies.create("dualmap", s));
		RunResult a = Simulation.run(w, direct, config(4), 12, false);
		RunResult b = Simulation.run(w, PolicySpec.named(PolicySpec.DUALMAP_PASS_THROUGH), config(4), 12, false);
		assertThat(b.ttftSeconds()).containsExactly(a.ttftSeconds());
		assertThat(b.hitRate()).isEqualTo(a.hitRate());
		assertThat(b.migrations()).isZero();
	}

	@Test
	void overloadedQueueMigratesOffHotspots() {
		// Near this workload's capacity on four instances: queues build and hotspots
		// form.
		Workload w = Workload.of(SyntheticWorkload.RAG.generate(1500, 7));
		RunResult r = Simulation.run(w, PolicySpec.named("dualmap", QueueSettings.custom().moveLateOnly(false).build()),
				config(4), 130, false);
		assertThat(r.migrations()).isPositive();
		RunResult none = Simulation.run(w, PolicySpec.named("dualmap-no-rebalance"), config(4), 130, false);
		assertThat(none.migrations()).isZero();
	}

	@Test
	void queueRejectionsAreMisses() {
		Workload w = Workload.of(SyntheticWorkload.TENANTS.generate(900, 4));
		QueueSettings tiny = QueueSettings.custom().maxQueuedPerPool(1).maxPrefillRequests(1).build();
		PolicySpec spec = new PolicySpec("dualmap-tiny-queue", s -> RoutingPolicies.create("dualmap", s), tiny);
		RunResult r = Simulation.run(w, spec, config(2), 40, false);
		assertThat(r.requests().rejected()).isPositive();
		assertThat(r.requests().withinSlo()).isLessThanOrEqualTo(r.requests().measured() - r.requests().rejected());
		// Prompt tokens of the measured requests split like the requests do.
		long measured = w.trace().requests().stream().skip(200).mapToLong(t -> t.inputTokens()).sum();
		assertThat(r.prompts().measured()).isEqualTo(measured);
		assertThat(r.prompts().rejected()).isPositive();
		assertThat(r.prompts().withinSlo() + r.prompts().rejected()).isLessThanOrEqualTo(measured);
		assertThat(r.prompts().withinSloShare()).isLessThan(1.0);
		// The served percentiles leave out the rejected, whose censored waits (up to the
		// end of the run) make the run's p99.
		assertThat(r.served().count()).isPositive()
			.isLessThanOrEqualTo(r.requests().measured() - r.requests().rejected());
		assertThat(r.served().count()).isGreaterThanOrEqualTo(r.requests().withinSlo());
		assertThat(r.requests().rejected()).isGreaterThan(r.requests().measured() / 100);
		assertThat(r.served().ttftP99Seconds()).isLessThan(r.ttft().p99Seconds());
		assertThat(r.served().ttftP90Seconds()).isLessThanOrEqualTo(r.served().ttftP99Seconds());
		// A rejected request was sent to no instance.
		assertThat(r.requestsPerInstance()).hasSize(2);
		assertThat(IntStream.of(r.requestsPerInstance()).sum()).isPositive()
			.isLessThanOrEqualTo(r.requests().measured() - r.requests().rejected());
	}

	@Test
	void everyMeasuredRequestOfALightRunIsServedThroughTheQueue() {
		Workload w = Workload.of(SyntheticWorkload.TENANTS.generate(700, 5));
		RunResult r = Simulation.run(w, PolicySpec.named("dualmap"), config(4), 2, false);
		assertThat(r.requests().rejected()).isZero();
		assertThat(r.attainment()).isEqualTo(1.0);
		assertThat(r.prompts().withinSloShare()).isEqualTo(1.0);
		assertThat(r.prompts().rejected()).isZero();
		// Everyone was served, so the served percentiles are the run's.
		assertThat(r.served().count()).isEqualTo(r.requests().measured());
		assertThat(r.served().ttftP90Seconds()).isEqualTo(r.ttft().p90Seconds());
		assertThat(r.served().ttftP99Seconds()).isEqualTo(r.ttft().p99Seconds());
		assertThat(r.decisionNanosP99()).isZero();
		assertThat(r.hitRate()).isGreaterThan(0.2);
		// Nobody waited to the wait bound, so the rescue placed nobody.
		assertThat(r.rescueShare()).isZero();
		// Each measured request was released from the queue to one of the four
		// instances, and counts there once.
		assertThat(r.requestsPerInstance()).hasSize(4).doesNotContain(0);
		assertThat(IntStream.of(r.requestsPerInstance()).sum()).isEqualTo(r.requests().measured());
	}

	@Test
	void theRescueSharesAreTheRequestsWhoseFinalPlacementTheRescueMade() {
		// A peer behind the queue near its capacity: requests reach the wait bound on
		// the instance it picked and the rescue places them elsewhere.
		Workload w = Workload.of(SyntheticWorkload.TENANTS.generate(1500, 4));
		RunResult queued = Simulation.run(w, PolicySpec.named("consistent-hash+queue"), config(4), 60, false, false);
		assertThat(queued.judged().rescued()).isPositive()
			.isLessThanOrEqualTo(queued.requests().measured() - queued.requests().rejected());
		assertThat(queued.rescueShare()).isEqualTo((double) queued.judged().rescued() / queued.requests().measured());
		RunResult direct = Simulation.run(w, PolicySpec.named("consistent-hash"), config(4), 60, false, false);
		assertThat(direct.rescueShare()).isZero();
	}

}

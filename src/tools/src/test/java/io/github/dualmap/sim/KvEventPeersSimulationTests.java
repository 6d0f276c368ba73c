package io.github.dualmap.sim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.core.AdmissionHold;
import io.github.dualmap.core.Decision;
import io.github.dualmap.core.DynamoKvPolicy;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.LlmdPrecisePolicy;
import io.github.dualmap.core.Reason;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.engine.EngineProfile;
import io.github.dualmap.sim.trace.SyntheticWorkload;
import io.github.dualmap.sim.trace.Trace;
import io.github.dualmap.sim.trace.TraceRequest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The peer rows that route on engine KV events, hold arrivals in a router queue, or sync
 * their trees across router replicas, run in the simulator.
 */
class KvEventPeersSimulationTests {

	private static final SchedulerSettings SETTINGS = SchedulerSettings.custom().blockTokens(512).build();

	private static final Workload SESSIONS = Workload.of(SyntheticWorkload.SESSIONS.generate(700, 3));

	private static SimulationConfig engines(int instances, int routers) {
		return engines(instances, routers, Duration.ofMillis(1));
	}

	private static SimulationConfig engines(int instances, int routers, Duration networkDelay) {
		return SimulationConfig.builder()
			.instances(instances)
			.routers(routers)
			.slo(Duration.ofSeconds(5))
			.networkDelay(networkDelay)
			.warmup(200)
			.seed(3)
			.settings(SETTINGS)
			.instanceModels(EngineInstance.factory(EngineProfile.h100_8b(), 512))
			.decisionTimer(() -> 0L)
			.build();
	}

	@Test
	void theNewRowsAreKnownAndDispatchWithoutTheGatewayQueue() {
		assertThat(PolicySpec.names()).contains(DynamoKvPolicy.NAME, LlmdPrecisePolicy.NAME);
		assertThat(PolicySpec.names().indexOf(DynamoKvPolicy.NAME))
			.isEqualTo(PolicySpec.names().indexOf("dynamo-cost") + 1);
		assertThat(PolicySpec.named(DynamoKvPolicy.NAME).queue()).isNull();
		assertThat(PolicySpec.named(LlmdPrecisePolicy.NAME).create(SETTINGS)).isInstanceOf(LlmdPrecisePolicy.class);
		// They need events the gateway does not receive: no gateway policy, no +queue
		// row.
		assertThatIllegalArgumentException().isThrownBy(() -> PolicySpec.named("dynamo-kv+queue"));
		assertThat(ScrapeIntervals.of(LlmdPrecisePolicy.NAME)).isEqualTo(Duration.ofMillis(50));
	}

	@Test
	void dynamoKvRunsOnTheEnginesEventsAndFindsTheirCache() {
		RunResult kv = Simulation.run(SESSIONS, PolicySpec.named(DynamoKvPolicy.NAME), engines(2, 1), 4, false, false);
		RunResult rr = Simulation.run(SESSIONS, PolicySpec.named("round-robin"), engines(2, 1), 4, false, false);
		assertThat(kv.requests().measured()).isEqualTo(500);
		assertThat(kv.requests().withinSlo()).isPositive();
		assertThat(kv.hitRate()).isGreaterThan(rr.hitRate());
	}

	@Test
	void llmdPreciseRunsOnTheEnginesEventsBehindItsFlowControl() {
		// No network delay: a held request released while an engine's step ends must not
		// start that engine's next step twice.
		RunResult precise = Simulation.run(SESSIONS, PolicySpec.named(LlmdPrecisePolicy.NAME),
				engines(2, 1, Duration.ZERO), 4, false, false);
		RunResult rr = Simulation.run(SESSIONS, PolicySpec.named("round-robin"), engines(2, 1), 4, false, false);
		assertThat(precise.requests().measured()).isEqualTo(500);
		assertThat(precise.requests().withinSlo()).isPositive();
		assertThat(precise.hitRate()).isGreaterThan(rr.hitRate());
	}

	@Test
	void sglangWithReplicaSyncRunsAcrossRouters() {
		SimulationConfig four = engines(2, 4);
		RunResult apart = Simulation.run(SESSIONS, PolicySpec.named("sglang-cache-aware"), four, 4, false, false);
		RunResult synced = Simulation.run(SESSIONS, PolicySpec.named("sglang-cache-aware"),
				four.withPrefixShareInterval(Duration.ofMillis(50)), 4, false, false);
		assertThat(synced.requests().measured()).isEqualTo(500);
		assertThat(synced.requests().withinSlo()).isPositive();
		assertThat(synced.hitRate()).isGreaterThan(apart.hitRate());
	}

	@Test
	void aRowThatNeedsKvEventsRefusesAnInstanceModelWithout() {
		SimulationConfig fifo = SimulationConfig.builder()
			.instances(2)
			.routers(1)
			.slo(Duration.ofSeconds(5))
			.networkDelay(Duration.ZERO)
			.warmup(200)
			.seed(1)
			.settings(SETTINGS)
			.instanceModels((index, seed) -> new FifoInstance(1_000_000L))
			.decisionTimer(() -> 0L)
			.build();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Simulation.run(SESSIONS, PolicySpec.named(DynamoKvPolicy.NAME), fifo, 1, false))
			.withMessageContaining("KV events");
	}

	@Test
	void heldArrivalsWaitInOrderAndLeaveWhenThePolicyAdmitsThem() {
		// One request in flight at a time: the policy holds while any is in flight, the
		// simulator releases the next one when the last finishes.
		List<TraceRequest> requests = new ArrayList<>();
		for (int i = 0; i < 60; i++) {
			requests.add(new TraceRequest(i * 10.0, 600, 1, new long[] { 2L * i, 2L * i + 1 }));
		}
		Workload w = Workload.of(new Trace("burst", 512, requests));
		List<Integer> order = new ArrayList<>();
		List<Integer> inFlightAtChoice = new ArrayList<>();
		PolicySpec oneAtATime = new PolicySpec("one-at-a-time", settings -> new OneAtATime(order, inFlightAtChoice));
		SimulationConfig fifo = SimulationConfig.builder()
			.instances(2)
			.routers(1)
			.slo(Duration.ofSeconds(60))
			.networkDelay(Duration.ofMillis(1))
			.warmup(10)
			.seed(1)
			.settings(SETTINGS)
			.instanceModels((index, seed) -> new FifoInstance(50_000_000L))
			.decisionTimer(() -> 0L)
			.build();
		RunResult r = Simulation.run(w, oneAtATime, fifo, 100, false, false);
		assertThat(r.requests().measured()).isEqualTo(50);
		assertThat(r.requests().withinSlo()).isEqualTo(50);
		assertThat(inFlightAtChoice).containsOnly(0);
		assertThat(order).isSorted().hasSize(60);
		// Served one after another, 50 ms each: the last waits for all before it.
		assertThat(r.ttft().p99Seconds()).isGreaterThan(2.0);
	}

	@Test
	void aReleaseAtTheEndOfAnEngineStepWithoutNetworkDelayStartsOneNextStep() {
		// The release happens while the simulator handles the step's end (first token and
		// finish seen at once): the released request must not start a second step.
		List<Integer> order = new ArrayList<>();
		RunResult r = Simulation.run(SESSIONS,
				new PolicySpec("one-at-a-time", settings -> new OneAtATime(order, new ArrayList<>())),
				engines(2, 1, Duration.ZERO), 50, false, false);
		// Far too slow for this rate: the run ends once every measured request missed,
		// having served the first ones in order.
		assertThat(order).hasSizeGreaterThan(5).isSorted();
		assertThat(r.requests().measured()).isEqualTo(500);
		assertThat(r.requests().withinSlo()).isLessThan(20);
	}

	/**
	 * Holds arrivals while any request is in flight; sends each to the first instance.
	 */
	private record OneAtATime(List<Integer> order,
			List<Integer> inFlightAtChoice) implements RoutingPolicy, AdmissionHold {

		@Override
		public String name() {
			return "one-at-a-time";
		}

		@Override
		public boolean mustHold(InstancePool pool) {
			return pool.instances().stream().mapToInt(InstanceState::inFlight).sum() > 0;
		}

		@Override
		public Decision choose(RoutingRequest request, InstancePool pool) {
			inFlightAtChoice.add(pool.instances().stream().mapToInt(InstanceState::inFlight).sum());
			order.add(Integer.parseInt(request.id().substring(1)));
			return Decision.of(pool.instances().get(0).id(), Reason.LOAD, request);
		}

	}

}

package io.github.dualmap.sim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.core.AdmissionHold;
import io.github.dualmap.core.Decision;
import io.github.dualmap.core.DynamoKvPolicy;
import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.KvEventFeed;
import io.github.dualmap.core.KvEventIndex;
import io.github.dualmap.core.LlmdPrecisePolicy;
import io.github.dualmap.core.LlmdTokenLoadPolicy;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.core.Reason;
import io.github.dualmap.core.RingMember;
import io.github.dualmap.core.RoutingPolicies;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.core.SmgCacheAwarePolicy;
import io.github.dualmap.core.SmgKvPolicy;
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
	void llmdsTokenLoadProfileIsAGatewayPolicyScrapedAsLlmdDoesWithAQueuedRow() {
		assertThat(RoutingPolicies.exists(LlmdTokenLoadPolicy.NAME)).isTrue();
		assertThat(PolicySpec.named(LlmdTokenLoadPolicy.NAME).queue()).isNull();
		assertThat(ScrapeIntervals.of(LlmdTokenLoadPolicy.NAME)).isEqualTo(Duration.ofMillis(50));
		PolicySpec queued = PolicySpec.named(LlmdTokenLoadPolicy.NAME + PolicySpec.QUEUED_SUFFIX);
		assertThat(queued.queue()).isNotNull();
		assertThat(queued.create(SETTINGS)).isInstanceOf(LlmdTokenLoadPolicy.class);
		// Behind the queue it is scraped as the gateway scrapes.
		assertThat(ScrapeIntervals.of(queued.name())).isEqualTo(ScrapeIntervals.DEFAULT);
	}

	@Test
	void theLlmdVariantRowsAreSimulatorRowsNextToTheirBase() {
		List<String> names = PolicySpec.names();
		assertThat(names.subList(names.indexOf("llmd-scorer"), names.indexOf("llmd-scorer") + 7)).containsExactly(
				"llmd-scorer", PolicySpec.LLMD_OPTIMIZED_BASELINE, PolicySpec.LLMD_SCORER_WHOLE_PROMPT,
				PolicySpec.LLMD_SCORER_NO_PREFIX, LlmdPrecisePolicy.NAME, PolicySpec.LLMD_PRECISE_MIN_MAX,
				PolicySpec.LLMD_PRECISE_NO_FLOW_CONTROL);
		for (String row : List.of(PolicySpec.LLMD_OPTIMIZED_BASELINE, PolicySpec.LLMD_SCORER_WHOLE_PROMPT,
				PolicySpec.LLMD_SCORER_NO_PREFIX, PolicySpec.LLMD_PRECISE_MIN_MAX,
				PolicySpec.LLMD_PRECISE_NO_FLOW_CONTROL)) {
			// Simulator rows only, dispatched at once and scraped as often as their base.
			assertThat(RoutingPolicies.exists(row)).as(row).isFalse();
			assertThat(PolicySpec.named(row).queue()).as(row).isNull();
			assertThat(ScrapeIntervals.of(row)).as(row).isEqualTo(Duration.ofMillis(50));
			assertThatIllegalArgumentException().isThrownBy(() -> PolicySpec.named(row + PolicySpec.QUEUED_SUFFIX));
		}
	}

	@Test
	void theLlmdScorerVariantsWeighTheSharedFirstBlockDifferently() {
		// Every prompt starts with block 0; a served a 2-block prompt, b and c nothing. A
		// 16-block prompt: by default the shared block is 1 of the 8 blocks (4,096
		// tokens)
		// considered and a wins, 2 + 2 x 0.85 + 3 / 8 = 4.075 against 2 + 2 = 4; matching
		// the whole prompt a scores 3.7 + 3 / 16 and without the prefix scorer 3.7.
		long[] chain = new long[16];
		for (int i = 0; i < chain.length; i++) {
			chain[i] = i == 0 ? 0 : 1000 + i;
		}
		PromptBlocks longPrompt = new PromptBlocks(chain, 512, 16 * 512);
		PromptBlocks served = new PromptBlocks(new long[] { 0, 1 }, 512, 2 * 512);
		for (String row : List.of("llmd-scorer", PolicySpec.LLMD_SCORER_WHOLE_PROMPT,
				PolicySpec.LLMD_SCORER_NO_PREFIX)) {
			InstancePool pool = pool();
			RoutingPolicy p = PolicySpec.named(row).create(SETTINGS);
			RoutingRequest first = request("r1", served);
			Decision placed = new Decision("a", Reason.LOAD, 0, served.promptTokens(), -1);
			pool.dispatch(first, placed);
			p.onDispatched(first, placed, pool);
			scrape(pool, "a", 0.15);
			scrape(pool, "b", 0);
			scrape(pool, "c", 0);
			String chosen = p.choose(request("r2", longPrompt), pool).instanceId();
			if (row.equals("llmd-scorer")) {
				assertThat(chosen).as(row).isEqualTo("a");
			}
			else {
				assertThat(chosen).as(row).isIn("b", "c");
			}
		}
	}

	@Test
	void theLlmdPreciseVariantsNormaliseMinMaxOrHoldNothing() {
		// a and b hold the shared first block of an 8-block prompt, c is idle: the
		// absolute score gives a and b 2 x 1/8 + 1 + 0.7 = 1.95 against c's 2; min-max
		// gives them the full 3 + 2 + 1.4 = 6.4 against c's 4.
		long[] chain = { 0, 11, 12, 13, 14, 15, 16, 17 };
		PromptBlocks prompt = new PromptBlocks(chain, 512, 8 * 512);
		for (String row : List.of(LlmdPrecisePolicy.NAME, PolicySpec.LLMD_PRECISE_MIN_MAX,
				PolicySpec.LLMD_PRECISE_NO_FLOW_CONTROL)) {
			InstancePool pool = pool();
			LlmdPrecisePolicy p = (LlmdPrecisePolicy) PolicySpec.named(row).create(SETTINGS);
			KvEventIndex index = new KvEventIndex();
			p.attach(new KvEventFeed(index, r -> r.blocks() == null ? null : r.blocks().chain(), 512, 8192));
			// No metrics yet: a saturated pool, held only with flow control.
			assertThat(p.mustHold(pool)).as(row).isEqualTo(!row.equals(PolicySpec.LLMD_PRECISE_NO_FLOW_CONTROL));
			index.stored("a", 0);
			index.stored("b", 0);
			scrape(pool, "a", 0.3);
			scrape(pool, "b", 0.3);
			scrape(pool, "c", 0);
			String chosen = p.choose(request("r1", prompt), pool).instanceId();
			if (row.equals(PolicySpec.LLMD_PRECISE_MIN_MAX)) {
				assertThat(chosen).as(row).isIn("a", "b");
			}
			else {
				assertThat(chosen).as(row).isEqualTo("c");
			}
		}
	}

	private static InstancePool pool() {
		InstancePool pool = new InstancePool("test", SETTINGS, () -> 0L);
		pool.updateMembership(List.of(new RingMember("a", 1.0), new RingMember("b", 1.0), new RingMember("c", 1.0)));
		return pool;
	}

	private static RoutingRequest request(String id, PromptBlocks blocks) {
		return new RoutingRequest(id, blocks, SETTINGS.defaultSloNanos(), 0L);
	}

	private static void scrape(InstancePool pool, String id, double kvUsage) {
		pool.instance(id).updateEngine(new EngineSnapshot(0L, 0, 0, kvUsage, -1, -1, 0));
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
	void smgKvRunsOnTheEnginesEventsAndHerdsOnTheSharedSystemPrompt() {
		assertThat(PolicySpec.names().indexOf(SmgKvPolicy.NAME))
			.isEqualTo(PolicySpec.names().indexOf(SmgCacheAwarePolicy.NAME) + 1);
		assertThat(PolicySpec.named(SmgKvPolicy.NAME).queue()).isNull();
		assertThatIllegalArgumentException().isThrownBy(() -> PolicySpec.named("smg-kv+queue"));
		// Every session starts with the same two-block system prompt. The events put it
		// on the first instance that served it, the most cached blocks win with no
		// threshold, and the spill gate waits for 64 requests over the mean: at this
		// rate nothing leaves that instance.
		RunResult kv = Simulation.run(SESSIONS, PolicySpec.named(SmgKvPolicy.NAME), engines(3, 1), 2, false, false);
		RunResult rr = Simulation.run(SESSIONS, PolicySpec.named("round-robin"), engines(3, 1), 2, false, false);
		assertThat(kv.requests().measured()).isEqualTo(500);
		assertThat(kv.requestsPerInstance()).containsExactlyInAnyOrder(500, 0, 0);
		assertThat(kv.hitRate()).isGreaterThan(rr.hitRate());
	}

	@Test
	void sglangWithReplicaSyncRunsAcrossRouters() {
		SimulationConfig four = engines(2, 4);
		for (String row : List.of("sglang-cache-aware", SmgCacheAwarePolicy.NAME)) {
			RunResult apart = Simulation.run(SESSIONS, PolicySpec.named(row), four, 4, false, false);
			RunResult synced = Simulation.run(SESSIONS, PolicySpec.named(row),
					four.withPrefixShareInterval(Duration.ofMillis(50)), 4, false, false);
			assertThat(synced.requests().measured()).as(row).isEqualTo(500);
			assertThat(synced.requests().withinSlo()).as(row).isPositive();
			assertThat(synced.hitRate()).as(row).isGreaterThan(apart.hitRate());
		}
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

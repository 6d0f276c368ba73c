package io.github.dualmap.sim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.Reason;
import io.github.dualmap.core.RoutingPolicies;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.engine.EngineProfile;
import io.github.dualmap.sim.report.ResultsJson;
import io.github.dualmap.sim.trace.SyntheticWorkload;
import io.github.dualmap.sim.trace.Trace;
import io.github.dualmap.sim.trace.TraceRequest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assertions.withinPercentage;

class SimulationTests {

	private static final SchedulerSettings SETTINGS = SchedulerSettings.custom().blockTokens(512).build();

	/**
	 * Evenly spaced arrivals, one a second before scaling, each with a prompt of its own.
	 */
	private static Trace evenlySpaced(int n) {
		List<TraceRequest> requests = new ArrayList<>();
		for (int i = 0; i < n; i++) {
			requests.add(new TraceRequest(i * 1000.0, 600, 1, new long[] { 2L * i, 2L * i + 1 }));
		}
		return new Trace("even", 512, requests);
	}

	private static SimulationConfig fifoConfig(int instances, int routers, Duration service, Duration slo) {
		return SimulationConfig.builder()
			.instances(instances)
			.routers(routers)
			.slo(slo)
			.networkDelay(Duration.ZERO)
			.warmup(200)
			.seed(1)
			.settings(SETTINGS)
			.instanceModels((index, seed) -> new FifoInstance(service.toNanos()))
			.decisionTimer(() -> 0L)
			.build();
	}

	@Test
	void capacityOfOneFifoInstanceIsOnePerServiceTime() {
		Workload w = Workload.of(evenlySpaced(1000));
		SimulationConfig config = fifoConfig(1, 1, Duration.ofMillis(100), Duration.ofMillis(150));
		PolicySpec rr = PolicySpec.named("round-robin");
		CapacitySearch.Outcome o = new CapacitySearch(1, 0.02, 10)
			.search(rate -> Simulation.run(w, rr, config, rate, false), () -> {
			});
		assertThat(o.capacity()).isCloseTo(10.0, withinPercentage(2));
		assertThat(o.atCapacity()).isNotNull();
		assertThat(o.atCapacity().ttft().p99Seconds()).isCloseTo(0.1, withinPercentage(1));
		// Every evaluated rate is reported; those above the capacity fail.
		assertThat(o.points()).extracting(RunResult::rate).isSorted().contains(1.0, 2.0, 4.0, 8.0, 16.0);
		assertThat(o.points()).filteredOn(r -> r.rate() > 10.1).allMatch(r -> !r.passes(0.9));
		// A hopeless rate stops early instead of draining its queue.
		assertThat(o.points().get(o.points().size() - 1).requests().stoppedEarly()).isTrue();
	}

	@Test
	void aSearchKeepsTheRequestLogOfItsRunAtCapacityOnly() {
		Workload w = Workload.of(evenlySpaced(1000));
		SimulationConfig config = fifoConfig(1, 1, Duration.ofMillis(100), Duration.ofMillis(150)).toBuilder()
			.requestLog(true)
			.build();
		PolicySpec rr = PolicySpec.named("round-robin");
		assertThat(Simulation.run(w, rr, config, 4, false).requestLog()).isNotNull();
		assertThat(Simulation.run(w, rr, fifoConfig(1, 1, Duration.ofMillis(100), Duration.ofMillis(150)), 4, false)
			.requestLog()).isNull();
		CapacitySearch.Outcome o = new CapacitySearch(1, 0.02, 10)
			.search(rate -> Simulation.run(w, rr, config, rate, false), () -> {
			});
		assertThat(o.atCapacity()).isNotNull();
		RequestLog log = o.atCapacity().requestLog();
		assertThat(log).isNotNull();
		assertThat(log.entries()).hasSize(o.atCapacity().requests().measured());
		assertThat(log.entries()).filteredOn(e -> e.outcome() == RequestLog.Outcome.WITHIN_SLO)
			.hasSize(o.atCapacity().requests().withinSlo());
		assertThat(o.points()).hasSizeGreaterThan(3)
			.filteredOn(r -> r != o.atCapacity())
			.allMatch(r -> r.requestLog() == null);
	}

	@Test
	void aRunToldNotToStopRunsEveryMeasuredRequestAndTheSearchFindsTheSameCapacity() {
		Workload w = Workload.of(evenlySpaced(1000));
		SimulationConfig config = fifoConfig(1, 1, Duration.ofMillis(100), Duration.ofMillis(150));
		PolicySpec rr = PolicySpec.named("round-robin");
		RunResult stopped = Simulation.run(w, rr, config, 20, false);
		RunResult whole = Simulation.run(w, rr, config, 20, false, false);
		assertThat(stopped.requests().stoppedEarly()).isTrue();
		assertThat(whole.requests().stoppedEarly()).isFalse();
		assertThat(whole.requests().measured()).isEqualTo(stopped.requests().measured());
		// Twice the capacity: the queue only grows, so the whole run's tail is far longer
		// than the stopped run's, whose TTFTs were censored where it stopped.
		assertThat(whole.ttft().p99Seconds()).isGreaterThan(stopped.ttft().p99Seconds() * 2);
		assertThat(whole.attainment()).isLessThan(0.1);
		// The requests the stopped run never saw arrive are not in its percentiles (they
		// were counted as a wait of 0, which put its median at 0).
		assertThat(stopped.ttft().p50Seconds()).isPositive();
		assertThat(stopped.ttftSeconds()).hasSizeLessThan(stopped.requests().measured());
		CapacitySearch.Outcome o = new CapacitySearch(1, 0.02, 10)
			.search(rate -> Simulation.run(w, rr, config, rate, false, false), () -> {
			});
		assertThat(o.capacity()).isCloseTo(10.0, withinPercentage(2));
		assertThat(o.points()).noneMatch(r -> r.requests().stoppedEarly());
	}

	@Test
	void capacityIsJudgedAtTheTargetAttainmentAskedFor() {
		Workload w = Workload.of(evenlySpaced(1000));
		// Every request takes 100 ms on one FIFO instance; about 7 % of them have a 50 ms
		// objective they can never meet, so attainment is about 93 % up to 10 req/s.
		SimulationConfig config = fifoConfig(1, 1, Duration.ofMillis(100), Duration.ofMillis(150))
			.withSloClasses(SloClasses.parse("tight=50ms:0.07"));
		PolicySpec rr = PolicySpec.named("round-robin");
		RunResult at5 = Simulation.run(w, rr, config, 5, false);
		assertThat(at5.attainment()).isBetween(0.9, 0.95);
		CapacitySearch.Outcome at90 = new CapacitySearch(1, 0.02, 10, 0.9)
			.search(rate -> Simulation.run(w, rr, config, rate, false), () -> {
			});
		assertThat(at90.capacity()).isCloseTo(10.0, withinPercentage(2));
		SimulationConfig strict = config.withTargetAttainment(0.95);
		CapacitySearch.Outcome at95 = new CapacitySearch(1, 0.02, 10, 0.95)
			.search(rate -> Simulation.run(w, rr, strict, rate, false), () -> {
			});
		assertThat(at95.capacity()).isZero();
		// A run judged at 95 % stops once more than 5 % have missed.
		assertThat(Simulation.run(w, rr, strict, 5, false).requests().stoppedEarly()).isTrue();
		assertThat(at5.requests().stoppedEarly()).isFalse();
	}

	/**
	 * A run at {@code rate} in which 95 % of 100 requests meet the SLO up to 10 req/s (50
	 * % beyond), and those requests hold 90 % of the prompt tokens up to 6 req/s (70 %
	 * beyond): from 6 to 10 req/s the misses are the long prompts.
	 */
	private static RunResult shedsLongPromptsFrom6(double rate) {
		int within = rate <= 10 ? 95 : 50;
		long tokens = rate <= 6 ? 900_000 : 700_000;
		return RunResult.builder("p", rate)
			.requests(100, within, 0, false)
			.prompts(new RunResult.PromptTokens(1_000_000, tokens, 0))
			.build();
	}

	@Test
	void aPromptTokenTargetJudgesTheWorkServedAsWellAsTheRequests() {
		CapacitySearch.Outcome requests = new CapacitySearch(1, 0.02, 10).search(SimulationTests::shedsLongPromptsFrom6,
				() -> {
				});
		assertThat(requests.capacity()).isCloseTo(10.0, withinPercentage(2));
		CapacitySearch.Outcome work = new CapacitySearch(1, 0.02, 10, 0.9, 0.8)
			.search(SimulationTests::shedsLongPromptsFrom6, () -> {
			});
		assertThat(work.capacity()).isCloseTo(6.0, withinPercentage(2));
		assertThat(work.atCapacity().prompts().withinSloShare()).isEqualTo(0.9);
		// The configuration's verdict for a single rate is the same rule.
		SimulationConfig config = fifoConfig(1, 1, Duration.ofMillis(100), Duration.ofMillis(150));
		assertThat(config.promptTokenTarget()).isZero();
		assertThat(config.passes(shedsLongPromptsFrom6(8))).isTrue();
		SimulationConfig strict = config.withPromptTokenTarget(0.8).withLoadSharing(false);
		assertThat(strict.passes(shedsLongPromptsFrom6(8))).isFalse();
		assertThat(strict.passes(shedsLongPromptsFrom6(5))).isTrue();
		// Every wither keeps the rest of the configuration.
		assertThat(strict.withTargetAttainment(0.95).withDecisionTimer(() -> 1L).withPrefixShareInterval(null))
			.satisfies(c -> {
				assertThat(c.promptTokenTarget()).isEqualTo(0.8);
				assertThat(c.shareLoad()).isFalse();
				assertThat(c.targetAttainment()).isEqualTo(0.95);
			});
		assertThatThrownBy(() -> config.withPromptTokenTarget(1.5)).hasMessageContaining("promptTokenTarget");
		assertThatThrownBy(() -> new CapacitySearch(1, 0.02, 10, 0.9, -0.1)).hasMessageContaining("promptTokenTarget");
	}

	@Test
	void overloadedRunCountsUnfinishedRequestsAsMisses() {
		Workload w = Workload.of(evenlySpaced(400));
		RunResult r = Simulation.run(w, PolicySpec.named("round-robin"),
				fifoConfig(1, 1, Duration.ofMillis(100), Duration.ofMillis(150)), 20, false);
		assertThat(r.requests().measured()).isEqualTo(200);
		assertThat(r.attainment()).isLessThan(0.1);
		// Stopped early: the TTFTs are those of the requests that had arrived, censored.
		assertThat(r.requests().stoppedEarly()).isTrue();
		assertThat(r.ttftSeconds()).hasSizeBetween(1, 200).isSorted();
	}

	@Test
	void eachInstanceCountsTheMeasuredRequestsSentToItAndNoneTurnedAway() {
		Workload w = Workload.of(evenlySpaced(1000));
		SimulationConfig config = fifoConfig(4, 1, Duration.ofMillis(10), Duration.ofSeconds(1));
		RunResult even = Simulation.run(w, PolicySpec.named("round-robin"), config, 5, false);
		// 800 measured requests in turn over four instances, the warm-up's 200 not
		// counted.
		assertThat(even.requests().measured()).isEqualTo(800);
		assertThat(even.requestsPerInstance()).containsExactly(200, 200, 200, 200);
		// Every measured request to engine-002 but one in four, which no instance takes.
		PolicySpec pinned = new PolicySpec("third-or-none", settings -> new ThirdOrNonePolicy());
		RunResult r = Simulation.run(w, pinned, config, 5, false, false);
		assertThat(r.requests().rejected()).isEqualTo(200);
		assertThat(r.requestsPerInstance()).containsExactly(0, 0, 600, 0);
	}

	@Test
	void eachRequestIsMeasuredAgainstTheObjectiveOfItsClass() {
		Workload w = Workload.of(evenlySpaced(1000));
		// One FIFO instance, 100 ms per request, 5 req/s: every TTFT is exactly 100 ms.
		SimulationConfig config = fifoConfig(1, 1, Duration.ofMillis(100), Duration.ofMillis(150))
			.withSloClasses(SloClasses.parse("tight=50ms:0.05"));
		RunResult r = Simulation.run(w, PolicySpec.named("round-robin"), config, 5, false);
		assertThat(r.classes()).extracting(RunResult.ClassResult::name).containsExactly("tight", "default");
		RunResult.ClassResult tight = r.classes().get(0);
		RunResult.ClassResult rest = r.classes().get(1);
		assertThat(tight.measured() + rest.measured()).isEqualTo(r.requests().measured());
		// 5 % of 800 (more would miss past the 10 % that stops a run early).
		assertThat(tight.measured()).isCloseTo(40, withinPercentage(40));
		assertThat(r.requests().stoppedEarly()).isFalse();
		assertThat(tight.withinSlo()).isZero();
		assertThat(tight.sloSeconds()).isEqualTo(0.05);
		assertThat(rest.withinSlo()).isEqualTo(rest.measured());
		assertThat(r.requests().withinSlo()).isEqualTo(rest.measured());
		assertThat(tight.ttftP90Seconds()).isCloseTo(0.1, withinPercentage(1));
		// Without classes nothing is reported per class.
		assertThat(Simulation
			.run(w, PolicySpec.named("round-robin"), fifoConfig(1, 1, Duration.ofMillis(100), Duration.ofMillis(150)),
					5, false)
			.classes()).isEmpty();
	}

	@Test
	void aClassWithItsOwnPriorityBandIsServedFirstPastCapacity() {
		// Two engines at about twice what they serve in time: a class in a band of its
		// own goes first through the same dispatch queues the gateway runs. The band
		// orders the gateway's queue, not the engines' own: past capacity the engines'
		// KV caches are full of decoding requests, and a request released behind others
		// waits in its engine's queue for blocks, so the band shows in the class's
		// attainment and its p90, not in its slowest percent.
		Workload w = Workload.of(SyntheticWorkload.TENANTS.generate(1500, 5));
		RunResult same = Simulation.run(w, PolicySpec.named("dualmap"),
				engineConfig(2, 1, 5).withSloClasses(SloClasses.parse("interactive=5s:0.3")), 40, false, false);
		RunResult banded = Simulation.run(w, PolicySpec.named("dualmap"),
				engineConfig(2, 1, 5).withSloClasses(SloClasses.parse("interactive=5s:0.3:1")), 40, false, false);
		RunResult.ClassResult sameInteractive = same.classes().get(0);
		RunResult.ClassResult sameRest = same.classes().get(1);
		RunResult.ClassResult bandedInteractive = banded.classes().get(0);
		RunResult.ClassResult bandedRest = banded.classes().get(1);
		assertThat(sameInteractive.attainment()).isLessThan(0.8).isCloseTo(sameRest.attainment(), within(0.1));
		assertThat(bandedInteractive.attainment()).isGreaterThan(0.95);
		assertThat(bandedInteractive.ttftP90Seconds()).isLessThan(5).isLessThan(sameInteractive.ttftP90Seconds() / 4);
		assertThat(bandedRest.attainment()).isLessThan(sameRest.attainment());
	}

	@Test
	void sameSeedGivesIdenticalResults() {
		Workload w = Workload.of(SyntheticWorkload.TENANTS.generate(700, 5));
		SimulationConfig config = engineConfig(4, 2, 5);
		List<PolicySpec> policies = List.of(PolicySpec.named("dualmap"), PolicySpec.named("least-loaded"),
				PolicySpec.named("consistent-hash"));
		BenchmarkReport a = new CapacityBenchmark(w, config, 2).atRate(policies, 6, () -> {
		});
		BenchmarkReport b = new CapacityBenchmark(w, config, 1).atRate(policies, 6, () -> {
		});
		assertThat(ResultsJson.toJson(a)).isEqualTo(ResultsJson.toJson(b));
		for (int i = 0; i < policies.size(); i++) {
			assertThat(a.policies().get(i).atFixedRate().ttftSeconds())
				.containsExactly(b.policies().get(i).atFixedRate().ttftSeconds());
		}
		assertThat(a.policies().get(0).atFixedRate().hitRate()).isGreaterThan(0.2);
	}

	@Test
	void otherSeedOfARandomWorkloadGivesOtherResults() {
		SimulationConfig config = engineConfig(4, 1, 5);
		List<PolicySpec> policies = List.of(PolicySpec.named("dualmap"));
		BenchmarkReport a = new CapacityBenchmark(Workload.of(SyntheticWorkload.RAG.generate(700, 1)), config, 1)
			.atRate(policies, 6, () -> {
			});
		BenchmarkReport b = new CapacityBenchmark(Workload.of(SyntheticWorkload.RAG.generate(700, 2)), config, 1)
			.atRate(policies, 6, () -> {
			});
		assertThat(a.policies().get(0).atFixedRate().ttftSeconds())
			.isNotEqualTo(b.policies().get(0).atFixedRate().ttftSeconds());
	}

	@Test
	void routerReplicasEachRouteTheirShareWithTheirOwnPolicy() {
		Workload w = Workload.of(SyntheticWorkload.TENANTS.generate(900, 2));
		List<AtomicInteger> perRouter = new ArrayList<>();
		PolicySpec counting = new PolicySpec("counting-least-loaded", settings -> {
			AtomicInteger count = new AtomicInteger();
			perRouter.add(count);
			return new CountingPolicy(RoutingPolicies.create("least-loaded", settings), count);
		});
		RunResult r = Simulation.run(w, counting, engineConfig(4, 3, 9), 4, true);
		assertThat(perRouter).hasSize(3);
		assertThat(perRouter).allSatisfy(c -> assertThat(c.get()).isEqualTo(300));
		assertThat(r.requests().measured()).isEqualTo(700);
		assertThat(r.attainment()).isGreaterThan(0.9);
		assertThat(r.timeline()).isNotNull();
		assertThat(r.timeline().load()).hasNumberOfRows(4);
	}

	@Test
	void theTimelineSamplesEveryEngineAndWhatTheRoutersHoldForIt() {
		Workload w = Workload.of(SyntheticWorkload.RAG.generate(1500, 3));
		SimulationConfig config = engineConfig(3, 2, 4);
		for (String name : List.of("dualmap", "least-loaded")) {
			RunResult.Timeline t = Simulation.run(w, PolicySpec.named(name), config, 150, true, false).timeline();
			assertThat(t).isNotNull();
			assertThat(t.instances()).containsExactly("engine-000", "engine-001", "engine-002");
			int samples = t.seconds().length;
			assertThat(samples).isGreaterThan(10);
			int running = 0;
			int queued = 0;
			int exact = 0;
			for (int k = 0; k < 3; k++) {
				for (int s = 0; s < samples; s++) {
					int inEngine = t.running()[k][s] + t.waiting()[k][s];
					assertThat(t.load()[k][s]).isEqualTo(inEngine);
					// Sent before it arrives, seen to end after it ends.
					assertThat(t.inFlight()[k][s]).as("%s %d %d", name, k, s).isGreaterThanOrEqualTo(inEngine);
					exact += t.inFlight()[k][s] == inEngine ? 1 : 0;
					assertThat(t.kvUsage()[k][s]).isBetween(0.0, 1.0);
					if (s > 0) {
						assertThat(t.preemptions()[k][s]).isGreaterThanOrEqualTo(t.preemptions()[k][s - 1]);
					}
					running += t.running()[k][s] > 0 ? 1 : 0;
					queued += t.queued()[k][s];
				}
			}
			assertThat(running).as(name).isGreaterThan(samples);
			assertThat(exact).as(name).isGreaterThan(samples * 3 / 2);
			if (name.equals("dualmap")) {
				assertThat(queued).as("requests held in the queues").isPositive();
			}
			else {
				assertThat(queued).as("no queues").isZero();
			}
		}
	}

	@Test
	void engineStateShowsCongestionOnlyWhenTheCacheIsTooSmall() {
		Workload w = Workload.of(SyntheticWorkload.SESSIONS.generate(700, 3));
		List<PolicySpec> policy = List.of(PolicySpec.named("least-loaded"));
		EngineProfile roomy = EngineProfile.h100_8b();
		EngineProfile cramped = roomy.withKvCapacityTokens(48_000);
		RunResult light = new CapacityBenchmark(w, engineConfig(2, 1, 3, roomy), 1).atRate(policy, 12, () -> {
		}).policies().get(0).atFixedRate();
		RunResult squeezed = new CapacityBenchmark(w, engineConfig(2, 1, 3, cramped), 1).atRate(policy, 12, () -> {
		}).policies().get(0).atFixedRate();

		RunResult.EngineLoad roomyLoad = light.engines();
		assertThat(roomyLoad.runningPerInstance()).isGreaterThan(0);
		assertThat(roomyLoad.kvUsageMean()).isGreaterThan(0).isLessThanOrEqualTo(roomyLoad.kvUsagePeak());
		assertThat(roomyLoad.preemptions()).isZero();

		RunResult.EngineLoad crampedLoad = squeezed.engines();
		assertThat(crampedLoad.kvUsagePeak()).isLessThanOrEqualTo(1.0).isGreaterThan(roomyLoad.kvUsagePeak());
		assertThat(crampedLoad.preemptions()).isPositive();
		assertThat(crampedLoad.evictedBlocks()).isGreaterThan(roomyLoad.evictedBlocks());
		assertThat(squeezed.hitRate()).isLessThan(light.hitRate());
	}

	@Test
	void modelsWithoutACacheReportNoEngineEvents() {
		RunResult r = Simulation.run(Workload.of(evenlySpaced(400)), PolicySpec.named("round-robin"),
				fifoConfig(2, 1, Duration.ofMillis(100), Duration.ofSeconds(1)), 5, false);
		assertThat(r.engines().preemptions()).isZero();
		assertThat(r.engines().evictedBlocks()).isZero();
	}

	@Test
	void replicaSyncShowsEveryReplicaWhatTheOthersSentOnceTheirNextFlushArrives() {
		// Every request carries the same first block; two replicas take turns, one
		// request a second.
		List<TraceRequest> requests = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			requests.add(new TraceRequest(i * 1000.0, 1024, 1, new long[] { 7L, 1000L + i }));
		}
		Workload w = Workload.of(new Trace("shared-first-block", 512, requests));
		// No sync; a flush well inside the gap; a flush interval longer than the gap.
		Duration[] intervals = { null, Duration.ofMillis(50), Duration.ofSeconds(10) };
		int[] secondSees = { 0, 1, 0 };
		for (int c = 0; c < intervals.length; c++) {
			List<Integer> seen = new ArrayList<>();
			PolicySpec firstInstance = new PolicySpec("first-instance", settings -> new SeenBlocksPolicy(seen));
			SimulationConfig config = SimulationConfig.builder()
				.instances(2)
				.routers(2)
				.slo(Duration.ofSeconds(1))
				.networkDelay(Duration.ofMillis(5))
				.warmup(10)
				.seed(1)
				.settings(SETTINGS)
				.instanceModels((index, seed) -> new FifoInstance(1_000_000L))
				.decisionTimer(() -> 0L)
				.prefixShareInterval(intervals[c])
				.build();
			Simulation.run(w, firstInstance, config, 1, false);
			// The first request of each replica finds nothing of its own; the second
			// replica's first request finds the first replica's block only when that
			// replica's flush reached it in time.
			assertThat(seen.get(0)).isZero();
			assertThat(seen.get(1)).as("sync interval %s", intervals[c]).isEqualTo(secondSees[c]);
			assertThat(seen.subList(2, seen.size())).allMatch(n -> n == 1);
		}
		assertThatThrownBy(() -> SimulationConfig.builder()
			.instances(2)
			.routers(2)
			.slo(Duration.ofSeconds(1))
			.networkDelay(Duration.ZERO)
			.warmup(10)
			.seed(1)
			.settings(SETTINGS)
			.instanceModels((index, seed) -> new FifoInstance(1_000_000L))
			.decisionTimer(() -> 0L)
			.prefixShareInterval(Duration.ZERO)
			.build()).hasMessageContaining("prefixShareInterval must be > 0");
	}

	@Test
	void routersScrapeTheEnginesOnPhasesOfTheirOwnUnlessAligned() {
		// Four routers take turns every 100 ms; each decision notes when its router last
		// scraped the instance, within the 500 ms scrape interval.
		List<TraceRequest> requests = new ArrayList<>();
		for (int i = 0; i < 80; i++) {
			requests.add(new TraceRequest(i * 100.0, 1024, 1, new long[] { 1000L + 2 * i, 1001L + 2 * i }));
		}
		Workload w = Workload.of(new Trace("four-routers", 512, requests));
		SimulationConfig staggered = SimulationConfig.builder()
			.instances(1)
			.routers(4)
			.slo(Duration.ofSeconds(60))
			.networkDelay(Duration.ZERO)
			.warmup(10)
			.seed(1)
			.settings(SETTINGS)
			.instanceModels((index, seed) -> new FifoInstance(1_000_000L))
			.decisionTimer(() -> 0L)
			.scrapeInterval(Duration.ofMillis(500))
			.build();
		assertThat(staggered.routerPhases()).isEqualTo(RouterPhases.STAGGERED);
		// Router r of 4 scrapes r/4 of the interval after the run's ticks.
		assertThat(routerPhasesSeen(w, staggered)).containsExactly(0L, 125L, 250L, 375L);
		assertThat(routerPhasesSeen(w, staggered.toBuilder().routerPhases(RouterPhases.ALIGNED).build()))
			.containsExactly(0L, 0L, 0L, 0L);
		// One router scrapes at the ticks either way.
		assertThat(routerPhasesSeen(w, staggered.toBuilder().routers(1).build())).containsExactly(0L);
		assertThatThrownBy(() -> RouterPhases.STAGGERED.offsetNanos(4, 4, 500))
			.hasMessageContaining("router must be in [0, 4)");
	}

	@Test
	void withReplicaSyncEachRouterFlushesOnItsOwnPhaseUnlessAligned() {
		// Two routers take turns every 100 ms, with a 200 ms flush: router 1 flushes at
		// 100, 300, ... ms when staggered, at 200, 400, ... when aligned.
		Workload w = prefillPileUp();
		SimulationConfig staggered = prefillPileUpConfig(Duration.ofMillis(200));
		// Request 2 (router 0, at 200 ms) sees request 1 (router 1, at 100 ms) when
		// router 1 flushed at 100 ms, not when its flush leaves at 200 ms.
		List<long[]> seenStaggered = peerPrefillSeen(w, staggered);
		assertThat(seenStaggered.get(1)).containsExactly(0, 0);
		assertThat(seenStaggered.get(2)).containsExactly(1, 1024);
		List<long[]> seenAligned = peerPrefillSeen(w, staggered.toBuilder().routerPhases(RouterPhases.ALIGNED).build());
		assertThat(seenAligned.get(1)).containsExactly(0, 0);
		assertThat(seenAligned.get(2)).containsExactly(0, 0);
		// Request 3 (router 1, at 300 ms) sees requests 0 and 2 from router 0's flush at
		// 200 ms, which leaves after request 2's release.
		assertThat(seenAligned.get(3)).containsExactly(2, 2048);
		// The next flush of a router on its phase.
		assertThat(RouterPhases.STAGGERED.nextNanos(1, 2, 200, 0)).isEqualTo(100);
		assertThat(RouterPhases.STAGGERED.nextNanos(1, 2, 200, 100)).isEqualTo(300);
		assertThat(RouterPhases.STAGGERED.nextNanos(0, 2, 200, 100)).isEqualTo(200);
		assertThat(RouterPhases.ALIGNED.nextNanos(1, 2, 200, 100)).isEqualTo(200);
	}

	/**
	 * Per router, in the order the routers' policies were made: the one phase within the
	 * scrape interval (milliseconds) at which its decisions found their last scrape.
	 */
	private static List<Long> routerPhasesSeen(Workload w, SimulationConfig config) {
		List<List<Long>> seen = new ArrayList<>();
		PolicySpec scrapeAge = new PolicySpec("first-instance", settings -> {
			List<Long> mine = new ArrayList<>();
			seen.add(mine);
			return new SeenScrapePolicy(mine);
		});
		Simulation.run(w, scrapeAge, config, 10, false);
		List<Long> phases = new ArrayList<>();
		for (List<Long> sampled : seen) {
			assertThat(sampled).hasSizeGreaterThan(10);
			long phase = sampled.get(0) % 500;
			assertThat(sampled).allMatch(ms -> ms % 500 == phase);
			phases.add(phase);
		}
		return phases;
	}

	@Test
	void withReplicaSyncRoutersSeeTheirPeersPrefillFromTheFlushAfterItAndNotWithoutLoadSharing() {
		Workload w = prefillPileUp();
		SimulationConfig synced = prefillPileUpConfig(Duration.ofMillis(50));
		List<long[]> shared = peerPrefillSeen(w, synced);
		// Request 1 (router 1, at 100 ms) sees request 0 (router 0, released at 0 ms,
		// published with its flush at 50 ms); request 2 (router 0, at 200 ms) sees
		// request 1 (router 1's flush at 125 ms); request 3 sees requests 0 and 2.
		assertThat(shared.get(0)).containsExactly(0, 0);
		assertThat(shared.get(1)).containsExactly(1, 1024);
		assertThat(shared.get(2)).containsExactly(1, 1024);
		assertThat(shared.get(3)).containsExactly(2, 2048);
		assertThat(shared.get(29)[0]).isGreaterThan(5);
		assertThat(peerPrefillSeen(w, synced.withLoadSharing(false)))
			.allSatisfy(seen -> assertThat(seen).containsOnly(0));
		assertThat(peerPrefillSeen(w, synced.withLoadSharing(true))).usingRecursiveComparison().isEqualTo(shared);
	}

	/**
	 * Two routers take turns every 100 ms; one FIFO instance serves a request a second,
	 * so every request stays in prefill for seconds.
	 */
	private static Workload prefillPileUp() {
		List<TraceRequest> requests = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			requests.add(new TraceRequest(i * 100.0, 1024, 1, new long[] { 1000L + 2 * i, 1001L + 2 * i }));
		}
		return Workload.of(new Trace("prefill-pile-up", 512, requests));
	}

	/**
	 * {@link #prefillPileUp}'s two routers and instance, with replica sync every
	 * {@code flush}.
	 */
	private static SimulationConfig prefillPileUpConfig(Duration flush) {
		return SimulationConfig.builder()
			.instances(1)
			.routers(2)
			.slo(Duration.ofSeconds(60))
			.networkDelay(Duration.ofMillis(5))
			.warmup(10)
			.seed(1)
			.settings(SETTINGS)
			.instanceModels((index, seed) -> new FifoInstance(1_000_000_000L))
			.decisionTimer(() -> 0L)
			.prefixShareInterval(flush)
			.build();
	}

	/** Per request, its router's view of the instance's prefill at the other router. */
	private static List<long[]> peerPrefillSeen(Workload w, SimulationConfig config) {
		List<long[]> seen = new ArrayList<>();
		PolicySpec spec = new PolicySpec("first-instance", settings -> new RoutingPolicy() {

			@Override
			public String name() {
				return "first-instance";
			}

			@Override
			public Decision choose(RoutingRequest request, InstancePool pool) {
				InstanceState first = pool.instances().iterator().next();
				seen.add(new long[] { first.peerPrefillRequests(), first.peerPrefillTokens() });
				return Decision.of(first.id(), Reason.AFFINITY, request);
			}

		});
		// The trace's own rate: one request every 100 ms.
		Simulation.run(w, spec, config, 10, false, false);
		return seen;
	}

	@Test
	void warmupMustLeaveSomethingToMeasure() {
		Workload w = Workload.of(evenlySpaced(100));
		assertThatThrownBy(() -> Simulation.run(w, PolicySpec.named("round-robin"),
				fifoConfig(1, 1, Duration.ofMillis(1), Duration.ofSeconds(1)), 1, false))
			.hasMessageContaining("warm-up of 200");
		assertThatThrownBy(() -> PolicySpec.named("nope")).hasMessageContaining("unknown policy 'nope'");
	}

	@Test
	void coefficientOfVariation() {
		assertThat(EngineScrapes.coefficientOfVariation(new double[] { 2, 2, 2 })).isZero();
		assertThat(EngineScrapes.coefficientOfVariation(new double[] { 0, 4 })).isEqualTo(1.0);
		assertThat(Measurement.percentile(new double[] { 1, 2, 3, 4 }, 0.5)).isEqualTo(2);
	}

	private static SimulationConfig engineConfig(int instances, int routers, long seed) {
		return engineConfig(instances, routers, seed, EngineProfile.h100_8b());
	}

	private static SimulationConfig engineConfig(int instances, int routers, long seed, EngineProfile profile) {
		return SimulationConfig.builder()
			.instances(instances)
			.routers(routers)
			.slo(Duration.ofSeconds(5))
			.networkDelay(Duration.ofMillis(1))
			.warmup(200)
			.seed(seed)
			.settings(SETTINGS)
			.instanceModels(EngineInstance.factory(profile, 512))
			.decisionTimer(() -> 0L)
			.build();
	}

	/**
	 * Sends every request to the first instance and notes how many of its blocks the
	 * router's shadow index already holds there.
	 */
	private record SeenBlocksPolicy(List<Integer> seen) implements RoutingPolicy {

		@Override
		public String name() {
			return "first-instance";
		}

		@Override
		public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
			InstanceState first = pool.instances().iterator().next();
			this.seen.add(first.shadow().peekMatchedBlocks(request.blocks().chain()));
			return Decision.of(first.id(), Reason.AFFINITY, request);
		}

	}

	/**
	 * Sends every request to the first instance and notes when its router last scraped
	 * that instance's engine (milliseconds of the run's clock), once it has.
	 */
	private record SeenScrapePolicy(List<Long> sampledAtMillis) implements RoutingPolicy {

		@Override
		public String name() {
			return "first-instance";
		}

		@Override
		public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
			InstanceState first = pool.instances().iterator().next();
			if (first.engine() != null) {
				this.sampledAtMillis.add(first.engine().sampledAtNanos() / 1_000_000);
			}
			return Decision.of(first.id(), Reason.AFFINITY, request);
		}

	}

	/**
	 * Sends every request to {@code engine-002}, except one in four (by request id),
	 * which it turns away.
	 */
	private static final class ThirdOrNonePolicy implements RoutingPolicy {

		@Override
		public String name() {
			return "third-or-none";
		}

		@Override
		public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
			int i = Integer.parseInt(request.id().substring(1));
			return i % 4 == 3 ? null : Decision.of("engine-002", Reason.AFFINITY, request);
		}

	}

	private record CountingPolicy(RoutingPolicy delegate, AtomicInteger count) implements RoutingPolicy {

		@Override
		public String name() {
			return "counting-" + delegate.name();
		}

		@Override
		public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
			return delegate.choose(request, pool);
		}

		@Override
		public void onDispatched(RoutingRequest request, Decision decision, InstancePool pool) {
			count.incrementAndGet();
			delegate.onDispatched(request, decision, pool);
		}

		@Override
		public void onFinished(RoutingRequest request, String instanceId, InstancePool pool) {
			delegate.onFinished(request, instanceId, pool);
		}

	}

}

package io.github.dualmap.sim;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.engine.EngineProfile;
import io.github.dualmap.sim.trace.SyntheticWorkload;
import io.github.dualmap.sim.trace.Trace;
import io.github.dualmap.sim.trace.TraceRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ScalingSimulationTests {

	private static final SchedulerSettings SETTINGS = SchedulerSettings.custom().blockTokens(512).build();

	private static final long SECOND = 1_000_000_000L;

	/** One request a second, each with a prompt of its own. */
	private static Workload distinctPrompts(int n) {
		List<TraceRequest> requests = new ArrayList<>();
		for (int i = 0; i < n; i++) {
			requests.add(new TraceRequest(i * 1000.0, 600, 1, new long[] { 2L * i, 2L * i + 1 }));
		}
		return Workload.of(new Trace("distinct", 512, requests));
	}

	private static SimulationConfig fifo(int instances, Duration service) {
		return SimulationConfig.builder()
			.instances(instances)
			.routers(1)
			.slo(Duration.ofSeconds(1))
			.networkDelay(Duration.ofMillis(1))
			.warmup(100)
			.seed(1)
			.settings(SETTINGS)
			.instanceModels((index, seed) -> new FifoInstance(service.toNanos()))
			.decisionTimer(() -> 0L)
			.build();
	}

	@Test
	void newInstancesReceiveRequestsOnlyAfterTheChangeAndNothingIsLost() {
		Workload w = distinctPrompts(800);
		// 4 instances of 10 req/s at 20 req/s: half loaded before, less after.
		ScheduledRun run = Simulation.run(w, PolicySpec.named("consistent-hash"), fifo(4, Duration.ofMillis(100)), 20,
				MembershipSchedule.parse("50%:+2", 4));
		assertThat(run.changeNanos()).hasSize(1);
		long change = run.changeNanos()[0];
		// 50 % of the arrival span: request 399.5 of 800 at 20 req/s.
		assertThat(change).isEqualTo(Math.round(0.5 * 799 * SECOND / 20));
		assertThat(run.instanceIds()).containsExactly("engine-000", "engine-001", "engine-002", "engine-003",
				"engine-004", "engine-005");
		int toNewBefore = 0;
		int toNewAfter = 0;
		for (int i = 0; i < w.size(); i++) {
			// Nothing lost: every request was placed and got its first token.
			assertThat(run.instance()[i]).as("request %d", i).isNotNegative();
			assertThat(run.ttftNanos()[i]).as("request %d", i).isNotNegative();
			if (run.sentToNewInstance(i)) {
				if (run.arrivalNanos()[i] < change) {
					toNewBefore++;
				}
				else {
					toNewAfter++;
				}
			}
		}
		assertThat(toNewBefore).isZero();
		// Two of six instances own about a third of the ring.
		assertThat(toNewAfter).isBetween(60, 250);
		assertThat(run.result().requests().measured()).isEqualTo(700);
		assertThat(run.result().attainment()).isEqualTo(1.0);
		assertThat(run.result().timeline().load()).hasNumberOfRows(6);
	}

	@Test
	void removedInstanceTakesNothingNewAndFinishesWhatItHolds() {
		Workload w = distinctPrompts(800);
		// Round-robin over 4 instances of 10 req/s at 44 req/s: each backlog grows by
		// about one request a second, so the leaving instance holds a queue, and the 3
		// left are overloaded, so later requests miss but none disappear.
		SimulationConfig config = fifo(4, Duration.ofMillis(100));
		ScheduledRun run = Simulation.run(w, PolicySpec.named("round-robin"), config, 44,
				MembershipSchedule.parse("50%:-1", 4));
		long change = run.changeNanos()[0];
		int heldByRemoved = 0;
		int servedAfterLeaving = 0;
		for (int i = 0; i < w.size(); i++) {
			if (run.instance()[i] == 3) {
				assertThat(run.arrivalNanos()[i]).as("request %d", i).isLessThan(change);
				heldByRemoved++;
				// What the removed engine held when it left still got its first token.
				assertThat(run.ttftNanos()[i]).as("request %d", i).isNotNegative();
				if (run.arrivalNanos()[i] + run.ttftNanos()[i] > change) {
					servedAfterLeaving++;
				}
			}
		}
		// Every fourth of the 400 requests before the change.
		assertThat(heldByRemoved).isEqualTo(100);
		assertThat(servedAfterLeaving).isGreaterThan(3);
		// No early stop: every measured request is resolved, within the SLO or a miss.
		assertThat(run.result().requests().stoppedEarly()).isFalse();
		assertThat(run.result().attainment()).isLessThan(0.9).isGreaterThan(0.2);
		ScalingTimeline t = ScalingTimeline.of(run, w.trace(), Yardstick.allFeasible(w.trace(), config.warmup()),
				2 * SECOND, SECOND);
		assertThat(t.windows().stream().mapToInt(ScalingTimeline.Window::requests).sum()).isEqualTo(700);
		assertThat(t.windows().get(0).attainment()).isEqualTo(1.0);
		assertThat(t.windows().get(t.windows().size() - 1).attainment()).isLessThan(0.5);
		// The change starts a window.
		assertThat(t.windows()).anySatisfy(win -> assertThat(win.startSeconds()).isEqualTo(change / 1e9));
		// Every request feasible: the headline's view is the requests' own.
		assertThat(t.windows()).allSatisfy(win -> {
			assertThat(win.feasible()).isEqualTo(win.requests());
			assertThat(win.feasibleWithinSlo()).isEqualTo(win.withinSlo());
		});
		// Only the even requests feasible (an objective of 0 for the odd ones): the
		// windows
		// count half of them and the tokens of those alone.
		Yardstick evenOnly = Yardstick.of(w.trace(), EngineProfile.h100_8b(), config.warmup(),
				i -> i % 2 == 0 ? 60 * SECOND : 0, 0);
		ScalingTimeline judged = ScalingTimeline.of(run, w.trace(), evenOnly, 2 * SECOND, SECOND);
		long feasibleTokens = 0;
		long feasibleInTime = 0;
		for (int i = config.warmup(); i < w.size(); i++) {
			if (i % 2 == 0) {
				int tokens = w.trace().requests().get(i).inputTokens();
				feasibleTokens += tokens;
				long ttft = run.ttftNanos()[i];
				feasibleInTime += ttft >= 0 && ttft <= SECOND ? tokens : 0;
			}
		}
		assertThat(judged.windows().stream().mapToInt(ScalingTimeline.Window::feasible).sum()).isEqualTo(350);
		assertThat(judged.windows().stream().mapToLong(ScalingTimeline.Window::feasibleTokens).sum())
			.isEqualTo(feasibleTokens);
		assertThat(judged.windows().stream().mapToLong(ScalingTimeline.Window::feasibleTokensWithinSlo).sum())
			.isEqualTo(feasibleInTime)
			.isPositive()
			.isLessThan(feasibleTokens);
		assertThat(judged.windows().get(0).tokenAttainment()).isEqualTo(1.0);
	}

	@Test
	void sameScheduleAndSeedGiveTheSameRun() {
		Workload w = Workload.of(SyntheticWorkload.TENANTS.generate(700, 4));
		SimulationConfig config = SimulationConfig.builder()
			.instances(3)
			.routers(2)
			.slo(Duration.ofSeconds(5))
			.networkDelay(Duration.ofMillis(1))
			.warmup(200)
			.seed(9)
			.settings(SETTINGS)
			.instanceModels(EngineInstance.factory(EngineProfile.h100_8b(), 512))
			.decisionTimer(() -> 0L)
			.build();
		MembershipSchedule schedule = MembershipSchedule.parse("40%:+1,70%:-2", 3);
		ScheduledRun a = Simulation.run(w, PolicySpec.named("dualmap"), config, 5, schedule);
		ScheduledRun b = Simulation.run(w, PolicySpec.named("dualmap"), config, 5, schedule);
		assertThat(a.ttftNanos()).containsExactly(b.ttftNanos());
		assertThat(a.instance()).containsExactly(b.instance());
		assertThat(a.cachedTokens()).containsExactly(b.cachedTokens());
		assertThat(a.changeNanos()).hasSize(2).containsExactly(b.changeNanos());
		assertThat(a.result().hitRate()).isGreaterThan(0.2);
		// After the second change only engine-000 and engine-001 are members.
		for (int i = 0; i < w.size(); i++) {
			if (a.arrivalNanos()[i] > a.changeNanos()[1]) {
				assertThat(a.instance()[i]).isIn(0, 1);
			}
		}
	}

	@Test
	void aSlowedInstanceServesItsRequestsThatManyTimesSlowerFromTheChangeOn() {
		Workload w = distinctPrompts(800);
		// 2 instances of 10 req/s at 4 req/s: no queueing before or after, so a
		// request's TTFT is its service time.
		ScheduledRun run = Simulation.run(w, PolicySpec.named("round-robin"), fifo(2, Duration.ofMillis(100)), 4,
				MembershipSchedule.parseSlowDowns("50%:1:2", 2));
		assertThat(run.changeNanos()).hasSize(1);
		long change = run.changeNanos()[0];
		int before = 0;
		int after = 0;
		for (int i = 100; i < 800; i++) {
			long ttft = run.ttftNanos()[i];
			boolean slowed = run.instance()[i] == 1 && run.arrivalNanos()[i] > change;
			if (run.arrivalNanos()[i] < change - SECOND || run.arrivalNanos()[i] > change + SECOND) {
				long expected = (slowed ? 200 : 100) * 1_000_000L;
				assertThat(ttft).as("request %d", i).isBetween(expected, expected + 5_000_000L);
				before += slowed ? 0 : 1;
				after += slowed ? 1 : 0;
			}
		}
		assertThat(before).isGreaterThan(300);
		assertThat(after).isGreaterThan(100);
		// A model without step times cannot slow down.
		InstanceModel plain = new InstanceModel() {
			@Override
			public boolean submit(int index, TraceRequest request, long nowNanos) {
				return true;
			}

			@Override
			public boolean hasWork() {
				return false;
			}

			@Override
			public StepOutcome step(long nowNanos) {
				throw new IllegalStateException();
			}

			@Override
			public io.github.dualmap.core.EngineSnapshot scrape(long nowNanos) {
				throw new IllegalStateException();
			}

			@Override
			public int load() {
				return 0;
			}
		};
		assertThatThrownBy(() -> plain.setStepTimeFactor(2)).isInstanceOf(UnsupportedOperationException.class);
	}

	@Test
	void theEstimatesAtATimeAreTheLastSampledByThen() {
		ScheduledRun run = new ScheduledRun(RunResult.builder("p", 1).build(), new long[0], new long[0], new int[0],
				new int[0], List.of("a", "b"), 1, new long[0], 0, new long[] { 10, 20, 20, 30 },
				new long[][] { { 100, -1 }, { 200, -1 }, { 210, 400 }, { 300, 500 } });
		assertThat(run.coldTtftEstimatesAt(5, 2)).containsExactly(Double.NaN, Double.NaN);
		assertThat(run.coldTtftEstimatesAt(10, 2)).containsExactly(100e-9, Double.NaN);
		// Two samples at one instant: the later one.
		assertThat(run.coldTtftEstimatesAt(25, 2)).containsExactly(210e-9, 400e-9);
		assertThat(run.coldTtftEstimatesAt(1_000, 3)).containsExactly(300e-9, 500e-9, Double.NaN);
	}

	@Test
	void slowDownParsing() {
		MembershipSchedule s = MembershipSchedule.parseSlowDowns("600s:3:2, 15m:3:1", 8);
		assertThat(s.steps()).extracting(MembershipSchedule.Step::instance).containsExactly(3, 3);
		assertThat(s.steps()).extracting(MembershipSchedule.Step::factor).containsExactly(2.0, 1.0);
		assertThat(s.steps()).allSatisfy(st -> assertThat(st.slowDown()).isTrue());
		assertThat(s.steps().get(1).nanos(1)).isEqualTo(900 * SECOND);
		assertThat(s.slots(8)).isEqualTo(8);
		assertThat(s.slowDowns()).isEqualTo("600s:3:2,15m:3:1");
		assertThat(s).hasToString("");
		MembershipSchedule both = MembershipSchedule.parse("50%:+2", 8)
			.plus(MembershipSchedule.parseSlowDowns("25%:0:1.5", 8));
		assertThat(both).hasToString("50%:+2");
		assertThat(both.slowDowns()).isEqualTo("25%:0:1.5");
		assertThat(both.slots(8)).isEqualTo(10);
		assertThatThrownBy(() -> MembershipSchedule.parseSlowDowns("50%:0", 8)).hasMessageContaining("'50%:0'")
			.hasMessageContaining("WHEN:INSTANCE:FACTOR");
		assertThatThrownBy(() -> MembershipSchedule.parseSlowDowns("50%:8:2", 8))
			.hasMessageContaining("names instance 8, but the pool's instances are 0 to 7");
		assertThatThrownBy(() -> MembershipSchedule.parseSlowDowns("50%:1:0", 8))
			.hasMessageContaining("factor above 0");
		assertThatThrownBy(() -> MembershipSchedule.parseSlowDowns("100%:1:2", 8)).hasMessageContaining("100 %");
		assertThatThrownBy(() -> MembershipSchedule.parseSlowDowns(" ", 8)).hasMessageContaining("empty");
		assertThatThrownBy(() -> MembershipSchedule.parseSlowDowns("50%:0:2,600s:0:1", 8))
			.hasMessageContaining("--slow-down '50%:0:2,600s:0:1' mixes times and shares");
		assertThatThrownBy(
				() -> MembershipSchedule.parse("60s:+1", 8).plus(MembershipSchedule.parseSlowDowns("50%:1:2", 8)))
			.hasMessageContaining("mix times and shares");
	}

	@Test
	void scheduleParsing() {
		MembershipSchedule s = MembershipSchedule.parse("600s:+2, 15m:-1", 8);
		assertThat(s.steps()).extracting(MembershipSchedule.Step::delta).containsExactly(2, -1);
		assertThat(s.steps().get(0).nanos(1)).isEqualTo(600 * SECOND);
		assertThat(s.steps().get(1).nanos(1)).isEqualTo(900 * SECOND);
		assertThat(s.slots(8)).isEqualTo(10);
		MembershipSchedule share = MembershipSchedule.parse("50%:+2", 8);
		assertThat(share.steps().get(0).nanos(1000)).isEqualTo(500);
		assertThat(share).hasToString("50%:+2");
		assertThat(MembershipSchedule.parse("90000ms:-1", 2).steps().get(0).nanos(0)).isEqualTo(90 * SECOND);
	}

	@Test
	void badSchedulesAreRejectedWithTheBadStep() {
		assertThatThrownBy(() -> MembershipSchedule.parse("50%+2", 8)).hasMessageContaining("'50%+2'")
			.hasMessageContaining("WHEN:DELTA");
		assertThatThrownBy(() -> MembershipSchedule.parse("120%:+1", 8)).hasMessageContaining("'120%:+1'");
		assertThatThrownBy(() -> MembershipSchedule.parse("10s:+0", 8)).hasMessageContaining("delta 0");
		assertThatThrownBy(() -> MembershipSchedule.parse("10s:-2", 2)).hasMessageContaining("'10s:-2'")
			.hasMessageContaining("would leave 0 instances");
		assertThatThrownBy(() -> MembershipSchedule.parse("10s:+1,50%:-1", 2)).hasMessageContaining("mixes");
		assertThatThrownBy(() -> MembershipSchedule.parse(" ", 2)).hasMessageContaining("empty");
	}

	@Test
	void commandWritesTimelineAndChart(@TempDir Path dir) throws Exception {
		StringWriter out = new StringWriter();
		StringWriter err = new StringWriter();
		int code = new SimCommand().redirect(new PrintWriter(out, true), new PrintWriter(err, true), () -> 0L)
			.runWith("--synthetic", "tenants", "--requests", "600", "--warmup", "100", "--instances", "2", "--policies",
					"dualmap,consistent-hash", "--rate", "4", "--scale", "50%:+1", "--window", "20s", "--slow-start",
					"10s", "--out", dir.toString());
		assertThat(code).as(err.toString()).isZero();
		assertThat(out.toString()).contains("dualmap hit", "consistent-hash SLO", "--scale 50%:+1");
		assertThat(dir.resolve("scaleout.png")).isNotEmptyFile();
		JsonNode json = JsonMapper.builder().build().readTree(Files.readString(dir.resolve("timeline.json")));
		assertThat(json.get("scale").asString()).isEqualTo("50%:+1");
		assertThat(json.get("changes_s")).hasSize(1);
		assertThat(json.get("window_s").asDouble()).isEqualTo(20.0);
		assertThat(json.get("policies")).hasSize(2);
		JsonNode windows = json.get("policies").get(0).get("windows");
		assertThat(windows.size()).isGreaterThan(3);
		assertThat(windows.get(0).get("new_instance_share").asDouble()).isZero();
		assertThat(windows.get(windows.size() - 1).get("new_instance_share").asDouble()).isPositive();
	}

	@Test
	void commandWatchesASlowdown(@TempDir Path dir) throws Exception {
		StringWriter out = new StringWriter();
		StringWriter err = new StringWriter();
		int code = new SimCommand().redirect(new PrintWriter(out, true), new PrintWriter(err, true), () -> 0L)
			.runWith("--synthetic", "tenants", "--requests", "600", "--warmup", "100", "--instances", "2", "--policies",
					"round-robin", "--rate", "4", "--slow-down", "50%:0:4", "--window", "20s", "--out", dir.toString());
		assertThat(code).as(err.toString()).isZero();
		assertThat(out.toString()).contains("--slow-down 50%:0:4").doesNotContain("--scale");
		assertThat(dir.resolve("scaleout.png")).isNotEmptyFile();
		JsonNode json = JsonMapper.builder().build().readTree(Files.readString(dir.resolve("timeline.json")));
		assertThat(json.get("slow_down").asString()).isEqualTo("50%:0:4");
		assertThat(json.get("scale").asString()).isEmpty();
		assertThat(json.get("changes_s")).hasSize(1);
		assertThat(out.toString()).contains("round-robin work in time");
		JsonNode windows = json.get("policies").get(0).get("windows");
		// The routers' estimate of a cold reference prompt on each instance: the slowed
		// one's ends above the other's, which it was not before the change.
		JsonNode first = windows.get(0).get("cold_ttft_estimate_s");
		JsonNode last = windows.get(windows.size() - 1).get("cold_ttft_estimate_s");
		assertThat(first).hasSize(2);
		assertThat(first.get(0).asDouble()).isLessThan(1.3 * first.get(1).asDouble());
		assertThat(last.get(0).asDouble()).isGreaterThan(1.5 * last.get(1).asDouble());
		assertThat(windows).allSatisfy(win -> {
			assertThat(win.get("feasible_requests").asInt()).isBetween(1, win.get("requests").asInt());
			assertThat(win.get("feasible_prompt_tokens").asLong()).isPositive();
			assertThat(win.get("token_attainment").asDouble()).isBetween(0.0, 1.0);
			assertThat(win.get("feasible_attainment").asDouble()).isBetween(0.0, 1.0);
		});
		// Two engines slowing down at one instant: one line on the chart, and the run
		// completes.
		Path both = dir.resolve("both");
		assertThat(new SimCommand().redirect(new PrintWriter(out, true), new PrintWriter(err, true), () -> 0L)
			.runWith("--synthetic", "tenants", "--requests", "600", "--warmup", "100", "--instances", "2", "--policies",
					"round-robin", "--rate", "4", "--slow-down", "50%:0:4,50%:1:2", "--out", both.toString()))
			.as(err.toString())
			.isZero();
		assertThat(both.resolve("scaleout.png")).isNotEmptyFile();
		assertThat(runExpectingError("--slow-down", "50%:0:2")).contains("--slow-down needs --rate");
		assertThat(runExpectingError("--slow-down", "50%:4:2", "--rate", "3")).contains("names instance 4");
		assertThat(runExpectingError("--slow-down", "50%:0:2", "--rate", "3", "--scale", "60s:+1"))
			.contains("mix times and shares");
	}

	@Test
	void commandRejectsBadScaleInputWithExitCodeTwo() {
		assertThat(runExpectingError("--scale", "50%:+2")).contains("--scale needs --rate");
		assertThat(runExpectingError("--scale", "half:+2", "--rate", "3")).contains("'half:+2'");
		assertThat(runExpectingError("--scale", "50%:-4", "--rate", "3")).contains("would leave 0 instances");
		assertThat(runExpectingError("--scale", "50%:+1", "--rate", "3", "--window", "0s")).contains("--window");
		// 300 requests at 3 req/s arrive within about 100 s: a step at an hour never
		// comes.
		assertThat(runExpectingError("--scale", "60m:+1", "--rate", "3")).contains("--scale step '60m:+1'")
			.contains("comes after the last arrival");
		assertThat(runExpectingError("--slow-down", "60m:0:2", "--rate", "3")).contains("--slow-down step '60m:0:2'");
	}

	private static String runExpectingError(String... extra) {
		StringWriter err = new StringWriter();
		List<String> args = new ArrayList<>(List.of("--synthetic", "tenants", "--requests", "300", "--warmup", "100",
				"--instances", "4", "--out", System.getProperty("java.io.tmpdir")));
		args.addAll(List.of(extra));
		int code = new SimCommand()
			.redirect(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), () -> 0L)
			.runWith(args.toArray(String[]::new));
		assertThat(code).as(err.toString()).isEqualTo(2);
		return err.toString();
	}

}

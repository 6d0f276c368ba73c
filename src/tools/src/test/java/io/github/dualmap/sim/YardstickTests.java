package io.github.dualmap.sim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.engine.EngineProfile;
import io.github.dualmap.sim.trace.Trace;
import io.github.dualmap.sim.trace.TraceRequest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assertions.withinPercentage;

class YardstickTests {

	private static final EngineProfile H100 = EngineProfile.h100_8b();

	private static final long SECOND = 1_000_000_000L;

	private static long[] ids(long from, int count) {
		long[] out = new long[count];
		for (int k = 0; k < count; k++) {
			out[k] = from + k;
		}
		return out;
	}

	/**
	 * A warm-up prompt of 80 blocks; the same prompt again (all but its last token
	 * cached); a prompt as long with blocks of its own; a short prompt of its own.
	 */
	private static Trace handMade() {
		int p = 80 * 512;
		return new Trace("hand-made", 512,
				List.of(new TraceRequest(0, p, 10, ids(0, 80)), new TraceRequest(1000, p, 10, ids(0, 80)),
						new TraceRequest(2000, p, 10, ids(100, 80)), new TraceRequest(3000, 100, 10, ids(200, 1))));
	}

	@Test
	void aRequestIsFeasibleWhenAnIdleEngineWithEveryEarlierPrefixCachedMakesItsSlo() {
		Trace t = handMade();
		int p = 80 * 512;
		// A cold 40,960-token prompt takes about 2 s on an idle H100; with its prefix
		// cached only its last block's tokens are computed.
		double cold = H100.idleTtftSeconds(p, 0);
		assertThat(cold).isBetween(1.5, 2.5);
		assertThat(H100.idleTtftSeconds(p, p - 16)).isLessThan(0.05);

		Yardstick y = Yardstick.of(t, H100, 1, i -> SECOND, 0);
		assertThat(y.feasible(1)).as("its whole prefix was computed by the warm-up request").isTrue();
		assertThat(y.feasible(2)).as("cold, %.2f s > 1 s", cold).isFalse();
		assertThat(y.feasible(3)).isTrue();
		assertThat(y.feasibleCount()).isEqualTo(2);
		assertThat(y.feasibleTokens()).isEqualTo(p + 100);
		assertThat(y.feasibleShare()).isCloseTo(2.0 / 3, withinPercentage(0.001));
		// The request's own objective decides: 10 s makes the cold prompt feasible.
		Yardstick own = Yardstick.of(t, H100, 1, i -> i == 2 ? 10 * SECOND : SECOND, 0);
		assertThat(own.feasible(2)).isTrue();
		// The network delay counts both ways: 0.6 s each way leaves no short prompt 1 s.
		Yardstick far = Yardstick.of(t, H100, 1, i -> SECOND, 600_000_000L);
		assertThat(far.feasible(3)).isFalse();
		assertThat(far.feasibleCount()).isZero();
		// The work is WorkBound's: the repeated prompt costs next to nothing.
		assertThat(y.workSeconds(1)).isLessThan(y.workSeconds(2) / 100);
		assertThat(y.workSeconds(2)).isCloseTo(WorkBound.seconds(H100, p, 0, 10), withinPercentage(0.001));
	}

	@Test
	void onAMixARequestIsFeasibleWhenOneProfileServesItInTimeAndItsWorkIsTheLeastOfThem() {
		Trace t = handMade();
		EngineProfile a100 = EngineProfile.a100_8b();
		// The short prompt makes 40 ms on an idle H100 and not on an A100 (its step
		// alone takes longer): feasible on the mix, not on A100s alone.
		long objective = Math.round((H100.idleTtftSeconds(100, 0) + a100.idleTtftSeconds(100, 0)) / 2 * 1e9);
		assertThat(H100.idleTtftSeconds(100, 0) * 1e9).isLessThan(objective);
		assertThat(a100.idleTtftSeconds(100, 0) * 1e9).isGreaterThan(objective);
		Yardstick mix = Yardstick.of(t, new PoolProfiles(List.of(a100, H100), List.of(1, 1), List.of(1.0, 1.0)), 1,
				i -> objective, 0);
		Yardstick slow = Yardstick.of(t, a100, 1, i -> objective, 0);
		assertThat(mix.feasible(3)).isTrue();
		assertThat(slow.feasible(3)).isFalse();
		for (int i = 1; i < 4; i++) {
			assertThat(mix.workSeconds(i)).isCloseTo(
					Math.min(Yardstick.of(t, H100, 1, k -> objective, 0).workSeconds(i), slow.workSeconds(i)),
					withinPercentage(0.001));
		}
		assertThat(mix.workSeconds(2)).isLessThan(slow.workSeconds(2));
	}

	/**
	 * Eight measured requests after one warm-up, each a prompt of its own (nothing
	 * cached), two per prompt-size quartile, every one feasible within 60 s.
	 */
	private static Yardstick eightOfTheirOwn(int... sizes) {
		List<TraceRequest> requests = new ArrayList<>();
		requests.add(new TraceRequest(0, 512, 1, ids(10_000, 1)));
		for (int i = 0; i < sizes.length; i++) {
			requests.add(new TraceRequest(1000.0 * (i + 1), sizes[i], 4, ids(1000L * i, (sizes[i] + 511) / 512)));
		}
		return Yardstick.of(new Trace("own", 512, requests), H100, 1, i -> 60 * SECOND, 0);
	}

	private static double work(Yardstick y, int... indexes) {
		double sum = 0;
		for (int i : indexes) {
			sum += y.workSeconds(i);
		}
		return sum;
	}

	@Test
	void theLeastPassingWorkLeavesOutTheCostliestRequestsTheSharesAllow() {
		Yardstick y = eightOfTheirOwn(1000, 2000, 4000, 8000, 16000, 32000, 64000, 100000);
		assertThat(y.feasibleCount()).isEqualTo(8);
		double all = work(y, 1, 2, 3, 4, 5, 6, 7, 8);
		// Nothing may be left out: the whole work.
		assertThat(y.leastPassingWorkSeconds(1, 1, 1)).isCloseTo(all, withinPercentage(1e-9));
		// A quarter of the requests, nothing asked of tokens or sizes: the two longest.
		assertThat(y.leastPassingWorkSeconds(0.75, 0, 0)).isCloseTo(all - work(y, 7, 8), withinPercentage(1e-6));
		// Half of every quartile, as many requests: the longer of each pair.
		assertThat(y.leastPassingWorkSeconds(0.5, 0, 0.5)).isCloseTo(all - work(y, 2, 4, 6, 8), withinPercentage(1e-6));
	}

	@Test
	void theTokenShareBoundsWhatMayBeLeftOutByItsPromptTokens() {
		// Eight prompts of 8,000 tokens but one of 16,000: 72,000 tokens in all.
		Yardstick y = eightOfTheirOwn(8000, 8000, 8000, 8000, 8000, 8000, 8000, 16000);
		double all = work(y, 1, 2, 3, 4, 5, 6, 7, 8);
		// A quarter of the tokens, 18,000, may go, and half of the requests: the longest
		// and, since the relaxation counts fractions, a quarter of another (each costs
		// less per token than the longest).
		assertThat(y.leastPassingWorkSeconds(0.5, 0.75, 0)).isCloseTo(all - work(y, 8) - work(y, 1) / 4,
				withinPercentage(1e-6));
		// 8,000 tokens may go: one of 8,000 tokens, or half of the longest, whose
		// attention costs more per token. The relaxation takes the half, which bounds
		// what a whole request left out saves.
		double leftOut = all - y.leastPassingWorkSeconds(0.5, 1 - 8000.0 / 72000, 0);
		assertThat(work(y, 8) / 2).isGreaterThan(work(y, 1));
		assertThat(leftOut).isCloseTo(work(y, 8) / 2, withinPercentage(1e-6));
	}

	@Test
	void whatMayMissIsWhatTheRunsShareStillPassesWith() {
		assertThat(Yardstick.mayMiss(10, 0.9)).isEqualTo(1);
		assertThat(Yardstick.mayMiss(7, 0.9)).as("6 of 7 is below 0.9").isZero();
		assertThat(Yardstick.mayMiss(100, 0.8)).isEqualTo(20);
		assertThat(Yardstick.mayMiss(12_345_678L, 0.9)).isEqualTo(1_234_567);
		assertThat(Yardstick.mayMiss(5, 0)).as("nothing asked").isEqualTo(5);
		assertThat(Yardstick.mayMiss(5, 1)).isZero();
	}

	@Test
	void theLeastPassingWorkIsNeverMoreThanThatOfAnySetThatPasses() {
		java.util.Random random = new java.util.Random(7);
		for (int trial = 0; trial < 150; trial++) {
			int n = 8 + random.nextInt(5);
			int[] sizes = new int[n];
			for (int i = 0; i < n; i++) {
				sizes[i] = 600 + random.nextInt(20_000);
			}
			List<TraceRequest> requests = new ArrayList<>();
			requests.add(new TraceRequest(0, 512, 1, ids(1_000_000, 1)));
			for (int i = 0; i < n; i++) {
				requests.add(new TraceRequest(1000.0 * (i + 1), sizes[i], 4, ids(1000L * i, (sizes[i] + 511) / 512)));
			}
			Yardstick judged = Yardstick.of(new Trace("random", 512, requests), H100, 1, i -> 60 * SECOND, 0);
			double[] work = new double[n + 1];
			for (int i = 1; i <= n; i++) {
				work[i] = random.nextDouble() * 10;
			}
			Yardstick y = judged.withWork(work);
			double requestShare = 0.5 + 0.4 * random.nextDouble();
			double tokenShare = random.nextBoolean() ? 0 : 0.5 + 0.4 * random.nextDouble();
			double sizeFloor = random.nextBoolean() ? 0 : 0.5;
			// Every set of the feasible requests kept in time, as a run judges it.
			double least = Double.POSITIVE_INFINITY;
			for (int kept = 0; kept < 1 << n; kept++) {
				int within = 0;
				long tokens = 0;
				double cost = 0;
				int[] quartileWithin = new int[Yardstick.QUARTILES];
				for (int i = 0; i < n; i++) {
					if ((kept & 1 << i) != 0) {
						within++;
						tokens += sizes[i];
						cost += work[i + 1];
						quartileWithin[y.quartile(i + 1)]++;
					}
				}
				boolean passes = (double) within / n >= requestShare
						&& (double) tokens / y.feasibleTokens() >= tokenShare;
				for (int q = 0; q < Yardstick.QUARTILES; q++) {
					passes &= y.quartileCount(q) == 0 || (double) quartileWithin[q] / y.quartileCount(q) >= sizeFloor;
				}
				if (passes) {
					least = Math.min(least, cost);
				}
			}
			double bound = y.leastPassingWorkSeconds(requestShare, tokenShare, sizeFloor);
			assertThat(bound).as("trial %d", trial).isLessThanOrEqualTo(least + 1e-9);
			if (tokenShare == 0) {
				// Without the token share the greedy choice is the least set itself.
				assertThat(bound).as("trial %d", trial).isCloseTo(least, within(1e-9));
			}
		}
	}

	@Test
	void theHeadlinesCeilingIsTheWorkBoundWhenNothingMayBeLeftOutAndHigherWhenSomethingMay() {
		Yardstick y = eightOfTheirOwn(1000, 2000, 4000, 8000, 16000, 32000, 64000, 100000);
		double measured = 8;
		double all = work(y, 1, 2, 3, 4, 5, 6, 7, 8);
		assertThat(y.headlineCeiling(4, 1, 1, 1)).isCloseTo(4 * measured / all, withinPercentage(1e-9));
		assertThat(y.headlineCeiling(4, 0.75, 0, 0)).isCloseTo(4 * measured / (all - work(y, 7, 8)),
				withinPercentage(1e-6));
		// Other work, the same judgement: a request costing nothing is the last left out.
		double[] other = new double[9];
		for (int i = 1; i <= 8; i++) {
			other[i] = i == 8 ? 0 : 1;
		}
		Yardstick free = y.withWork(other);
		assertThat(free.feasibleCount()).isEqualTo(8);
		assertThat(free.leastPassingWorkSeconds(0.75, 0, 0)).isEqualTo(5);
		assertThat(free.headlineCeiling(4, 0.75, 0, 0)).isEqualTo(4 * 8 / 5.0);
		assertThatIllegalArgumentException().isThrownBy(() -> y.withWork(new double[8]));
		// Without an engine profile the work is unknown.
		Yardstick unknown = Yardstick.allFeasible(handMade(), 1);
		assertThatIllegalStateException().isThrownBy(() -> unknown.headlineCeiling(4, 0.9, 0.9, 0.8));
	}

	@Test
	void quartilesSplitTheFeasibleMeasuredRequestsByPromptSize() {
		List<TraceRequest> requests = new ArrayList<>();
		int[] sizes = { 900, 100, 800, 200, 700, 300, 600, 400, 50 };
		for (int i = 0; i < sizes.length; i++) {
			requests.add(new TraceRequest(i * 1000.0, sizes[i], 1, ids(10L * i, 2)));
		}
		Yardstick y = Yardstick.allFeasible(new Trace("sizes", 512, requests), 1);
		// Measured: 50 to 800 tokens; two per quartile, shortest first.
		assertThat(y.quartileCount(0)).isEqualTo(2);
		assertThat(y.quartileMin(0)).isEqualTo(50);
		assertThat(y.quartileMax(0)).isEqualTo(100);
		assertThat(y.quartileMin(3)).isEqualTo(700);
		assertThat(y.quartileMax(3)).isEqualTo(800);
		assertThat(y.quartile(2)).as("800 tokens").isEqualTo(3);
		assertThat(y.quartile(0)).as("warm-up").isEqualTo(-1);
		assertThat(y.knowsWork()).isFalse();
	}

	@Test
	void aResultBuiltWithoutAJudgementCountsEveryMeasuredRequestFeasibleAndIsNeverTransient() {
		RunResult r = RunResult.builder("p", 4)
			.requests(100, 80, 5, false)
			.prompts(new RunResult.PromptTokens(1000, 700, 50))
			.build();
		assertThat(r.judged())
			.isEqualTo(new RunResult.Judged(100, 80, 1000, 700, List.of(), 0, 0, Double.POSITIVE_INFINITY));
		assertThat(r.judged().isTransient()).isFalse();
		assertThat(r.feasibleShare()).isEqualTo(1);
		assertThat(r.rejectedShare()).isEqualTo(0.05);
		assertThat(r.passesHeadline(0.8, 0.7, 1)).isTrue();
		assertThat(r.passesHeadline(0.81, 0.7, 1)).isFalse();
		assertThat(r.served()).isEqualTo(RunResult.Served.NONE);
		assertThat(r.ttftSeconds()).isEmpty();
		assertThat(r.classes()).isEmpty();
		assertThat(r.timeline()).isNull();
	}

	private static RunResult judged(double rate, int within, long tokens, int[] quartileWithin, double work) {
		List<RunResult.SizeQuartile> q = new ArrayList<>();
		for (int k = 0; k < 4; k++) {
			q.add(new RunResult.SizeQuartile(k * 100, k * 100 + 99, 25, quartileWithin[k]));
		}
		return RunResult.builder("p", rate)
			.requests(100, within, 0, false)
			.prompts(new RunResult.PromptTokens(1000, tokens, 0))
			.judged(new RunResult.Judged(100, within, 1000, tokens, q, 0, work, 100))
			.build();
	}

	@Test
	void noPromptSizeQuartileMayFallBelowTheFloor() {
		// 92 % of requests and of tokens, but the longest quartile at 72 %.
		RunResult r = judged(1, 92, 920, new int[] { 25, 25, 24, 18 }, 10);
		assertThat(r.judged().worstQuartile()).isEqualTo(0.72);
		assertThat(r.passesHeadline(0.9, 0.9, 0.8)).isFalse();
		assertThat(r.passesHeadline(0.9, 0.9, 0.7)).isTrue();
		assertThat(r.passesHeadline(0.9, 0.95, 0.7)).as("tokens").isFalse();
		assertThat(r.passesRequests(0.9)).isTrue();
	}

	@Test
	void theHeadlineAndTheRequestOnlyCapacityComeFromTheSameEvaluatedRates() {
		// Up to 10 req/s every quartile holds; from 10 to 14 the longest quartile falls
		// to 60 % while 90 % of the requests still make it; beyond 14 all fail.
		AtomicInteger runs = new AtomicInteger();
		CapacitySearch.Outcome o = new CapacitySearch(1, 0.02, 10, 0.9, 0.5, 0.8).search(rate -> {
			runs.incrementAndGet();
			if (rate <= 10) {
				return judged(rate, 95, 950, new int[] { 25, 24, 23, 23 }, 1);
			}
			if (rate <= 14) {
				return judged(rate, 90, 800, new int[] { 25, 25, 25, 15 }, 1);
			}
			return judged(rate, 50, 500, new int[] { 13, 13, 12, 12 }, 1);
		}, () -> {
		});
		assertThat(o.capacity()).isCloseTo(10, withinPercentage(2));
		assertThat(o.requestsCapacity()).isCloseTo(14, withinPercentage(2));
		assertThat(o.points()).hasSize(runs.get());
		// The headline's bracket [8, 16] already holds the request-only verdicts at 8,
		// 12 and 16; it bisects only between 12 and 16: fewer runs than a second search.
		assertThat(runs.get()).isLessThan(20);
	}

	@Test
	void aRateWhoseInTimeWorkExceedsTheEnginesIsTransientAndNeverACapacity() {
		// In-time work 150 engine-seconds over 100: a burst absorbed by the SLO.
		RunResult burst = judged(16, 100, 1000, new int[] { 25, 25, 25, 25 }, 150);
		assertThat(burst.judged().isTransient()).isTrue();
		assertThat(burst.passesHeadline(0.9, 0.9, 0.8)).isFalse();
		assertThat(burst.passesRequests(0.9)).isFalse();
		CapacitySearch.Outcome o = new CapacitySearch(4, 0.02, 10, 0.9, 0.9, 0.8)
			.search(rate -> judged(rate, 100, 1000, new int[] { 25, 25, 25, 25 }, rate * 10), () -> {
			});
		// Work 10 x rate against 100: transient above 10 req/s.
		assertThat(o.capacity()).isCloseTo(10, withinPercentage(2));
		assertThat(o.requestsCapacity()).isCloseTo(10, withinPercentage(2));
	}

	/**
	 * Short prompts with long answers: prefill is cheap, so first tokens come fast while
	 * decode work piles up.
	 */
	private static Trace chat(int n) {
		List<TraceRequest> requests = new ArrayList<>();
		for (int i = 0; i < n; i++) {
			requests.add(new TraceRequest(i * 1000.0, 100, 2000, new long[] { i }));
		}
		return new Trace("long-answers", 512, requests);
	}

	private static SimulationConfig oneEngine() {
		return SimulationConfig.builder()
			.instances(1)
			.routers(1)
			.slo(Duration.ofSeconds(5))
			.networkDelay(Duration.ZERO)
			.warmup(50)
			.seed(1)
			.settings(SchedulerSettings.custom().blockTokens(512).build())
			.instanceModels(EngineInstance.factory(H100, 512))
			.decisionTimer(() -> 0L)
			.promptTokenTarget(0.9)
			.sizeFloor(0.8)
			.build();
	}

	@Test
	void aShortReplayServesABurstInTimeButIsJudgedTransientAndALongerOneIsNot() {
		// 300 requests at 100 req/s on one engine: 3 s of arrivals, each needing about
		// 0.08 s of decode: 8 times what the engine does in that time.
		Trace t = chat(300);
		SimulationConfig config = oneEngine();
		Yardstick y = Yardstick.of(t, H100, 50, i -> 5 * SECOND, 0);
		RunResult shortRun = Simulation.run(Workload.of(t), y, PolicySpec.named("round-robin"), config, 100, false,
				true);
		assertThat(shortRun.judged().feasibleWithin()).as("first tokens come fast").isEqualTo(250);
		assertThat(shortRun.judged().isTransient()).isTrue();
		assertThat(config.passes(shortRun)).isFalse();
		assertThat(config.passesRequests(shortRun)).isFalse();

		// Replayed for at least 60 s, the same rate is a steady state the engine cannot
		// hold: it fails on the SLO, not as a transient.
		CapacityBenchmark steady = new CapacityBenchmark(t, 1, config, 1, true, H100, 60);
		assertThat(steady.copiesFor(100)).isEqualTo(21);
		assertThat(steady.copiesFor(1)).isEqualTo(1);
		BenchmarkReport report = steady.atRate(List.of(PolicySpec.named("round-robin")), 100, () -> {
		});
		RunResult longRun = report.policies().get(0).atFixedRate();
		assertThat(longRun.requests().measured()).isEqualTo(21 * 300 - 50);
		assertThat(longRun.judged().requestShare()).isLessThan(0.9);
		assertThat(report.policies().get(0).search().capacity()).isZero();
		assertThat(report.policies().get(0).search().requestsCapacity()).isZero();
	}

}

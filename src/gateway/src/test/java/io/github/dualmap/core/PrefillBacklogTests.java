package io.github.dualmap.core;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The backlog as prefill work: each instance's queued and in-prefill requests in tokens
 * and attention pairs, costed by its own TTFT model.
 */
class PrefillBacklogTests {

	private static final double A = 20_000;

	private static final double C = 1.5;

	private static final long BASE = 10_000_000;

	private final ManualClock clock = new ManualClock();

	private InstancePool pool(TtftModel model, double alpha) {
		SchedulerSettings settings = SchedulerSettings.custom()
			.prefillNanosPerToken(A)
			.attentionNanosPerPair(C)
			.baseTtft(java.time.Duration.ofNanos(BASE))
			.calibrationAlpha(alpha)
			.ttftModel(model)
			.build();
		InstancePool pool = new InstancePool("llm", settings, clock);
		pool.updateMembership(List.of(new RingMember("a", 1), new RingMember("b", 1)));
		return pool;
	}

	private static RoutingRequest request(int promptTokens) {
		int blocks = (promptTokens + 63) / 64;
		long[] chain = new long[blocks];
		for (int i = 0; i < blocks; i++) {
			chain[i] = promptTokens * 7_919L + i;
		}
		return new RoutingRequest("r" + promptTokens, new PromptBlocks(chain, 64, promptTokens), 0, 0);
	}

	private static InstancePool.InFlight send(InstancePool pool, String id, int cached, int uncached) {
		return pool.dispatch(request(cached + uncached), new Decision(id, Reason.AFFINITY, cached, uncached, -1));
	}

	private static long expected(long tokens, long pairs) {
		return (long) (BASE + A * tokens + C * pairs);
	}

	@Test
	void whatIsInPrefillIsSummedAtItsOwnCost() {
		InstancePool pool = pool(TtftModel.ATTENTION, 0);
		InstanceState a = pool.instance("a");
		InstancePool.InFlight first = send(pool, "a", 1_000, 2_000);
		send(pool, "a", 0, 500);
		long pairs = 2_000L * 1_000 + 2_000L * 2_000 / 2 + 500L * 500 / 2;
		assertThat(pool.pendingWork(a)).isEqualTo(new PrefillWork(2_500, pairs));
		assertThat(pool.estimateTtft(a, 4_000, 1_000))
			.isCloseTo(expected(3_500, pairs + 1_000L * 4_000 + 1_000L * 1_000 / 2), within(2L));
		first.firstToken();
		assertThat(pool.pendingWork(a)).isEqualTo(new PrefillWork(500, 500L * 500 / 2));
		first.finish();
		assertThat(pool.pendingWork(a)).isEqualTo(new PrefillWork(500, 500L * 500 / 2));
	}

	@Test
	void equalTokensBehindALongCachedPrefixCostMoreThanColdOnes() {
		InstancePool pool = pool(TtftModel.ATTENTION, 0);
		send(pool, "a", 60_000, 2_000);
		send(pool, "b", 0, 2_000);
		InstanceState a = pool.instance("a");
		InstanceState b = pool.instance("b");
		assertThat(pool.pendingTokens(a)).isEqualTo(pool.pendingTokens(b));
		// 2,000 x 61,000 pairs at 1.5 ns: 183 ms more ahead on a.
		assertThat(pool.estimateTtft(a, 0, 100) - pool.estimateTtft(b, 0, 100)).isCloseTo((long) (C * 2_000L * 60_000),
				within(2L));

		InstancePool linear = pool(TtftModel.LINEAR, 0);
		send(linear, "a", 60_000, 2_000);
		send(linear, "b", 0, 2_000);
		assertThat(linear.estimateTtft(linear.instance("a"), 0, 100))
			.isEqualTo(linear.estimateTtft(linear.instance("b"), 0, 100));
	}

	@Test
	void tokensKnownOnlyAsACountAreCostedAtThePoolsMeanPairsPerToken() {
		InstancePool pool = pool(TtftModel.ATTENTION, 0);
		for (int i = 0; i < 200; i++) {
			send(pool, "b", 3_000, 1_000).finish();
		}
		// Every released request: 1,000 tokens and 3.5 M pairs, 3,500 pairs a token.
		InstanceState a = pool.instance("a");
		a.peerLoad(1, 2_000, 0);
		PrefillWork w = pool.pendingWork(a);
		assertThat(w.tokens()).isEqualTo(2_000);
		assertThat((double) w.pairs()).isCloseTo(2_000 * 3_500.0, within(2_000 * 3_500.0 * 0.01));
		assertThat(pool.prefillWork(a)).isEqualTo(w);
	}

	@Test
	void eachInstanceLearnsFromItsOwnFirstTokens() {
		InstancePool pool = pool(TtftModel.ATTENTION, 0.05);
		InstanceState a = pool.instance("a");
		InstanceState b = pool.instance("b");
		for (int i = 0; i < 50; i++) {
			InstancePool.InFlight d = send(pool, "a", 10_000, 5_000);
			// a is twice as slow as configured.
			clock.advance(java.time.Duration.ofNanos(2 * expected(5_000, 5_000L * 10_000 + 5_000L * 5_000 / 2)));
			d.firstToken();
			d.finish();
		}
		assertThat(a.ttftModel().samples()).isEqualTo(50);
		assertThat(b.ttftModel().samples()).isZero();
		long probeA = pool.estimateTtft(a, 10_000, 5_000);
		long probeB = pool.estimateTtft(b, 10_000, 5_000);
		assertThat((double) probeA).isCloseTo(2.0 * probeB, within(0.2 * probeB));
		assertThat(probeB).isCloseTo(expected(5_000, 5_000L * 10_000 + 5_000L * 5_000 / 2), within(2L));
	}

	@Test
	void theLinearModelKeepsNoPerInstanceModel() {
		InstancePool pool = pool(TtftModel.LINEAR, 0.05);
		assertThat(pool.instance("a").ttftModel()).isNull();
		send(pool, "a", 60_000, 2_000);
		assertThat(pool.estimateTtft(pool.instance("a"), 60_000, 100)).isEqualTo(pool.estimator().estimate(2_000, 100));
		assertThat(pool.prefillNanos(pool.instance("a"), 60_000, 100)).isEqualTo((long) (A * 100));
	}

}

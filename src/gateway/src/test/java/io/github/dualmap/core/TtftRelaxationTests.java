package io.github.dualmap.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An instance whose per-instance TTFT model learned slow first answers (a cold JIT, a
 * stall) gets traffic back once it has gone {@code ttft.relax-after} without an
 * observation: it is then estimated with the lower of its own fit and the pool's, and
 * relearns from what it is sent.
 */
class TtftRelaxationTests {

	private static final long SLO = Duration.ofSeconds(5).toNanos();

	private final ManualClock clock = new ManualClock();

	private long chains = 1;

	private InstancePool pool(Duration relaxAfter) {
		SchedulerSettings settings = SchedulerSettings.custom()
			.hotWindow(1_000)
			.hotMinSamples(1_000)
			.ttftModel(TtftModel.ATTENTION)
			.ttftRelaxAfter(relaxAfter)
			.build();
		InstancePool pool = new InstancePool("llm", settings, clock);
		pool.updateMembership(List.of(new RingMember("a", 1), new RingMember("b", 1)));
		return pool;
	}

	private RoutingRequest request(int tokens) {
		long c = chains++ << 20;
		return new RoutingRequest("r" + c, new PromptBlocks(new long[] { c, c + 1 }, 64, tokens), SLO, 0);
	}

	/** Sends a request to {@code id} whose first token comes after {@code ttft}. */
	private void serve(InstancePool pool, String id, RoutingRequest r, Duration ttft) {
		InstancePool.InFlight d = pool.dispatch(r, new Decision(id, Reason.AFFINITY, 0, r.blocks().promptTokens(), -1));
		clock.advance(ttft);
		d.firstToken();
		d.finish();
	}

	/**
	 * Both instances answer 500-token prompts in 30 ms, but {@code a}'s first five
	 * answers took 1.5 s; then {@code b} has 800 tokens of other work in prefill (20 ms
	 * of it by the prior: less than a's own fit says it is slower, more than the pool's),
	 * and a 500-token prompt arrives every 100 ms for a minute, each served where the
	 * policy sends it.
	 * @return how many of those went to {@code a}
	 */
	private int sentToTheSlowStarter(InstancePool pool) {
		DualMapPolicy policy = DualMapPolicy.of(pool.settings());
		for (int i = 0; i < 5; i++) {
			serve(pool, "a", request(500), Duration.ofMillis(1_500));
		}
		for (int i = 0; i < 50; i++) {
			serve(pool, "b", request(500), Duration.ofMillis(30));
		}
		InstanceState a = pool.instance("a");
		InstanceState b = pool.instance("b");
		// a's own fit: far slower than b's.
		assertThat(pool.estimateTtft(a, 0, 500)).isGreaterThan(2 * pool.estimateTtft(b, 0, 500));
		pool.dispatch(request(800), new Decision("b", Reason.AFFINITY, 0, 800, -1));
		int toA = 0;
		for (int i = 0; i < 600; i++) {
			RoutingRequest r = request(500);
			Decision d = policy.choose(r, pool);
			toA += d.instanceId().equals("a") ? 1 : 0;
			// b's other work delays its answers by its cost.
			serve(pool, d.instanceId(), r, Duration.ofMillis(d.instanceId().equals("b") ? 50 : 30));
			clock.advance(Duration.ofMillis(70));
		}
		return toA;
	}

	@Test
	void withoutRelaxationAnInstanceWhoseFirstAnswersWereSlowNeverGetsTrafficAgain() {
		assertThat(sentToTheSlowStarter(pool(Duration.ZERO))).isZero();
	}

	@Test
	void anInstanceIdleForRelaxAfterIsEstimatedWithThePoolsFitAndRelearns() {
		InstancePool pool = pool(Duration.ofSeconds(5));
		int toA = sentToTheSlowStarter(pool);
		InstanceState a = pool.instance("a");
		InstanceState b = pool.instance("b");
		// Traffic came back, and with it a's own fit: by the end it takes its share.
		assertThat(toA).isGreaterThan(100);
		assertThat(a.ttftModel().samples()).isEqualTo(5 + toA);
		assertThat(a.ttftModel().idleSince(clock.nanos(), pool.settings().ttftRelaxAfterNanos())).isFalse();
		long ownA = a.ttftModel().estimate(new PrefillWork(0, 0), PrefillWork.of(0, 500));
		long ownB = b.ttftModel().estimate(new PrefillWork(0, 0), PrefillWork.of(0, 500));
		assertThat((double) ownA).isLessThan(1.5 * ownB);
	}

	@Test
	void theLowerOfTheTwoFitsAndOnlyWhileIdle() {
		InstancePool pool = pool(Duration.ofSeconds(5));
		InstanceState a = pool.instance("a");
		InstanceState b = pool.instance("b");
		// Never observed: idle, and no worse than the pool (still the prior here).
		assertThat(a.ttftModel().idleSince(clock.nanos(), Duration.ofSeconds(5).toNanos())).isTrue();
		for (int i = 0; i < 40; i++) {
			serve(pool, "b", request(500), Duration.ofMillis(300));
		}
		// The pool learned b's slowness; a, never observed, keeps its faster prior.
		long priorA = a.ttftModel().estimate(new PrefillWork(0, 0), PrefillWork.of(0, 500));
		assertThat(pool.estimateTtft(a, 0, 500)).isEqualTo(priorA);
		assertThat(pool.pooledTtftModel().estimate(new PrefillWork(0, 0), PrefillWork.of(0, 500)))
			.isGreaterThan(priorA);
		// b was just observed: its own fit.
		assertThat(pool.estimateTtft(b, 0, 500))
			.isEqualTo(b.ttftModel().estimate(new PrefillWork(0, 0), PrefillWork.of(0, 500)));
		// a slow, recently observed: its own fit until relax-after has passed.
		pool = pool(Duration.ofSeconds(5));
		a = pool.instance("a");
		for (int i = 0; i < 5; i++) {
			serve(pool, "a", request(500), Duration.ofMillis(1_500));
		}
		for (int i = 0; i < 40; i++) {
			serve(pool, "b", request(500), Duration.ofMillis(30));
		}
		long ownA = a.ttftModel().estimate(new PrefillWork(0, 0), PrefillWork.of(0, 500));
		long pooled = pool.pooledTtftModel().estimate(new PrefillWork(0, 0), PrefillWork.of(0, 500));
		assertThat(pooled).isLessThan(ownA);
		assertThat(pool.estimateTtft(a, 0, 500)).isEqualTo(ownA);
		clock.advance(Duration.ofSeconds(5));
		assertThat(pool.estimateTtft(a, 0, 500)).isEqualTo(pooled);
		assertThat(pool.prefillNanos(a, 0, 500)).isEqualTo(pool.pooledTtftModel().cost(PrefillWork.of(0, 500)));
	}

}

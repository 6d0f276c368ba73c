package io.github.dualmap.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static io.github.dualmap.core.QueueFixture.request;

/**
 * The dispatch queues' SLO checks under the two TTFT models, with an H100-like engine: 20
 * us a token and 1.31 ns an attention pair, 20 ms base, no calibration.
 */
class DispatchQueuesTtftModelTests {

	private final ManualClock clock = new ManualClock();

	private final Outcomes outcomes = new Outcomes();

	private InstancePool pool;

	private DispatchQueues single(TtftModel model) {
		SchedulerSettings settings = SchedulerSettings.custom()
			.prefillNanosPerToken(20_000)
			.attentionNanosPerPair(1.31)
			.calibrationAlpha(0)
			.ttftModel(model)
			.build();
		pool = new InstancePool("llm", settings, clock);
		pool.updateMembership(List.of(new RingMember("a", 1)));
		return new DispatchQueues(pool, PinnedPolicy.to("a"), QueueSettings.custom().maxPrefillRequests(1).build());
	}

	/**
	 * "long" (100,000 tokens, the first 60,032 cached on a) waits 1 s behind "busy", with
	 * "small" queued after it; then "busy" gets its first token and "long" is next. Its
	 * 39,968 uncached tokens take 0.82 s at the per-token rate, but their attention over
	 * the cached prefix adds 4.19 s: 6.0 s in all, past its 5 s.
	 */
	private RequestTicket longPartlyCachedNextAfterOneSecond(DispatchQueues q) {
		pool.instance("a").shadow().record(request("warm", 9, 60_000).blocks().chain());
		RequestTicket busy = q.submit(request("busy", 1, 100), true, outcomes);
		RequestTicket long_ = q.submit(request("long", 9, 100_000), true, outcomes);
		q.submit(request("small", 2, 100), true, outcomes);
		assertThat(pool.instance("a").queuedPairs())
			.isEqualTo(PrefillWork.pairs(60_032, 39_968) + PrefillWork.pairs(0, 100));
		clock.advance(Duration.ofSeconds(1));
		q.firstToken(busy);
		return long_;
	}

	@Test
	void theHopelessCheckRefusesALongPartlyCachedPromptWhoseAttentionCannotMakeItsSlo() {
		DispatchQueues q = single(TtftModel.ATTENTION);
		RequestTicket long_ = longPartlyCachedNextAfterOneSecond(q);
		assertThat(long_.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(outcomes.rejected.get(long_).message()).contains("waited 1000 ms").contains("about 50");
		assertThat(q.hopelessShed()).isEqualTo(1);
		assertThat(outcomes.releasedIds()).containsExactly("busy", "small");
		assertThat(pool.instance("a").queuedPairs()).isZero();
		assertThat(pool.instance("a").prefillPairs()).isEqualTo(PrefillWork.pairs(0, 100));
	}

	@Test
	void theLinearModelSendsTheSamePromptToMissItsSlo() {
		DispatchQueues q = single(TtftModel.LINEAR);
		RequestTicket long_ = longPartlyCachedNextAfterOneSecond(q);
		assertThat(long_.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(q.hopelessShed()).isZero();
	}

	@Test
	void aLongPromptThatCanMakeItsSloIsSentUnderTheAttentionModel() {
		DispatchQueues q = single(TtftModel.ATTENTION);
		// 20,000 tokens behind a 20,000-token prefix: 0.42 s + 0.79 s of attention.
		pool.instance("a").shadow().record(request("warm", 9, 20_000).blocks().chain());
		RequestTicket busy = q.submit(request("busy", 1, 100), true, outcomes);
		RequestTicket r = q.submit(request("medium", 9, 40_000), true, outcomes);
		q.submit(request("small", 2, 100), true, outcomes);
		clock.advance(Duration.ofSeconds(1));
		q.firstToken(busy);
		assertThat(r.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(q.hopelessShed()).isZero();
	}

}

package io.github.dualmap.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static io.github.dualmap.core.QueueFixture.request;

/**
 * The replica admission rule ({@link EngineQueueGate}): the release limits over this
 * gateway's prefill, held while the engine's scraped queue holds requests it did not send
 * or its estimated prefill backlog is someone else's; with a fresh, a stale and a missing
 * scrape.
 */
class EngineQueueGateTests {

	private final ManualClock clock = new ManualClock();

	private final SchedulerSettings scheduler = QueueFixture.millisecondPerToken().engineBacklog(true).build();

	private final QueueSettings settings = QueueSettings.custom().maxPrefillRequests(4).maxPrefillTokens(1_000).build();

	private static EngineSnapshot waiting(long atNanos, int waiting) {
		return new EngineSnapshot(atNanos, waiting, 0, 0.1, 0, 0, 0);
	}

	@Test
	void theLocalRuleCountsRequestsAndTokensAndNeverStrandsAPromptOnAnIdleInstance() {
		assertThat(EngineQueueGate.hasRoom(0, 0, 50_000, settings)).as("nothing in prefill: however large").isTrue();
		assertThat(EngineQueueGate.hasRoom(3, 600, 400, settings)).as("4 requests, 1,000 tokens").isTrue();
		assertThat(EngineQueueGate.hasRoom(3, 600, 401, settings)).as("1,001 tokens").isFalse();
		assertThat(EngineQueueGate.hasRoom(4, 100, 1, settings)).as("a fifth request").isFalse();
	}

	@Test
	void anInstanceIsFullWhenNoRequestOfAnySizeHasRoom() {
		Replica r = new Replica();
		for (int inPrefill = 0; inPrefill <= 5; inPrefill++) {
			for (long tokens : new long[] { 0, 999, 1_000, 1_001 }) {
				r.state().peerLoad(inPrefill, tokens, 0);
				boolean anyFits = EngineQueueGate.hasRoom(inPrefill, tokens, 0, settings);
				assertThat(r.gate.full(r.state())).as(inPrefill + " requests, " + tokens + " tokens")
					.isEqualTo(!anyFits);
			}
		}
	}

	@Test
	void foreignRequestsAreTheEnginesQueueBeyondWhatThisGatewayHadInPrefillAtTheScrape() {
		assertThat(EngineQueueGate.foreignRequests(waiting(0, 5), 2)).isEqualTo(3);
		assertThat(EngineQueueGate.foreignRequests(waiting(0, 2), 5)).as("some of ours already run: the queue is ours")
			.isZero();
		assertThat(EngineQueueGate.foreignRequests(waiting(0, 0), 0)).isZero();
		assertThat(EngineQueueGate.foreignRequests(new EngineSnapshot(0, -1, -1, Double.NaN, 0, 0, 0), 0))
			.as("a count the engine does not report")
			.isZero();
		assertThat(EngineQueueGate.foreignRequests(null, 0)).as("no fresh snapshot: unknown").isZero();
	}

	@Test
	void aFreshScrapeOfSomeoneElsesBacklogHoldsReleasesUntilAScrapeShowsOnlyOurs() {
		Replica r = new Replica();
		RequestTicket first = r.submit("first", 100);
		assertThat(first.state()).isEqualTo(RequestTicket.State.RELEASED);

		// The engine queues our one request and two of another replica's.
		r.scrape(3);
		RequestTicket second = r.submit("second", 100);
		assertThat(second.state()).as("1 of ours, 100 tokens: the local limits have room; the engine's queue does not")
			.isEqualTo(RequestTicket.State.QUEUED);

		// Our request got its first token; the snapshot still shows the other two.
		clock.advance(Duration.ofMillis(100));
		r.queues.firstToken(first);
		r.queues.tick(clock.nanos());
		assertThat(second.state()).isEqualTo(RequestTicket.State.QUEUED);

		// The next scrape: the engine took the other replica's requests.
		clock.advance(Duration.ofMillis(400));
		r.scrape(0);
		r.queues.tick(clock.nanos());
		assertThat(second.state()).isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void ourOwnRequestsThatGotTheirFirstTokenSinceTheScrapeAreNoOneElsesBacklog() {
		Replica r = new Replica();
		RequestTicket a = r.submit("a", 100);
		RequestTicket b = r.submit("b", 100);
		RequestTicket c = r.submit("c", 100);
		// All three queue in the engine: ours.
		r.scrape(3);
		clock.advance(Duration.ofMillis(100));
		r.queues.firstToken(a);
		r.queues.firstToken(b);
		// Three waiting at the scrape, one of ours in prefill now, but three at the
		// scrape: nothing foreign.
		assertThat(r.gate.foreignRequests(r.state())).isZero();
		RequestTicket d = r.submit("d", 100);
		assertThat(d.state()).isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void aStaleScrapeHoldsNothing() {
		Replica r = new Replica();
		r.submit("first", 100);
		r.scrape(20);
		RequestTicket held = r.submit("held", 100);
		assertThat(held.state()).isEqualTo(RequestTicket.State.QUEUED);
		// stale-after is 2 s: the snapshot is unknown from then on, never saturated.
		clock.advance(Duration.ofMillis(2_001));
		assertThat(r.gate.foreignRequests(r.state())).isZero();
		r.queues.tick(clock.nanos());
		assertThat(held.state()).isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void aMissingOrFailedScrapeHoldsNothing() {
		Replica never = new Replica();
		assertThat(never.state().engine()).isNull();
		for (int i = 0; i < 4; i++) {
			assertThat(never.submit("r" + i, 100).state()).as("no snapshot yet: the local limits")
				.isEqualTo(RequestTicket.State.RELEASED);
		}
		assertThat(never.submit("fifth", 100).state()).as("the local request limit of 4")
			.isEqualTo(RequestTicket.State.QUEUED);

		Replica failed = new Replica();
		failed.submit("first", 100);
		failed.scrape(20);
		RequestTicket held = failed.submit("held", 100);
		assertThat(held.state()).isEqualTo(RequestTicket.State.QUEUED);
		failed.state().markEngineUnknown();
		failed.queues.tick(clock.nanos());
		assertThat(held.state()).as("the last scrape failed: unknown").isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void anotherReplicasLongPromptInPrefillHoldsReleasesUntilItsBacklogDrainsBelowOneBudget() {
		Replica r = new Replica();
		r.counters(0);
		clock.advance(Duration.ofMillis(500));
		// The engine admitted 2,500 uncached tokens we did not send; nothing waits there.
		r.counters(2_500);
		assertThat(r.gate.foreignPrefillTokens(r.state())).isEqualTo(2_500);
		RequestTicket held = r.submit("held", 100);
		assertThat(held.state()).as("the local limits have room; the engine does not")
			.isEqualTo(RequestTicket.State.QUEUED);
		// At 1 ms a token it drains 500 per scrape: 2,000, 1,500, then 1,000 (one
		// budget).
		for (long left : new long[] { 2_000, 1_500 }) {
			clock.advance(Duration.ofMillis(500));
			r.counters(2_500);
			r.queues.tick(clock.nanos());
			assertThat(r.gate.foreignPrefillTokens(r.state())).isEqualTo(left);
			assertThat(held.state()).isEqualTo(RequestTicket.State.QUEUED);
		}
		clock.advance(Duration.ofMillis(500));
		r.counters(2_500);
		r.queues.tick(clock.nanos());
		assertThat(held.state()).isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void ourOwnPrefillInTheEnginesBacklogIsNotForeign() {
		Replica r = new Replica();
		r.counters(0);
		RequestTicket own = r.submit("own", 800);
		assertThat(own.state()).isEqualTo(RequestTicket.State.RELEASED);
		clock.advance(Duration.ofMillis(100));
		r.counters(800);
		assertThat(r.state().engineBacklogTokens(clock.nanos())).isEqualTo(800);
		assertThat(r.gate.foreignPrefillTokens(r.state())).isZero();
		assertThat(r.gate.holding(r.state())).isFalse();
	}

	@Test
	void aStaleFailedOrUnestimatedBacklogHoldsNothing() {
		Replica r = new Replica();
		r.counters(0);
		r.counters(5_000);
		assertThat(r.gate.holding(r.state())).isTrue();
		// stale-after is 2 s; at 1 ms a token 3,000 would still be left.
		clock.advance(Duration.ofMillis(2_001));
		assertThat(r.gate.foreignPrefillTokens(r.state())).isZero();
		assertThat(r.gate.holding(r.state())).isFalse();

		r.counters(5_000);
		r.counters(10_000);
		assertThat(r.gate.holding(r.state())).isTrue();
		r.state().markEngineUnknown();
		assertThat(r.gate.foreignPrefillTokens(r.state())).as("the last scrape failed").isZero();

		Replica off = new Replica(settings, QueueFixture.millisecondPerToken().engineBacklog(false).build());
		off.counters(0);
		off.counters(5_000);
		assertThat(off.state().engineBacklogTokens(clock.nanos())).isZero();
		assertThat(off.gate.holding(off.state())).isFalse();
	}

	@Test
	void anotherSendersPromptIsInPrefillOnlyWhenTheEngineAlsoHeldRequestsThisGatewayDidNotSend() {
		Replica r = new Replica();
		r.counters(0);
		clock.advance(Duration.ofMillis(500));
		// 900 uncached tokens admitted, under one budget (no hold); one request running,
		// none of them ours.
		r.counters(900);
		assertThat(r.state().foreignRequestsAtScrape()).isEqualTo(1);
		assertThat(r.gate.foreignPrefillTokens(r.state())).isEqualTo(900);
		assertThat(r.gate.holding(r.state())).isFalse();
		assertThat(r.gate.foreignPrefill(r.state())).isPositive();

		// The same backlog while the engine runs only our request: more than we counted
		// (a prefix we thought cached), but no one else's.
		Replica alone = new Replica();
		alone.counters(0);
		RequestTicket own = alone.submit("own", 100);
		assertThat(own.state()).isEqualTo(RequestTicket.State.RELEASED);
		alone.counters(900);
		assertThat(alone.state().foreignRequestsAtScrape()).isZero();
		assertThat(alone.gate.foreignPrefillTokens(alone.state())).isEqualTo(800);
		assertThat(alone.gate.foreignPrefill(alone.state())).isZero();

		// Other senders' requests but no backlog beyond ours: nothing in prefill.
		Replica idle = new Replica();
		idle.counters(0);
		idle.counters(0);
		assertThat(idle.state().foreignRequestsAtScrape()).isEqualTo(1);
		assertThat(idle.gate.foreignPrefill(idle.state())).isZero();
	}

	@Test
	void aMissingStaleFailedUncountedOrPeerPublishedSnapshotShowsNoForeignPrefill() {
		Replica never = new Replica();
		assertThat(never.gate.foreignPrefill(never.state())).as("never scraped").isZero();
		Replica r = new Replica();
		r.counters(0);
		r.counters(900);
		assertThat(r.gate.foreignPrefill(r.state())).isPositive();
		clock.advance(Duration.ofMillis(2_001));
		assertThat(r.gate.foreignPrefill(r.state())).as("stale after 2 s").isZero();

		r.counters(900);
		r.counters(1_800);
		assertThat(r.gate.foreignPrefill(r.state())).isPositive();
		r.state().markEngineUnknown();
		assertThat(r.gate.foreignPrefill(r.state())).as("the last scrape failed").isZero();

		Replica uncounted = new Replica();
		uncounted.state().updateEngine(new EngineSnapshot(clock.nanos(), -1, -1, Double.NaN, 0, 0, 0));
		uncounted.state().updateEngine(new EngineSnapshot(clock.nanos(), -1, -1, Double.NaN, 900, 0, 0));
		assertThat(uncounted.state().foreignRequestsAtScrape()).as("the engine reports no request counts").isZero();
		assertThat(uncounted.gate.foreignPrefill(uncounted.state())).isZero();
		assertThat(uncounted.gate.otherSenders(uncounted.state())).isFalse();

		Replica synced = new Replica();
		synced.state().peerLoad(0, 0, 0);
		synced.counters(0);
		synced.counters(900);
		assertThat(synced.gate.foreignPrefill(synced.state())).as("the peers publish what they sent").isZero();
		assertThat(synced.gate.otherSenders(synced.state())).as("but not what they send next").isTrue();
	}

	@Test
	void aLateRequestAloneInThisGatewaysQueuesIsShedWhenAnotherSendersPromptIsInPrefillOnItsInstance() {
		// 5,200 tokens at 1 ms a token: past its 5 s wherever it goes.
		Replica shared = new Replica();
		shared.counters(0);
		shared.counters(900);
		assertALateRequestIsShedAndOneThatMakesItsSloSent(shared);

		// The same backlog on an engine that runs only this gateway's request: late, it
		// still holds no one up, so it is sent.
		Replica alone = new Replica();
		alone.counters(0);
		RequestTicket own = alone.submit("own", 100);
		alone.counters(1_000);
		alone.queues.firstToken(own);
		RequestTicket sent = alone.submit("late", 5_200);
		assertThat(sent.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(alone.queues.hopelessShed()).isZero();
	}

	/**
	 * A request of 5,200 tokens, past its 5 s at 1 ms a token wherever it goes, is
	 * answered 503 (one instance: nowhere to rescue it), and one of 100 tokens is sent.
	 */
	private static void assertALateRequestIsShedAndOneThatMakesItsSloSent(Replica shared) {
		RequestTicket late = shared.submit("late", 5_200);
		assertThat(late.state()).as("nowhere to rescue it: 503").isEqualTo(RequestTicket.State.REJECTED);
		assertThat(shared.outcomes.rejected.get(late).status()).isEqualTo(503);
		assertThat(shared.queues.hopelessShed()).isEqualTo(1);
		assertThat(shared.queues.hopelessShedForOthers()).as("nothing of its own waited").isEqualTo(1);
		assertThat(shared.submit("small", 100).state()).as("one that makes its SLO")
			.isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void aRequestIsJudgedHopelessWithAnotherSendersPromptInPrefillAheadOfIt() {
		// 4,500 tokens at 1 ms a token (and the 20 ms base) make 4.52 s alone; behind 900
		// foreign tokens, 5.42 s.
		Replica shared = new Replica();
		shared.counters(0);
		shared.counters(900);
		RequestTicket late = shared.submit("late", 4_500);
		assertThat(late.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(shared.outcomes.rejected.get(late).message()).contains("about 5420 ms more");

		Replica off = new Replica(settings.toBuilder().shedBehindForeignPrefill(false).build());
		off.counters(0);
		off.counters(900);
		assertThat(off.submit("late", 4_500).state()).as("judged on this gateway's prefill alone")
			.isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void withBothSheddingRulesOffALateRequestAloneIsSentBehindAnotherSendersPrompt() {
		Replica off = new Replica(
				settings.toBuilder().shedBehindForeignPrefill(false).shedWhereOthersSend(false).build());
		off.counters(0);
		off.counters(900);
		assertThat(off.gate.foreignPrefill(off.state())).isPositive();
		assertThat(off.submit("late", 5_200).state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(off.queues.hopelessShed()).isZero();

		// Either rule alone sheds it: the prompt in prefill, or the other sender's
		// request.
		Replica prefillOnly = new Replica(settings.toBuilder().shedWhereOthersSend(false).build());
		prefillOnly.counters(0);
		prefillOnly.counters(900);
		assertThat(prefillOnly.submit("late", 5_200).state()).isEqualTo(RequestTicket.State.REJECTED);
		Replica sendersOnly = new Replica(settings.toBuilder().shedBehindForeignPrefill(false).build());
		sendersOnly.counters(0);
		sendersOnly.counters(900);
		assertThat(sendersOnly.submit("late", 5_200).state()).isEqualTo(RequestTicket.State.REJECTED);
	}

	@Test
	void anotherSenderIsShownByAFreshScrapeOfRequestsThisGatewayDidNotSend() {
		Replica r = new Replica();
		assertThat(r.gate.otherSenders(r.state())).as("never scraped").isFalse();
		r.running(1);
		assertThat(r.gate.otherSenders(r.state())).isTrue();
		clock.advance(Duration.ofMillis(2_001));
		assertThat(r.gate.otherSenders(r.state())).as("stale after 2 s").isFalse();
		r.running(1);
		r.state().markEngineUnknown();
		assertThat(r.gate.otherSenders(r.state())).as("the last scrape failed").isFalse();

		// Our own request running is no one else's.
		Replica own = new Replica();
		assertThat(own.submit("own", 100).state()).isEqualTo(RequestTicket.State.RELEASED);
		own.running(1);
		assertThat(own.gate.otherSenders(own.state())).isFalse();
		own.running(2);
		assertThat(own.gate.otherSenders(own.state())).isTrue();
	}

	@Test
	void aLateRequestAloneInThisGatewaysQueuesIsShedWhereTheEngineRunsAnotherSendersRequests() {
		// 5,200 tokens at 1 ms a token: past its 5 s wherever it goes. No backlog beyond
		// ours, so no foreign prompt in prefill: the other sender's requests alone.
		Replica shared = new Replica();
		shared.running(1);
		assertThat(shared.gate.foreignPrefill(shared.state())).isZero();
		assertALateRequestIsShedAndOneThatMakesItsSloSent(shared);

		Replica off = new Replica(settings.toBuilder().shedWhereOthersSend(false).build());
		off.running(1);
		assertThat(off.submit("late", 5_200).state()).as("without the rule: sent, late")
			.isEqualTo(RequestTicket.State.RELEASED);
		assertThat(off.queues.hopelessShed()).isZero();
	}

	@Test
	void underReplicaSyncALateRequestAloneIsShedWhereTheEngineRunsThePeersRequests() {
		// The peers publish nothing queued for "a", but their request runs there: their
		// next ones would queue behind a late prompt.
		Replica synced = new Replica();
		synced.state().peerLoad(0, 0, 0);
		synced.running(1);
		assertThat(synced.state().peerQueuedTokens()).isZero();
		assertALateRequestIsShedAndOneThatMakesItsSloSent(synced);

		Replica idle = new Replica();
		idle.state().peerLoad(0, 0, 0);
		idle.running(0);
		assertThat(idle.submit("late", 5_200).state()).as("no one else's request there: sent, late")
			.isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void aLateRequestAloneIsSentWhenTheScrapeShowingAnotherSenderIsStaleFailedOrMissing() {
		Replica stale = new Replica();
		stale.running(1);
		clock.advance(Duration.ofMillis(2_001));
		assertThat(stale.submit("late", 5_200).state()).isEqualTo(RequestTicket.State.RELEASED);

		Replica failed = new Replica();
		failed.running(1);
		failed.state().markEngineUnknown();
		assertThat(failed.submit("late", 5_200).state()).isEqualTo(RequestTicket.State.RELEASED);

		Replica never = new Replica();
		assertThat(never.submit("late", 5_200).state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(stale.queues.hopelessShed() + failed.queues.hopelessShed() + never.queues.hopelessShed()).isZero();
	}

	@Test
	void withHoldOnEngineQueueOffTheEnginesQueueHoldsNothing() {
		Replica r = new Replica(
				QueueSettings.custom().maxPrefillRequests(4).maxPrefillTokens(1_000).holdOnEngineQueue(false).build());
		r.submit("first", 100);
		r.scrape(20);
		assertThat(r.submit("second", 100).state()).isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void underReplicaSyncThePeersPrefillIsNotForeignAndTheirPublishedLoadReplacesTheHold() {
		Replica r = new Replica();
		r.state().peerLoad(2, 200, 0);
		r.submit("first", 100);
		// Three waiting: our one and the peers' two.
		r.scrape(3);
		assertThat(r.gate.foreignRequests(r.state())).isZero();
		// Five: two more than the peers published at the scrape.
		r.scrape(5);
		assertThat(r.gate.foreignRequests(r.state())).isEqualTo(2);
		assertThat(r.submit("second", 100).state())
			.as("the peers publish their load: the limits count it, the scrape holds nothing")
			.isEqualTo(RequestTicket.State.RELEASED);
		assertThat(r.state().sharedPrefillRequests()).isEqualTo(4);
		assertThat(r.submit("third", 100).state()).as("ours 2 + the peers' 2: the limit of 4")
			.isEqualTo(RequestTicket.State.QUEUED);
	}

	@Test
	void twoReplicasOfOneEngineKeepItsQueueNearOneBudgetInsteadOfOneEach() {
		assertThat(engineQueueWithTwoReplicas(true)).isEqualTo(4);
		assertThat(engineQueueWithTwoReplicas(false)).as("each replica fills its own limit of 4").isEqualTo(8);
	}

	/**
	 * Two replicas, each with its own pool over one engine that starts nothing (its queue
	 * is everything sent): the first fills its limit, the scrape shows the engine's queue
	 * to both, then the second offers as much work. How many requests the engine queues.
	 */
	private int engineQueueWithTwoReplicas(boolean hold) {
		QueueSettings s = QueueSettings.custom()
			.maxPrefillRequests(4)
			.maxPrefillTokens(1_000)
			.holdOnEngineQueue(hold)
			.build();
		Replica one = new Replica(s);
		Replica two = new Replica(s);
		for (int i = 0; i < 6; i++) {
			one.submit("one-" + i, 100);
		}
		int engineQueue = one.state().prefillRequests();
		one.scrape(engineQueue);
		two.scrape(engineQueue);
		for (int i = 0; i < 6; i++) {
			two.submit("two-" + i, 100);
		}
		return one.state().prefillRequests() + two.state().prefillRequests();
	}

	/** One gateway replica with one instance, "a", and its own queues. */
	private final class Replica {

		final InstancePool pool;

		final DispatchQueues queues;

		final EngineQueueGate gate;

		final Outcomes outcomes = new Outcomes();

		Replica() {
			this(settings);
		}

		Replica(QueueSettings settings) {
			this(settings, scheduler);
		}

		Replica(QueueSettings settings, SchedulerSettings scheduler) {
			pool = new InstancePool("llm", scheduler, clock);
			pool.updateMembership(List.of(new RingMember("a", 1)));
			queues = new DispatchQueues(pool, PinnedPolicy.to("a"), settings);
			gate = new EngineQueueGate(settings, pool);
		}

		InstanceState state() {
			return pool.instance("a");
		}

		RequestTicket submit(String id, int tokens) {
			return queues.submit(request(id, id.hashCode(), tokens), true, outcomes);
		}

		void scrape(int waiting) {
			state().updateEngine(EngineQueueGateTests.waiting(clock.nanos(), waiting));
		}

		/** A snapshot with {@code running} requests running, none waiting. */
		void running(int running) {
			state().updateEngine(new EngineSnapshot(clock.nanos(), 0, running, 0.1, 0, 0, 0));
		}

		/**
		 * A snapshot with nothing waiting whose prefix-cache counters show
		 * {@code uncached}.
		 */
		void counters(long uncached) {
			state().updateEngine(new EngineSnapshot(clock.nanos(), 0, 1, 0.1, uncached, 0, 0));
		}

	}

}

package io.github.dualmap.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The release pass passes over a parked queue ({@link QueueBook#park}): one whose last
 * pump ended with its instance full or without room for its next request. It looks at
 * that queue again after each kind of change its answer depends on, and at no other time.
 * 1 ms per uncached token, 64-token blocks.
 */
class QueueParkingTests {

	private static final QueueSettings ONE_IN_PREFILL = QueueSettings.custom().maxPrefillRequests(1).build();

	private static final QueueSettings THOUSAND_TOKENS = QueueSettings.custom().maxPrefillTokens(1_000).build();

	@Test
	void aFullInstancesQueueIsParkedAndReleasesAtTheFirstTokenThere() {
		QueueRulesFixture f = new QueueRulesFixture(ONE_IN_PREFILL, "a", "b");
		InstancePool.InFlight busy = f.inPrefill("a", 100);
		RequestTicket q = f.queued(QueueFixture.request("r", 7, 200), "a");
		pumpAll(f);
		assertThat(q.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(parked(f, "a")).isTrue();

		busy.firstToken();
		pumpAll(f);
		assertThat(f.outcomes.released).containsExactly(q);
	}

	@Test
	void aFullInstancesQueueReleasesWhenARequestThereEndsWithoutAFirstToken() {
		QueueRulesFixture f = new QueueRulesFixture(ONE_IN_PREFILL, "a", "b");
		InstancePool.InFlight busy = f.inPrefill("a", 100);
		RequestTicket q = f.queued(QueueFixture.request("r", 7, 200), "a");
		pumpAll(f);
		assertThat(parked(f, "a")).isTrue();

		busy.finish();
		pumpAll(f);
		assertThat(f.outcomes.released).containsExactly(q);
	}

	@Test
	void aFullInstancesQueueReleasesWhenAnEstimatedPrefillEnds() {
		ManualClock clock = new ManualClock();
		InstancePool pool = QueueFixture.pool(QueueFixture.millisecondPerToken().build(), clock, "a", "b");
		DispatchQueues queues = new DispatchQueues(pool, PinnedPolicy.to("a"), ONE_IN_PREFILL);
		Outcomes outcomes = new Outcomes();
		// Not streaming: its prefill ends at its estimate, about 200 ms.
		queues.submit(QueueFixture.request("first", 7, 200), false, outcomes);
		RequestTicket second = queues.submit(QueueFixture.request("second", 8, 200), true, outcomes);
		assertThat(second.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(queues.book.queueOf(pool.instance("a")).parked).isTrue();

		clock.advance(Duration.ofSeconds(1));
		queues.tick(clock.nanos());
		assertThat(outcomes.releasedIds()).containsExactly("first", "second");
	}

	@Test
	void aQueueFullWithItsPeersPrefillReleasesWhenThePeersPublishLess() {
		QueueRulesFixture f = new QueueRulesFixture(ONE_IN_PREFILL, "a", "b");
		f.instance("a").peerLoad(1, 100, 0);
		RequestTicket q = f.queued(QueueFixture.request("r", 7, 200), "a");
		pumpAll(f);
		assertThat(parked(f, "a")).isTrue();

		f.instance("a").peerLoad(0, 0, 0);
		pumpAll(f);
		assertThat(f.outcomes.released).containsExactly(q);
	}

	@Test
	void aQueueWithoutRoomReleasesWhenAPeersReleaseCachesItsPrefixThere() {
		QueueRulesFixture f = new QueueRulesFixture(THOUSAND_TOKENS, "a", "b");
		f.inPrefill("a", 800);
		RequestTicket q = f.queued(QueueFixture.request("r", 9, 640), "a");
		pumpAll(f);
		// 800 + 640 tokens: over the 1,000 of the limit, but not full.
		assertThat(f.book.gate.full(f.instance("a"))).isFalse();
		assertThat(parked(f, "a")).isTrue();

		f.pool.recordElsewhere(f.instance("a"), q.request().blocks().chain());
		pumpAll(f);
		assertThat(f.outcomes.released).containsExactly(q);
		// All of its prompt but the last token, which the engine always computes.
		assertThat(q.decision().cachedTokens()).isEqualTo(639);
	}

	@Test
	void aQueueWithoutRoomReleasesARequestQueuedThereThatFits() {
		QueueRulesFixture f = new QueueRulesFixture(THOUSAND_TOKENS, "a", "b");
		// Family 7's first 768 tokens are cached on a, 800 in prefill there.
		f.pool.dispatch(QueueFixture.request("warm", 7, 800), new Decision("a", Reason.LOAD, 0, 800, -1));
		RequestTicket cold = f.queued(QueueFixture.request("cold", 8, 640), "a");
		pumpAll(f);
		assertThat(parked(f, "a")).isTrue();

		RequestTicket warm = f.queued(QueueFixture.request("warm-too", 7, 832), "a");
		pumpAll(f);
		assertThat(f.outcomes.released).containsExactly(warm);
		assertThat(cold.state()).isEqualTo(RequestTicket.State.QUEUED);
	}

	@Test
	void aQueueWithoutRoomReleasesWhenAgingMakesAnotherRequestItsNext() {
		QueueRulesFixture f = new QueueRulesFixture(THOUSAND_TOKENS, "a", "b");
		f.pool.dispatch(QueueFixture.request("warm", 7, 800), new Decision("a", Reason.LOAD, 0, 800, -1));
		RequestTicket small = f.queued(QueueFixture.request("small", 8, 100), "a");
		// The longer cached prefix goes first, and does not fit: 832 uncached.
		RequestTicket big = f.queued(QueueFixture.request("big", 7, 1_600), "a");
		pumpAll(f);
		assertThat(f.outcomes.released).isEmpty();
		assertThat(parked(f, "a")).isTrue();

		// Nothing else happens: at its aging bound (2 s) the small one is next, and fits.
		f.advance(Duration.ofMillis(1_999));
		pumpAll(f);
		assertThat(f.outcomes.released).isEmpty();
		f.advance(Duration.ofMillis(1));
		pumpAll(f);
		assertThat(f.outcomes.released).containsExactly(small);
		assertThat(big.state()).isEqualTo(RequestTicket.State.QUEUED);
	}

	@Test
	void aQueueHeldByTheEnginesQueueIsNotParkedSoTheHoldEndsWithTheSnapshotsAge() {
		QueueRulesFixture f = new QueueRulesFixture(QueueSettings.custom().holdOnEngineQueue(true).build(), "a", "b");
		f.instance("a").updateEngine(new EngineSnapshot(f.clock.nanos(), 3, 0, 0.5, 0, 0, 0));
		RequestTicket q = f.queued(QueueFixture.request("r", 7, 200), "a");
		pumpAll(f);
		assertThat(q.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(parked(f, "a")).isFalse();

		// No event but time: the snapshot is stale (2 s), the engine view unknown.
		f.advance(Duration.ofMillis(2_100));
		pumpAll(f);
		assertThat(f.outcomes.released).containsExactly(q);
	}

	@Test
	void aNewEngineSnapshotWakesAParkedQueue() {
		QueueRulesFixture f = new QueueRulesFixture(ONE_IN_PREFILL, "a", "b");
		f.inPrefill("a", 100);
		f.queued(QueueFixture.request("r", 7, 200), "a");
		pumpAll(f);
		assertThat(parked(f, "a")).isTrue();

		f.instance("a").updateEngine(new EngineSnapshot(f.clock.nanos(), 0, 1, 0.5, 0, 0, 0));
		assertThat(parked(f, "a")).isFalse();
		// The pass takes the woken queue back before it looks.
		assertThat(f.book.nextUnparked(null, f.book.queueOrdinals)).isSameAs(f.book.queueOf(f.instance("a")));
		assertThat(f.book.queueOf(f.instance("a")).parked).isFalse();
	}

	@Test
	void aMembershipChangeWakesEveryParkedQueue() {
		QueueRulesFixture f = new QueueRulesFixture(ONE_IN_PREFILL, "a", "b");
		f.inPrefill("a", 100);
		f.queued(QueueFixture.request("r", 7, 200), "a");
		pumpAll(f);
		assertThat(parked(f, "a")).isTrue();

		f.pool.updateMembership(List.of(new RingMember("a", 1), new RingMember("b", 1), new RingMember("c", 1)));
		new Evacuation(f.book, f.relocator).reconcileMembership(f.out);
		assertThat(parked(f, "a")).isFalse();
		assertThat(f.book.unparked).contains(f.book.queueOf(f.instance("a")));
	}

	@Test
	void aParkedQueueThatNothingTouchedIsNotLookedAt() {
		QueueRulesFixture f = new QueueRulesFixture(THOUSAND_TOKENS, "a", "b");
		f.inPrefill("a", 800);
		InstancePool.InFlight busyB = f.inPrefill("b", 800);
		RequestTicket onA = f.queued(QueueFixture.request("on-a", 9, 640), "a");
		RequestTicket onB = f.queued(QueueFixture.request("on-b", 10, 640), "b");
		pumpAll(f);
		assertThat(parked(f, "a")).isTrue();
		assertThat(parked(f, "b")).isTrue();
		long seen = onA.peekedVersion;

		// A change the gate does not hear of (straight into the shadow index): a look at
		// a's queue would look its next request's prefix up again.
		f.instance("a").shadow().record(new long[] { 42 });
		assertThat(f.instance("a").shadow().version()).isNotEqualTo(seen);
		// b's prefill ends: b's queue is looked at and releases; a's is not looked at.
		busyB.firstToken();
		pumpAll(f);
		assertThat(f.outcomes.released).containsExactly(onB);
		assertThat(onA.peekedVersion).isEqualTo(seen);
		assertThat(parked(f, "a")).isTrue();
		assertThat(f.book.unparked).doesNotContain(f.book.queueOf(f.instance("a")));
	}

	@Test
	void aQueueIsNotParkedWhenItsInstancesRoomChangedSinceTheLook() {
		QueueRulesFixture f = new QueueRulesFixture(ONE_IN_PREFILL, "a", "b");
		f.inPrefill("a", 100);
		f.queued(QueueFixture.request("r", 7, 200), "a");
		InstanceQueue iq = f.book.queueOf(f.instance("a"));
		// Another thread changed the room between the look and the parking: nobody told
		// the queue, which was not parked yet.
		long seen = f.instance("a").roomChanges();
		f.instance("a").peerLoad(0, 0, 0);
		f.book.park(iq, Long.MAX_VALUE, seen);
		assertThat(iq.parked).isFalse();
		assertThat(f.book.unparked).contains(iq);

		f.book.park(iq, Long.MAX_VALUE, f.instance("a").roomChanges());
		assertThat(parked(f, "a")).isTrue();
	}

	private static void pumpAll(QueueRulesFixture f) {
		List<Runnable> out = new ArrayList<>();
		f.releasePass.pumpAll(out);
		f.out.addAll(out);
		f.runOut();
	}

	private static boolean parked(QueueRulesFixture f, String id) {
		InstanceQueue iq = f.book.queueOf(f.instance(id));
		return f.book.passesOver(iq) && !f.book.unparked.contains(iq);
	}

}

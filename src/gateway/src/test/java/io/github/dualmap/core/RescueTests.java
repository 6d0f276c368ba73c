package io.github.dualmap.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Rescue}: a request at its wait bound goes to the other instance with the lowest
 * estimate that has room for it now, when that estimate fits what is left of its SLO;
 * else into the queue with the lowest estimate that fits, once; else nowhere. 1 ms per
 * uncached token, 5 s SLO, 1,000-token requests.
 */
class RescueTests {

	@Test
	void itIsSentNowToTheOtherInstanceWithTheLowestEstimate() {
		QueueRulesFixture f = new QueueRulesFixture(QueueSettings.custom().build(), "a", "b", "c");
		f.inPrefill("b", 500);
		f.inPrefill("c", 2_000);
		// It waited on a, idle by now: the rescue looks elsewhere.
		RequestTicket q = f.placed(QueueFixture.request("r", 7, 1_000), "a");

		assertThat(f.rescue.tryRescue(q, f.book.queueOf(f.instance("a")), f.out)).isTrue();
		f.runOut();

		assertThat(q.decision().instanceId()).isEqualTo("b");
		assertThat(q.decision().reason()).isEqualTo(Reason.RESCUE);
		assertThat(f.outcomes.released).containsExactly(q);
		assertThat(f.book.stats.rescues()).isEqualTo(1);
		assertThat(f.book.stats.rescuesQueued()).isZero();
	}

	@Test
	void noInstanceWhoseEstimateMissesWhatIsLeftOfItsSlo() {
		QueueRulesFixture f = new QueueRulesFixture(QueueSettings.custom().build(), "a", "b", "c");
		RequestTicket q = f.placed(QueueFixture.request("r", 7, 1_000), "a");
		// 0.5 s of its 5 s left; 1 s of prefill anywhere.
		f.advance(Duration.ofMillis(4_500));

		assertThat(f.rescue.tryRescue(q, f.book.queueOf(f.instance("a")), f.out)).isFalse();
		assertThat(f.book.stats.rescues()).isZero();
	}

	@Test
	void withNoRoomAnywhereItJoinsTheQueueWithTheLowestEstimateUntilItsLastStart() {
		QueueRulesFixture f = new QueueRulesFixture(QueueSettings.custom().maxPrefillRequests(1).build(), "a", "b",
				"c");
		f.inPrefill("a", 100);
		f.inPrefill("b", 500);
		f.inPrefill("c", 2_000);
		RequestTicket q = f.placed(QueueFixture.request("r", 7, 1_000), "a");
		long base = f.pool.estimateTtft(f.instance("b"), PrefillWork.NONE, 0, 0);

		assertThat(f.rescue.tryRescue(q, f.book.queueOf(f.instance("a")), f.out)).isTrue();

		assertThat(q.queue.state.id()).isEqualTo("b");
		assertThat(q.decision().reason()).isEqualTo(Reason.RESCUE);
		// The last moment a 1 s prefill there still makes its 5 s SLO.
		assertThat(q.expiresAtNanos).isEqualTo(q.submittedAtNanos() + 5_000_000_000L - 1_000_000_000L - base);
		assertThat(f.book.stats.rescuesQueued()).isEqualTo(1);
		// Rescued once: at its new bound it is not rescued again.
		f.book.dequeue(q);
		assertThat(f.rescue.tryRescue(q, f.book.queueOf(f.instance("b")), f.out)).isFalse();
	}

	@Test
	void withoutRescueToQueueANoRoomRescueFails() {
		QueueRulesFixture f = new QueueRulesFixture(
				QueueSettings.custom().maxPrefillRequests(1).rescueToQueue(false).build(), "a", "b", "c");
		f.inPrefill("a", 100);
		f.inPrefill("b", 500);
		f.inPrefill("c", 2_000);
		RequestTicket q = f.placed(QueueFixture.request("r", 7, 1_000), "a");

		assertThat(f.rescue.tryRescue(q, f.book.queueOf(f.instance("a")), f.out)).isFalse();
	}

	@Test
	void nothingWithoutRescueNorForAPinnedRequest() {
		QueueRulesFixture off = new QueueRulesFixture(QueueSettings.custom().rescue(false).build(), "a", "b");
		RequestTicket q = off.placed(QueueFixture.request("r", 7, 1_000), "a");
		assertThat(off.rescue.tryRescue(q, off.book.queueOf(off.instance("a")), off.out)).isFalse();

		QueueRulesFixture f = new QueueRulesFixture(QueueSettings.custom().build(), "a", "b");
		RoutingRequest r = QueueFixture.request("p", 7, 1_000);
		RequestTicket pinned = new RequestTicket(r, true, r.blocks().keyAt(0), 0, f.pool.now(), Long.MAX_VALUE,
				Long.MAX_VALUE, new Decision("a", Reason.PINNED, 0, 1_000, -1), f.outcomes);
		assertThat(f.rescue.tryRescue(pinned, f.book.queueOf(f.instance("a")), f.out)).isFalse();
	}

}

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

	/**
	 * Where {@code r} (1,000 tokens), waiting on a, is rescued to: b has the lower
	 * estimate (500 tokens in prefill against c's 2,000), a holds the prompt when
	 * {@code aHolds}, b when {@code bHolds}, and b's engine was last scraped
	 * {@code scrapedAgo} before with {@code bKvUsage} of its KV cache in use.
	 */
	private static String rescuedTo(QueueSettings settings, boolean aHolds, boolean bHolds, double bKvUsage,
			Duration scrapedAgo) {
		return rescuedTo(settings, aHolds, bHolds, bKvUsage, 0, false, scrapedAgo);
	}

	private static String rescuedTo(QueueSettings settings, boolean aHolds, boolean bHolds, double bKvUsage,
			int bForeign, Duration scrapedAgo) {
		return rescuedTo(settings, aHolds, bHolds, bKvUsage, bForeign, false, scrapedAgo);
	}

	/**
	 * As above, and b's engine, at that scrape, ran {@code bForeign} requests this
	 * gateway had not sent (another sender's); with {@code bPeerLoad} a replica-sync peer
	 * publishes its load on b (none in prefill).
	 */
	private static String rescuedTo(QueueSettings settings, boolean aHolds, boolean bHolds, double bKvUsage,
			int bForeign, boolean bPeerLoad, Duration scrapedAgo) {
		QueueRulesFixture f = new QueueRulesFixture(settings, "a", "b", "c");
		RoutingRequest r = QueueFixture.request("r", 7, 1_000);
		if (aHolds) {
			f.instance("a").shadow().record(r.blocks().chain());
		}
		if (bHolds) {
			f.instance("b").shadow().record(r.blocks().chain());
		}
		f.advance(Duration.ofSeconds(3));
		f.instance("b")
			.updateEngine(new EngineSnapshot(f.pool.now() - scrapedAgo.toNanos(), 0, bForeign, bKvUsage, 0, 0, 0));
		if (bPeerLoad) {
			f.instance("b").peerLoad(0, 0, 0, 0, 0);
		}
		f.inPrefill("b", 500);
		f.inPrefill("c", 2_000);
		RequestTicket q = f.placed(r, "a");
		if (!f.rescue.tryRescue(q, f.book.queueOf(f.instance("a")), f.out)) {
			return "none";
		}
		return q.decision().instanceId();
	}

	@Test
	void noRescueToAnInstanceThatHoldsLessOfThePromptWhileItsKvCacheIsFull() {
		QueueSettings defaults = QueueSettings.ofDefaults();
		Duration fresh = Duration.ZERO;
		assertThat(defaults.rescueMaxKvUsage()).isEqualTo(0.9);
		// b would hold a second copy of what a holds, in a cache 95 % full: c instead.
		assertThat(rescuedTo(defaults, true, false, 0.95, fresh)).isEqualTo("c");
		// At the limit, not above it; or no limit.
		assertThat(rescuedTo(defaults, true, false, 0.9, fresh)).isEqualTo("b");
		assertThat(rescuedTo(QueueSettings.custom().rescueMaxKvUsage(1).build(), true, false, 0.95, fresh))
			.isEqualTo("b");
		// b holds as much of it as a: nothing is computed twice.
		assertThat(rescuedTo(defaults, true, true, 0.95, fresh)).isEqualTo("b");
		// A prompt a does not hold either is computed wherever it goes.
		assertThat(rescuedTo(defaults, false, false, 0.95, fresh)).isEqualTo("b");
		// A scrape older than stale-after (2 s) says nothing about the cache now.
		assertThat(rescuedTo(defaults, true, false, 0.95, Duration.ofMillis(2_500))).isEqualTo("b");
		// Into a queue the same: with no room anywhere, c's queue rather than b's.
		QueueSettings oneInPrefill = QueueSettings.custom().maxPrefillRequests(1).build();
		assertThat(rescuedTo(oneInPrefill, true, false, 0.95, fresh)).isEqualTo("c");
		assertThat(rescuedTo(oneInPrefill, true, false, 0.5, fresh)).isEqualTo("b");
	}

	@Test
	void noRescueToAnInstanceAnotherSenderSendsToWhileItsKvCacheIsFull() {
		QueueSettings defaults = QueueSettings.ofDefaults();
		Duration fresh = Duration.ZERO;
		// b holds the prompt as a does, but another gateway's requests run there: its
		// queue for b is out of this one's sight, and the rescue would go ahead of it.
		assertThat(rescuedTo(defaults, true, true, 0.95, 2, fresh)).isEqualTo("c");
		assertThat(rescuedTo(defaults, false, false, 0.95, 1, fresh)).isEqualTo("c");
		// Only this gateway sends to b: as before, b.
		assertThat(rescuedTo(defaults, true, true, 0.95, 0, fresh)).isEqualTo("b");
		// Room in b's cache, or no limit, or a stale scrape: b.
		assertThat(rescuedTo(defaults, true, true, 0.9, 2, fresh)).isEqualTo("b");
		assertThat(rescuedTo(QueueSettings.custom().rescueMaxKvUsage(1).build(), true, true, 0.95, 2, fresh))
			.isEqualTo("b");
		assertThat(rescuedTo(defaults, true, true, 0.95, 2, Duration.ofMillis(2_500))).isEqualTo("b");
		// A peer publishes its load on b (replica sync): its queue for b is in sight,
		// and b is judged as for one gateway.
		assertThat(rescuedTo(defaults, true, true, 0.95, 2, true, fresh)).isEqualTo("b");
		assertThat(rescuedTo(defaults, true, false, 0.95, 2, true, fresh)).isEqualTo("c");
		// Into a queue the same.
		QueueSettings oneInPrefill = QueueSettings.custom().maxPrefillRequests(1).build();
		assertThat(rescuedTo(oneInPrefill, true, true, 0.95, 2, fresh)).isEqualTo("c");
		assertThat(rescuedTo(oneInPrefill, true, true, 0.95, 0, fresh)).isEqualTo("b");
	}

	@Test
	void theRescuesKvLimitIsAShareInZeroToOne() {
		assertThat(QueueSettings.custom().rescueMaxKvUsage(1).build().rescueMaxKvUsage()).isEqualTo(1);
		for (double bad : new double[] { 0, -0.1, 1.01, Double.NaN }) {
			org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
				.isThrownBy(() -> QueueSettings.custom().rescueMaxKvUsage(bad).build())
				.withMessageContaining("rescueMaxKvUsage must be in (0, 1]");
		}
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

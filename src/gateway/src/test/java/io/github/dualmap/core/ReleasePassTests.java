package io.github.dualmap.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ReleasePass}: an instance with room takes an aged request first, else the
 * longest cached prefix; it stops at the release limits; a request whose wait plus its
 * estimate misses its SLO while others wait is not sent. 1 ms per uncached token.
 */
class ReleasePassTests {

	@Test
	void theLongestCachedPrefixGoesFirstUntilARequestAges() {
		longestCachedPrefixFirstUntilARequestAges(false);
	}

	@Test
	void oneTenantsRequestsGoInTheSameOrderWithFairShares() {
		longestCachedPrefixFirstUntilARequestAges(true);
	}

	private static void longestCachedPrefixFirstUntilARequestAges(boolean fairShares) {
		QueueRulesFixture f = new QueueRulesFixture(
				QueueSettings.custom().maxPrefillRequests(2).aging(Duration.ofSeconds(2)).build(),
				FairnessSettings.ofDefaults().withEnabled(fairShares), "a", "b");
		// Family 7's prefix is cached on a: 512 of 600 tokens.
		InstancePool.InFlight warm = f.pool.dispatch(QueueFixture.request("warm", 7, 512),
				new Decision("a", Reason.LOAD, 0, 512, -1));
		RequestTicket cold = f.queued(QueueFixture.request("cold", 8, 600), "a");
		RequestTicket cached = f.queued(QueueFixture.request("cached", 7, 600), "a");
		RequestTicket later = f.queued(QueueFixture.request("later", 9, 600), "a");

		// Room for one beside the warm-up.
		f.releasePass.pump(f.book.queueOf(f.instance("a")), f.out);
		f.runOut();
		assertThat(f.outcomes.released).containsExactly(cached);
		assertThat(cached.decision().cachedTokens()).isEqualTo(512);

		// Past its aging bound the first arrival goes before the later one.
		f.advance(Duration.ofMillis(2_100));
		warm.firstToken();
		f.releasePass.pump(f.book.queueOf(f.instance("a")), f.out);
		f.runOut();
		assertThat(f.outcomes.released).containsExactly(cached, cold);
		assertThat(later.state()).isEqualTo(RequestTicket.State.QUEUED);
	}

	@Test
	void aHopelessRequestIsNotSentWhileOthersWait() {
		QueueRulesFixture f = new QueueRulesFixture(QueueSettings.custom().shedHopeless(true).rescue(false).build(),
				"a", "b");
		RequestTicket hopeless = f.queued(QueueFixture.request("long", 7, 3_000), "a");
		RequestTicket other = f.queued(QueueFixture.request("short", 8, 100), "b");
		// 2.5 s waited plus 3 s of prefill: past its 5 s SLO.
		f.advance(Duration.ofMillis(2_500));

		f.releasePass.pump(f.book.queueOf(f.instance("a")), f.out);
		f.runOut();

		assertThat(f.outcomes.rejected).containsOnlyKeys(hopeless);
		assertThat(f.outcomes.rejected.get(hopeless).status()).isEqualTo(Rejection.SERVICE_UNAVAILABLE);
		assertThat(f.book.stats.hopelessShed()).isEqualTo(1);
		assertThat(other.state()).isEqualTo(RequestTicket.State.QUEUED);
	}

	@Test
	void aLateRequestAloneInThePoolIsSentLate() {
		QueueRulesFixture f = new QueueRulesFixture(QueueSettings.custom().shedHopeless(true).rescue(false).build(),
				"a", "b");
		RequestTicket late = f.queued(QueueFixture.request("long", 7, 3_000), "a");
		f.advance(Duration.ofMillis(2_500));

		f.releasePass.pump(f.book.queueOf(f.instance("a")), f.out);
		f.runOut();

		assertThat(f.outcomes.released).containsExactly(late);
	}

}

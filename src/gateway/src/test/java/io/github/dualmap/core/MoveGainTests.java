package io.github.dualmap.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link MoveGain}: a move gains the estimate difference, less the prefill of the cached
 * prefix it gives up; a request's estimate where it waits does not count its own work
 * twice. 1 ms per uncached token.
 */
class MoveGainTests {

	private static final long MS = 1_000_000;

	private final QueueRulesFixture f = new QueueRulesFixture(QueueFixture.ungatedMoves().build(), "a", "b");

	private final MoveGain gain = new MoveGain(f.pool);

	@Test
	void aMoveThatGivesUpNoCachedPrefixGainsTheEstimateDifference() {
		RequestTicket q = withPrefix(0, 1_000);
		assertThat(gain.netGain(q, 3_000 * MS, 1_000 * MS, f.instance("b"), 0)).isEqualTo(2_000 * MS);
	}

	@Test
	void aMoveThatGivesUpACachedPrefixIsChargedItsPrefillThere() {
		// 800 tokens cached where it waits, none there: 800 more tokens to prefill.
		RequestTicket q = withPrefix(800, 200);
		assertThat(gain.netGain(q, 3_000 * MS, 1_000 * MS, f.instance("b"), 0)).isEqualTo(1_200 * MS);
		// Half of it cached there: 400 more.
		assertThat(gain.netGain(q, 3_000 * MS, 1_000 * MS, f.instance("b"), 400)).isEqualTo(1_600 * MS);
	}

	@Test
	void moreCachedPrefixThereEarnsNothingBeyondTheEstimate() {
		RequestTicket q = withPrefix(800, 200);
		assertThat(gain.netGain(q, 3_000 * MS, 1_000 * MS, f.instance("b"), 900)).isEqualTo(2_000 * MS);
	}

	@Test
	void aGainCanBeNegative() {
		RequestTicket q = withPrefix(800, 200);
		assertThat(gain.netGain(q, 1_500 * MS, 1_000 * MS, f.instance("b"), 0)).isEqualTo(-300 * MS);
	}

	@Test
	void theEstimateWhereItWaitsCountsItsOwnWorkOnce() {
		RequestTicket q = withPrefix(0, 1_000);
		InstanceState a = f.instance("a");
		long base = f.pool.estimateTtft(a, PrefillWork.NONE, 0, 0);
		// 3,000 tokens pending there, its own 1,000 among them.
		assertThat(gain.estimateWhereQueued(q, a, PrefillWork.of(0, 3_000))).isEqualTo(base + 3_000 * MS);
	}

	@Test
	void theGainOfATargetWithRoomIsTheNetGainAtItsEstimateThere() {
		RequestTicket q = withPrefix(0, 1_000);
		InstanceState a = f.instance("a");
		InstanceState b = f.instance("b");
		long estHere = 3_000 * MS;
		long g = gain.gainOf(f.book, q, a, estHere, b, true);
		long estThere = f.pool.estimateTtft(b, 0, 1_000);
		assertThat(gain.lastEstimateThere()).isEqualTo(estThere);
		assertThat(g).isEqualTo(gain.netGain(q, estHere, f.pool.warmthScaled(b, a, estThere), b, 0));
	}

	@Test
	void aTargetWithoutPrefillRoomGainsNothingWhenRoomIsNeeded() {
		RequestTicket q = withPrefix(0, 1_000);
		f.inPrefill("b", (int) f.book.settings.maxPrefillTokens() + 1);
		assertThat(gain.gainOf(f.book, q, f.instance("a"), 3_000 * MS, f.instance("b"), true))
			.isEqualTo(MoveGain.NO_ROOM);
		assertThat(gain.gainOf(f.book, q, f.instance("a"), 3_000 * MS, f.instance("b"), false))
			.isGreaterThan(MoveGain.NO_ROOM);
	}

	private RequestTicket withPrefix(int cached, int uncached) {
		RequestTicket q = f
			.placed(QueueFixture.withSlo(QueueFixture.request("r", 1, cached + uncached), Duration.ofSeconds(5)), "a");
		q.cachedTokens = cached;
		q.uncachedTokens = uncached;
		return q;
	}

}

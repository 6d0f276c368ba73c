package io.github.dualmap.core;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static io.github.dualmap.core.QueueFixture.request;

class QueuedPrefixesTests {

	@Test
	void theLongestPrefixSomeQueuedPromptHoldsIsMatched() {
		QueuedPrefixes index = new QueuedPrefixes();
		assertThat(index.matchedBlocks(new long[] { 1, 2, 3 })).isZero();
		index.add(new long[] { 1, 2, 3 });
		assertThat(index.matchedBlocks(new long[] { 1, 2, 3, 4 })).isEqualTo(3);
		assertThat(index.matchedBlocks(new long[] { 1, 2, 9 })).isEqualTo(2);
		// Chained hashes: a deeper block without its head is no prefix.
		assertThat(index.matchedBlocks(new long[] { 9, 2, 3 })).isZero();
	}

	@Test
	void aSharedPrefixStaysWhileOneOfItsRequestsIsQueued() {
		QueuedPrefixes index = new QueuedPrefixes();
		index.add(new long[] { 1, 2, 3 });
		index.add(new long[] { 1, 2, 7 });
		assertThat(index.requests()).isEqualTo(2);
		index.remove(new long[] { 1, 2, 3 });
		assertThat(index.matchedBlocks(new long[] { 1, 2, 3 })).isEqualTo(2);
		assertThat(index.matchedBlocks(new long[] { 1, 2, 7 })).isEqualTo(3);
		index.remove(new long[] { 1, 2, 7 });
		assertThat(index.requests()).isZero();
		assertThat(index.matchedBlocks(new long[] { 1, 2, 7 })).isZero();
	}

	/**
	 * Two instances, each with one request in prefill at a limit of one: r1, with no
	 * cache anywhere, queues on the less loaded {@code x}; r2 extends r1's prompt (the
	 * next turn of its conversation) and arrives while r1 still waits.
	 */
	private static final class NextTurn {

		final ManualClock clock = new ManualClock();

		final InstancePool pool = QueueFixture.pool(QueueFixture.millisecondPerToken().build(), clock, "a", "b");

		final Outcomes outcomes = new Outcomes();

		final DispatchQueues queues;

		final InstanceState x;

		final RequestTicket r1;

		final InstancePool.InFlight loadX;

		NextTurn(boolean countQueuedPrefixes) {
			queues = new DispatchQueues(pool, DualMapPolicy.of(pool.settings()),
					QueueSettings.custom().maxPrefillRequests(1).countQueuedPrefixes(countQueuedPrefixes).build());
			x = pool.instance("a");
			InstanceState y = pool.instance("b");
			loadX = pool.dispatch(request("load-x", 100, 100),
					Decision.of(x.id(), Reason.AFFINITY, request("load-x", 100, 100)));
			pool.dispatch(request("load-y", 200, 300),
					Decision.of(y.id(), Reason.AFFINITY, request("load-y", 200, 300)));
			r1 = queues.submit(request("r1", 1, 500), true, outcomes);
		}

		RequestTicket nextTurn() {
			return queues.submit(request("r2", 1, 1_000), true, outcomes);
		}

	}

	@Test
	void theNextTurnFollowsItsQueuedPreviousTurn() {
		NextTurn t = new NextTurn(true);
		assertThat(t.r1.decision().instanceId()).isEqualTo(t.x.id());
		assertThat(t.x.queuedPrefixes().requests()).isEqualTo(1);

		RequestTicket r2 = t.nextTurn();

		// r1's 8 blocks of 64 tokens are counted as cached on x: the longer prefix wins.
		// The decision carries what x has cached now, none of it: the queue orders and
		// accounts r2 by that.
		assertThat(r2.decision().instanceId()).isEqualTo(t.x.id());
		assertThat(r2.decision().reason()).isEqualTo(Reason.AFFINITY);
		assertThat(r2.decision().cachedTokens()).isZero();
		assertThat(r2.decision().uncachedTokens()).isEqualTo(1_000);
	}

	@Test
	void withoutItTheNextTurnFindsNothingCachedAndGoesByLoad() {
		NextTurn t = new NextTurn(false);
		assertThat(t.r1.decision().instanceId()).isEqualTo(t.x.id());
		assertThat(t.x.queuedPrefixes().requests()).isZero();

		RequestTicket r2 = t.nextTurn();

		// 600 pending tokens plus r2's 1,000 on x against 300 plus 1,000 on y.
		assertThat(r2.decision().instanceId()).isNotEqualTo(t.x.id());
		assertThat(r2.decision().cachedTokens()).isZero();
	}

	@Test
	void aRequestLeavesTheIndexWhenItLeavesTheQueue() {
		NextTurn t = new NextTurn(true);
		RequestTicket r2 = t.nextTurn();
		assertThat(t.x.queuedPrefixes().requests()).isEqualTo(2);

		// x's prefill frees: r1 goes first (neither has anything cached there; the
		// earlier
		// arrival), its prompt goes into x's shadow index, and r2 finds it there.
		t.loadX.firstToken();
		t.queues.tick(t.clock.nanos());
		assertThat(t.outcomes.releasedIds()).containsExactly("r1");
		assertThat(t.x.queuedPrefixes().requests()).isEqualTo(1);
		assertThat(t.x.shadow().peekMatchedBlocks(r2.request().blocks().chain())).isEqualTo(8);

		t.queues.cancel(r2);
		assertThat(t.x.queuedPrefixes().requests()).isZero();
		assertThat(t.x.queuedPrefixes().matchedBlocks(r2.request().blocks().chain())).isZero();
	}

}

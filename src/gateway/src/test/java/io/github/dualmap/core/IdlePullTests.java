package io.github.dualmap.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link IdlePull}: an instance with nothing queued takes a request whose other candidate
 * it is when the net gain beats the migration margin (10 % of a 5 s SLO: 500 ms at 1 ms
 * per token), and not otherwise.
 */
class IdlePullTests {

	@Test
	void anIdleCandidatePullsWhenTheGainBeatsTheMargin() {
		QueueRulesFixture f = new QueueRulesFixture(QueueFixture.ungatedMoves().idlePull(true).build(), "a", "b");
		RoutingRequest r = QueueFixture.request("r", 7, 1_000);
		String home = f.firstCandidate(r);
		f.inPrefill(home, 3_000);
		RequestTicket q = f.queued(r, home);
		String idle = f.otherCandidate(q, home);

		f.idlePull.pullToIdle(f.out);
		f.runOut();

		assertThat(q.decision().instanceId()).isEqualTo(idle);
		assertThat(q.decision().reason()).isEqualTo(Reason.IDLE_PULL);
		assertThat(q.migrations).isEqualTo(1);
		assertThat(f.book.stats.pulls()).isEqualTo(1);
		// The idle instance then sends it.
		assertThat(f.outcomes.released).containsExactly(q);
	}

	@Test
	void aGainBelowTheMarginIsNoPull() {
		assertThat(pulledWith(400)).isFalse();
		assertThat(pulledWith(600)).isTrue();
	}

	@Test
	void anInstanceWithItsOwnQueuePullsNothing() {
		QueueRulesFixture f = new QueueRulesFixture(QueueFixture.ungatedMoves().idlePull(true).build(), "a", "b");
		RoutingRequest r = QueueFixture.request("r", 7, 1_000);
		String home = f.firstCandidate(r);
		f.inPrefill(home, 3_000);
		RequestTicket q = f.queued(r, home);
		String other = f.otherCandidate(q, home);
		f.queued(QueueFixture.request("own", 8, 100), other);

		f.idlePull.pullToIdle(f.out);

		assertThat(q.queue.state.id()).isEqualTo(home);
		assertThat(f.book.stats.pulls()).isZero();
	}

	@Test
	void withMoveLateOnlyARequestThatMakesItsSloWhereItWaitsStays() {
		QueueRulesFixture f = new QueueRulesFixture(QueueSettings.custom().moveLateOnly(true).idlePull(true).build(),
				"a", "b");
		RoutingRequest r = QueueFixture.request("r", 7, 1_000);
		String home = f.firstCandidate(r);
		// About 4 s where it waits, 1 s on the idle one: a gain, but it makes its 5 s
		// SLO.
		f.inPrefill(home, 3_000);
		RequestTicket q = f.queued(r, home);

		f.idlePull.pullToIdle(f.out);
		assertThat(q.queue.state.id()).isEqualTo(home);

		// Waited 1.5 s: it would now miss its SLO where it waits.
		f.advance(Duration.ofMillis(1_500));
		f.idlePull.pullToIdle(f.out);
		assertThat(q.decision().reason()).isEqualTo(Reason.IDLE_PULL);
	}

	@Test
	void aRequestThatUsedItsMigrationsStays() {
		QueueRulesFixture f = new QueueRulesFixture(QueueFixture.ungatedMoves().idlePull(true).maxMigrations(1).build(),
				"a", "b");
		RoutingRequest r = QueueFixture.request("r", 7, 1_000);
		String home = f.firstCandidate(r);
		f.inPrefill(home, 3_000);
		RequestTicket q = f.queued(r, home);
		q.migrations = 1;

		f.idlePull.pullToIdle(f.out);

		assertThat(q.queue.state.id()).isEqualTo(home);
	}

	/**
	 * Whether the idle candidate pulls a 1,000-token request from behind {@code busy}.
	 */
	private static boolean pulledWith(int busy) {
		QueueRulesFixture f = new QueueRulesFixture(QueueFixture.ungatedMoves().idlePull(true).build(), "a", "b");
		RoutingRequest r = QueueFixture.request("r", 7, 1_000);
		String home = f.firstCandidate(r);
		f.inPrefill(home, busy);
		RequestTicket q = f.queued(r, home);
		f.idlePull.pullToIdle(f.out);
		return f.book.stats.pulls() == 1 && q.decision().reason() == Reason.IDLE_PULL;
	}

}

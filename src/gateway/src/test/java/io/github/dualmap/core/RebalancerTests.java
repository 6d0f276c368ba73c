package io.github.dualmap.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Rebalancer}: a hotspot's queued request moves to its other candidate, else to
 * the next instance on ring 2 that takes it, when the net gain beats the margin; nothing
 * moves off an instance that is no hotspot. 1 ms per uncached token; an instance is a
 * hotspot here because its oldest queued request waited past the 3 s hotspot bound.
 */
class RebalancerTests {

	@Test
	void aHotspotsRequestMovesToItsOtherCandidate() {
		QueueRulesFixture f = new QueueRulesFixture(QueueFixture.ungatedMoves().idlePull(false).build(), "a", "b", "c");
		RoutingRequest r = QueueFixture.request("r", 7, 1_000);
		String home = f.firstCandidate(r);
		f.inPrefill(home, 3_000);
		RequestTicket q = f.queued(r, home);
		String other = f.otherCandidate(q, home);
		f.advance(Duration.ofMillis(3_100));

		f.rebalancer.rebalance(f.out);
		f.runOut();

		assertThat(q.decision().instanceId()).isEqualTo(other);
		assertThat(q.decision().reason()).isEqualTo(Reason.HOTSPOT);
		assertThat(f.book.stats.migrations()).isEqualTo(1);
		// The instance that took it then sends it.
		assertThat(f.outcomes.released).containsExactly(q);
	}

	@Test
	void withItsOtherCandidateDrainingItMovesOnRingTwo() {
		QueueRulesFixture f = new QueueRulesFixture(QueueFixture.ungatedMoves().idlePull(false).build(), "a", "b", "c");
		RoutingRequest r = QueueFixture.request("r", 7, 1_000);
		String home = f.firstCandidate(r);
		f.inPrefill(home, 3_000);
		RequestTicket q = f.queued(r, home);
		String other = f.otherCandidate(q, home);
		f.instance(other).draining(true);
		f.advance(Duration.ofMillis(3_100));

		f.rebalancer.rebalance(f.out);

		assertThat(q.decision().instanceId()).isNotIn(home, other);
		assertThat(q.decision().reason()).isEqualTo(Reason.HOTSPOT);
	}

	@Test
	void nothingMovesOffAnInstanceThatIsNoHotspot() {
		QueueRulesFixture f = new QueueRulesFixture(QueueFixture.ungatedMoves().idlePull(false).build(), "a", "b", "c");
		RoutingRequest r = QueueFixture.request("r", 7, 1_000);
		String home = f.firstCandidate(r);
		f.inPrefill(home, 3_000);
		RequestTicket q = f.queued(r, home);
		// Waited 2.9 s: below the hotspot bound, and 4,000 tokens are below its floor.
		f.advance(Duration.ofMillis(2_900));

		f.rebalancer.rebalance(f.out);

		assertThat(q.queue.state.id()).isEqualTo(home);
		assertThat(f.book.stats.migrations()).isZero();
	}

	@Test
	void withMoveLateOnlyATargetAtItsReleaseLimitsTakesNothingUntilItsRoomChanges() {
		QueueRulesFixture f = new QueueRulesFixture(
				QueueSettings.custom().moveLateOnly(true).idlePull(false).maxPrefillRequests(1).build(), "a", "b");
		RoutingRequest r = QueueFixture.request("r", 7, 1_000);
		String home = f.firstCandidate(r);
		f.inPrefill(home, 3_000);
		RequestTicket q = f.queued(r, home);
		InstanceState other = f.instance(f.otherCandidate(q, home));
		InstancePool.InFlight busy = f.inPrefill(other.id(), 10);
		// Waited 3.1 s, 4 s of prefill where it waits: late, and home a hotspot.
		f.advance(Duration.ofMillis(3_100));

		// The first look already takes the late requests alone, by group (every member
		// has its queue from the start, and no look for a target makes one).
		f.rebalancer.rebalance(f.out);
		assertThat(q.queue.state.id()).isEqualTo(home);
		// Its group learned its other candidate without room for it, as that room
		// stands: the next look passes over it.
		InstanceQueue.MoveGroup group = q.moveGroup;
		assertThat(group.other).isSameAs(other);
		assertThat(group.lookedUpTo).isSameAs(q);
		assertThat(group.withRoom).isEmpty();
		assertThat(group.noRoomAt).isEqualTo(other.roomChanges());
		f.advance(Duration.ofMillis(100));
		f.rebalancer.rebalance(f.out);
		assertThat(q.queue.state.id()).isEqualTo(home);

		// The end of that prefill changes the room there: weighed again, it moves.
		busy.firstToken();
		assertThat(group.noRoomAt).isNotEqualTo(other.roomChanges());
		f.rebalancer.rebalance(f.out);
		assertThat(q.decision().instanceId()).isEqualTo(other.id());
	}

	@Test
	void aRequestFiledBeforeTheLastOneLookedAtMakesItsGroupForgetWhatItLearned() {
		QueueRulesFixture f = new QueueRulesFixture(QueueSettings.custom().idlePull(false).build(), "a", "b");
		InstanceQueue.MoveGroup group = new InstanceQueue.MoveGroup(f.instance("b"), f.book.lateOrder);
		RequestTicket early = f.queued(QueueFixture.request("early", 1, 100), "a");
		f.advance(Duration.ofMillis(10));
		RequestTicket late = f.queued(QueueFixture.request("late", 2, 100), "a");
		group.add(late);
		group.lookedUpTo = late;
		group.noRoomAt = 7;
		group.withRoom.add(late);

		group.add(early);

		assertThat(group.lookedUpTo).isNull();
		assertThat(group.withRoom).isEmpty();
		assertThat(group.noRoomAt).isEqualTo(-1);
		// Its first request follows what joins and leaves.
		assertThat(group.first).isSameAs(early);
		group.remove(early);
		assertThat(group.first).isSameAs(late);
		group.remove(late);
		assertThat(group.first).isNull();
	}

}

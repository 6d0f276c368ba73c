package io.github.dualmap.core;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link QueueBook}'s queues: every member has its queue from the moment the queues know
 * it, in the pool's membership order (which is the order of the passes over queues), not
 * from the first time a rule looks at it.
 */
class QueueBookTests {

	@Test
	void everyMemberHasItsQueueFromTheStartInMembershipOrder() {
		QueueRulesFixture f = new QueueRulesFixture(QueueSettings.custom().build(), "c", "a", "b");

		assertThat(f.book.queues.keySet()).containsExactlyElementsOf(f.pool.instances());
		assertThat(f.book.queues.keySet()).extracting(InstanceState::id).containsExactly("a", "b", "c");
		assertThat(f.book.queues.values()).extracting(iq -> iq.ordinal).containsExactly(0L, 1L, 2L);
		assertThat(f.book.queues.values()).allMatch(iq -> iq.byArrival.isEmpty());
		assertThat(f.book.nonEmpty).isEmpty();
		// Every member is young (nothing queued): the moves may find targets among them.
		assertThat(f.book.youngMembers(3)).containsExactlyInAnyOrderElementsOf(f.pool.instances());
	}

	@Test
	void aMemberThatJoinsHasItsQueueOnceTheQueuesLearnOfItBeforeAnythingIsPlacedThere() {
		QueueRulesFixture f = new QueueRulesFixture(QueueSettings.custom().build(), "a", "b");
		Evacuation evacuation = new Evacuation(f.book, f.relocator);
		RequestTicket orphan = f.queued(QueueFixture.request("r", 7, 100), "b");
		InstanceState a = f.instance("a");
		InstanceState b = f.instance("b");

		f.pool.updateMembership(List.of(new RingMember("a", 1), new RingMember("d", 1), new RingMember("c", 1)));
		evacuation.reconcileMembership(f.out);

		// b's queue went; c and d have theirs, in membership order, after a's.
		InstanceState c = f.instance("c");
		InstanceState d = f.instance("d");
		assertThat(f.book.queues.keySet()).containsExactly(a, c, d);
		assertThat(f.book.queues).doesNotContainKey(b);
		assertThat(f.book.queueOf(a).ordinal).isLessThan(f.book.queueOf(c).ordinal);
		assertThat(f.book.queueOf(c).ordinal).isLessThan(f.book.queueOf(d).ordinal);
		assertThat(f.book.queueOrdinals).isEqualTo(f.book.queueOf(d).ordinal + 1);
		// b's request was placed anew on a member, which already had its queue.
		assertThat(orphan.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(orphan.queue.state).isIn(a, c, d);
		assertThat(f.book.queues).hasSize(f.pool.size());
	}

	@Test
	void aMemberThatLeftAndCameBackGetsANewQueueAfterTheOthers() {
		QueueRulesFixture f = new QueueRulesFixture(QueueSettings.custom().build(), "a", "b", "c");
		Evacuation evacuation = new Evacuation(f.book, f.relocator);
		InstanceState oldA = f.instance("a");
		f.pool.updateMembership(List.of(new RingMember("b", 1), new RingMember("c", 1)));
		evacuation.reconcileMembership(f.out);
		assertThat(f.book.queues).doesNotContainKey(oldA).hasSize(2);

		f.pool.updateMembership(List.of(new RingMember("a", 1), new RingMember("b", 1), new RingMember("c", 1)));
		evacuation.reconcileMembership(f.out);

		InstanceState newA = f.instance("a");
		assertThat(newA).isNotSameAs(oldA);
		assertThat(f.book.queues.keySet()).extracting(InstanceState::id).containsExactly("b", "c", "a");
		assertThat(f.book.queueOf(newA).ordinal).isEqualTo(3);
	}

}

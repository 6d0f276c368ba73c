package io.github.dualmap.core;

import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Relocator}: a displaced request goes to the candidate with the longer cached
 * prefix, then the lower estimate, never to an excluded, non-accepting or avoided
 * instance, else to the first instance on ring 1 that takes it; a move gives it its
 * prefix split and decision there.
 */
class RelocatorTests {

	private final QueueRulesFixture f = new QueueRulesFixture(QueueSettings.custom().build(), "a", "b", "c");

	private final RoutingRequest r = QueueFixture.request("r", 7, 1_000);

	private final Candidates candidates = f.pool.rings().candidates(r.blocks().keyAt(0));

	@Test
	void theCandidateWithTheLongerCachedPrefixWins() {
		// Its prefix on the second candidate, busier than the first: a higher estimate.
		f.pool
			.dispatch(QueueFixture.request("warm", 7, 640), new Decision(candidates.second(), Reason.LOAD, 0, 640, -1))
			.firstToken();
		f.inPrefill(candidates.second(), 2_000);
		assertThat(f.relocator.place(f.placed(r, candidates.first()), null).id()).isEqualTo(candidates.second());
	}

	@Test
	void withNothingCachedTheLowerEstimateWins() {
		f.inPrefill(candidates.first(), 2_000);
		assertThat(f.relocator.place(f.placed(r, candidates.first()), null).id()).isEqualTo(candidates.second());
	}

	@Test
	void neverTheExcludedOrAnAvoidedInstance() {
		assertThat(f.relocator.place(f.placed(r, candidates.first()), f.instance(candidates.first())).id())
			.isEqualTo(candidates.second());
		RoutingRequest avoiding = r.placed(Set.of(candidates.first()), null, false);
		assertThat(f.relocator.place(f.placed(avoiding, candidates.second()), null).id())
			.isEqualTo(candidates.second());
	}

	@Test
	void withBothCandidatesDrainingTheFirstOnRingOneThatTakesIt() {
		f.instance(candidates.first()).draining(true);
		f.instance(candidates.second()).draining(true);
		String third = f.pool.rings()
			.walk(0, r.blocks().keyAt(0), id -> !id.equals(candidates.first()) && !id.equals(candidates.second()));
		assertThat(f.relocator.place(f.placed(r, candidates.first()), null).id()).isEqualTo(third);
		f.instance(third).draining(true);
		assertThat(f.relocator.place(f.placed(r, candidates.first()), null)).isNull();
	}

	@Test
	void aMoveSplitsThePromptForItsTargetAndRequeuesItThere() {
		f.pool
			.dispatch(QueueFixture.request("warm", 7, 640), new Decision(candidates.second(), Reason.LOAD, 0, 640, -1))
			.firstToken();
		RequestTicket q = f.queued(r, candidates.first());

		f.relocator.move(q, f.instance(candidates.second()), Reason.HOTSPOT, 123);

		assertThat(q.queue.state.id()).isEqualTo(candidates.second());
		assertThat(q.decision()).isEqualTo(new Decision(candidates.second(), Reason.HOTSPOT, 640, 360, 123));
		assertThat(f.book.queueOf(f.instance(candidates.first())).byArrival).isEmpty();
	}

}

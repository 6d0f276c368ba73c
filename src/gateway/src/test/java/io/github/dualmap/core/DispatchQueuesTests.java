package io.github.dualmap.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static io.github.dualmap.core.QueueFixture.movesEveryEvent;
import static io.github.dualmap.core.QueueFixture.request;
import static io.github.dualmap.core.QueueFixture.ungatedMoves;
import static io.github.dualmap.core.QueueFixture.withSlo;

class DispatchQueuesTests {

	private final ManualClock clock = new ManualClock();

	private final SchedulerSettings scheduler = QueueFixture.millisecondPerToken().hotspotFloorTokens(1_000).build();

	private final InstancePool pool = new InstancePool("llm", scheduler, clock);

	private final Outcomes outcomes = new Outcomes();

	DispatchQueuesTests() {
		pool.updateMembership(List.of(new RingMember("a", 1), new RingMember("b", 1)));
	}

	private DispatchQueues queues(RoutingPolicy policy, QueueSettings.Builder settings) {
		return new DispatchQueues(pool, policy, settings.build());
	}

	/** One instance, so the rebalancer has nowhere to move work and order is visible. */
	private void single() {
		pool.updateMembership(List.of(new RingMember("a", 1)));
	}

	private InstanceState a() {
		return pool.instance("a");
	}

	@Test
	void releasesWhilePrefillRequestsAreBelowTheLimit() {
		single();
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(2));
		RequestTicket r1 = q.submit(request("r1", 1, 100), true, outcomes);
		q.submit(request("r2", 2, 100), true, outcomes);
		RequestTicket r3 = q.submit(request("r3", 3, 100), true, outcomes);

		assertThat(outcomes.releasedIds()).containsExactly("r1", "r2");
		assertThat(r3.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(a().queuedRequests()).isEqualTo(1);
		assertThat(a().queuedTokens()).isEqualTo(100);
		assertThat(a().oldestQueuedNanos()).isEqualTo(r3.submittedAtNanos());
		assertThat(a().prefillRequests()).isEqualTo(2);

		clock.advance(Duration.ofMillis(50));
		assertThat(q.firstToken(r1)).isEqualTo(Duration.ofMillis(50).toNanos());
		assertThat(outcomes.releasedIds()).containsExactly("r1", "r2", "r3");
		assertThat(a().queuedRequests()).isZero();
		assertThat(a().queuedTokens()).isZero();
		assertThat(a().oldestQueuedNanos()).isEqualTo(Long.MAX_VALUE);
	}

	@Test
	void anArrivalWithNothingQueuedInThePoolAndRoomIsReleasedWithoutQueueing() {
		DispatchQueues q = queues(new PinnedPolicy(r -> r.id().startsWith("a") ? "a" : "b"),
				movesEveryEvent().maxPrefillRequests(1));
		RequestTicket a1 = q.submit(request("a1", 1, 100), true, outcomes);
		assertThat(a1.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(q.book.stats.releasedAtOnce()).isEqualTo(1);
		assertThat(a().queuedRequests()).isZero();
		assertThat(a().queuedTokens()).isZero();
		assertThat(a().oldestQueuedNanos()).isEqualTo(Long.MAX_VALUE);
		assertThat(a().prefillRequests()).isEqualTo(1);

		// a is at its limit: the next one for a waits there.
		RequestTicket a2 = q.submit(request("a2", 2, 100), true, outcomes);
		assertThat(a2.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(q.book.stats.releasedAtOnce()).isEqualTo(1);

		// b has room, but a request waits in the pool: b's arrival goes through its
		// queue and the release pass, which sends it all the same.
		RequestTicket b1 = q.submit(request("b1", 3, 100), true, outcomes);
		assertThat(b1.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(q.book.stats.releasedAtOnce()).isEqualTo(1);

		// Nothing waits once a2 is out; b1 holds b, so b's next arrival waits.
		q.firstToken(a1);
		assertThat(a2.state()).isEqualTo(RequestTicket.State.RELEASED);
		RequestTicket b2 = q.submit(request("b2", 4, 100), true, outcomes);
		assertThat(b2.state()).isEqualTo(RequestTicket.State.QUEUED);
		q.firstToken(b1);
		assertThat(b2.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(q.book.stats.releasedAtOnce()).isEqualTo(1);
		assertThat(outcomes.releasedIds()).containsExactly("a1", "b1", "a2", "b2");
	}

	@Test
	void anArrivalLeftOnADrainingInstanceIsNotReleasedAtOnce() {
		single();
		// A policy that places on a even while it drains, so the request has no other
		// instance to go to: it waits in a's queue, which the release pass still sends.
		RoutingPolicy toA = new RoutingPolicy() {
			@Override
			public String name() {
				return "to-a";
			}

			@Override
			public Decision choose(RoutingRequest request, InstancePool p) {
				return Decision.of("a", Reason.AFFINITY, request);
			}
		};
		DispatchQueues q = queues(toA, movesEveryEvent());
		a().draining(true);
		RequestTicket r = q.submit(request("r", 1, 100), true, outcomes);
		assertThat(q.book.stats.releasedAtOnce()).isZero();
		assertThat(r.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(r.decision().instanceId()).isEqualTo("a");
	}

	@Test
	void theReleaseLimitCountsWhatPeerReplicasPublishedOfTheirPrefill() {
		single();
		DispatchQueues q = queues(PinnedPolicy.to("a"),
				movesEveryEvent().maxPrefillRequests(2).maxPrefillTokens(1_000));
		a().peerLoad(1, 300, 0);
		RequestTicket r1 = q.submit(request("r1", 1, 100), true, outcomes);
		RequestTicket r2 = q.submit(request("r2", 2, 100), true, outcomes);
		assertThat(r1.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(r2.state()).as("one of ours and one of a peer's: the limit of 2 is reached")
			.isEqualTo(RequestTicket.State.QUEUED);
		assertThat(a().sharedPrefillRequests()).isEqualTo(2);
		assertThat(a().sharedPrefillTokens()).isEqualTo(400);

		// The peer's request got its first token: its next publication says so.
		a().peerLoad(0, 0, 0);
		q.tick(clock.nanos());
		assertThat(r2.state()).isEqualTo(RequestTicket.State.RELEASED);

		// In tokens too: 100 ours + 800 a peer's + 200 > 1,000.
		q.firstToken(r1);
		a().peerLoad(0, 800, 0);
		RequestTicket r3 = q.submit(request("r3", 3, 200), true, outcomes);
		assertThat(r3.state()).isEqualTo(RequestTicket.State.QUEUED);
		a().peerLoad(0, 600, 0);
		q.tick(clock.nanos());
		assertThat(r3.state()).isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void anInstanceWithNothingInPrefillAnywhereTakesARequestHoweverLargeButAPeersPrefillCounts() {
		single();
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillTokens(1_000));
		a().peerLoad(1, 100, 0);
		RequestTicket huge = q.submit(request("huge", 1, 5_000), true, outcomes);
		assertThat(huge.state()).as("the instance is not idle: a peer has a request in prefill there")
			.isEqualTo(RequestTicket.State.QUEUED);
		a().peerLoad(0, 0, 0);
		q.tick(clock.nanos());
		assertThat(huge.state()).isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void releasesWhilePrefillTokensFitAndNeverStrandsAHugePrompt() {
		single();
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillTokens(1_000));
		RequestTicket huge = q.submit(request("huge", 1, 5_000), true, outcomes);
		assertThat(huge.state()).as("nothing in prefill: released however large")
			.isEqualTo(RequestTicket.State.RELEASED);

		RequestTicket small = q.submit(request("small", 2, 600), true, outcomes);
		assertThat(small.state()).isEqualTo(RequestTicket.State.QUEUED);

		q.firstToken(huge);
		assertThat(small.state()).isEqualTo(RequestTicket.State.RELEASED);
		RequestTicket second = q.submit(request("second", 3, 600), true, outcomes);
		assertThat(second.state()).as("600 + 600 > 1000").isEqualTo(RequestTicket.State.QUEUED);
		RequestTicket third = q.submit(request("third", 4, 300), true, outcomes);
		assertThat(third.state()).as("600 + 300 would fit, but it must not overtake a larger request")
			.isEqualTo(RequestTicket.State.QUEUED);
		q.firstToken(small);
		assertThat(outcomes.releasedIds()).containsExactly("huge", "small", "second", "third");
	}

	@Test
	void servesLongestCachedPrefixFirstAndArrivalOrderAmongEquals() {
		Busy b = busyWithFamily7Cached(movesEveryEvent().maxPrefillRequests(1));
		DispatchQueues q = b.queues();
		RequestTicket busy = b.busy();
		q.submit(request("cold1", 2, 640), true, outcomes);
		q.submit(request("hit1", 7, 640), true, outcomes);
		q.submit(request("cold2", 3, 640), true, outcomes);
		q.submit(request("hit2", 7, 640), true, outcomes);

		drainOneByOne(q, busy);

		assertThat(outcomes.releasedIds()).containsExactly("busy", "hit1", "hit2", "cold1", "cold2");
		assertThat(outcomes.released.get(1).decision().cachedTokens()).isEqualTo(639);
	}

	@Test
	void aRequestOlderThanTheAgeBoundGoesFirstInArrivalOrder() {
		Busy b = busyWithFamily7Cached(movesEveryEvent().maxPrefillRequests(1).aging(Duration.ofSeconds(2)));
		DispatchQueues q = b.queues();
		RequestTicket busy = b.busy();
		q.submit(request("cold-old", 2, 640), true, outcomes);
		clock.advance(Duration.ofMillis(2_500));
		q.submit(request("hit-new", 7, 640), true, outcomes);

		drainOneByOne(q, busy);

		assertThat(outcomes.releasedIds()).containsExactly("busy", "cold-old", "hit-new");
	}

	@Test
	void requestsAgeInProportionToTheirSloSoATightClassIsNotServedAfterALooseOne() {
		Busy b = busyWithFamily7Cached(movesEveryEvent().maxPrefillRequests(1).aging(Duration.ofSeconds(2)));
		DispatchQueues q = b.queues();
		RequestTicket busy = b.busy();
		// The default SLO is 5 s: a 60 s batch request ages after 24 s, a 2 s interactive
		// one after 0.8 s.
		q.submit(withSlo(request("batch-old", 2, 640), Duration.ofSeconds(60)), true, outcomes);
		clock.advance(Duration.ofMillis(2_500));
		q.submit(withSlo(request("interactive-cold", 3, 640), Duration.ofSeconds(2)), true, outcomes);
		q.submit(request("default-hit", 7, 640), true, outcomes);
		clock.advance(Duration.ofMillis(1_000));
		q.submit(withSlo(request("interactive-new", 4, 640), Duration.ofSeconds(2)), true, outcomes);

		drainOneByOne(q, busy);

		// At 3.5 s: the first interactive request has aged (0.8 s), the batch one has not
		// (24 s) though it waited longest; the rest goes by cached prefix, then arrival.
		assertThat(outcomes.releasedIds()).containsExactly("busy", "interactive-cold", "default-hit", "batch-old",
				"interactive-new");
	}

	@Test
	void withoutSloAwarenessEveryRequestAgesAlikeAndNothingIsShed() {
		Busy b = busyWithFamily7Cached(movesEveryEvent().maxPrefillRequests(1)
			.aging(Duration.ofSeconds(2))
			.maxQueuedPerPool(2)
			.sloAware(false));
		DispatchQueues q = b.queues();
		q.submit(withSlo(request("batch-old", 2, 640), Duration.ofSeconds(60)), true, outcomes);
		clock.advance(Duration.ofMillis(2_500));
		q.submit(withSlo(request("interactive", 3, 640), Duration.ofSeconds(2)), true, outcomes);
		RequestTicket urgent = q.submit(withSlo(request("urgent", 4, 640), Duration.ofSeconds(1)), true, outcomes);
		assertThat(urgent.state()).as("pool full, nothing shed").isEqualTo(RequestTicket.State.REJECTED);
		assertThat(q.shed()).isZero();

		drainOneByOne(q, b.busy());

		// The batch request aged at 2 s like any other and goes first.
		assertThat(outcomes.releasedIds()).containsExactly("busy", "batch-old", "interactive");
	}

	@Test
	void aLooseSloRequestStillAgesAndIsServedBeforeNewerHits() {
		Busy b = busyWithFamily7Cached(
				movesEveryEvent().maxPrefillRequests(1).aging(Duration.ofSeconds(2)).maxWait(Duration.ofMinutes(2)));
		DispatchQueues q = b.queues();
		RequestTicket busy = b.busy();
		q.submit(withSlo(request("batch", 2, 640), Duration.ofSeconds(60)), true, outcomes);
		clock.advance(Duration.ofSeconds(25));
		q.submit(request("hit", 7, 640), true, outcomes);

		drainOneByOne(q, busy);

		assertThat(outcomes.releasedIds()).containsExactly("busy", "batch", "hit");
	}

	/** A queue and the request holding its instance's one prefill slot. */
	private record Busy(DispatchQueues queues, RequestTicket busy) {
	}

	/**
	 * One instance whose cache holds family 7's prefix, queues with {@code settings}, and
	 * one request in prefill, so what is submitted next waits and its order shows.
	 */
	private Busy busyWithFamily7Cached(QueueSettings.Builder settings) {
		single();
		DispatchQueues q = queues(PinnedPolicy.to("a"), settings);
		a().shadow().record(request("warm", 7, 640).blocks().chain());
		return new Busy(q, q.submit(request("busy", 1, 100), true, outcomes));
	}

	private void drainOneByOne(DispatchQueues q, RequestTicket first) {
		RequestTicket current = first;
		for (int i = 0; i < 100 && current != null; i++) {
			int before = outcomes.released.size();
			q.finish(current);
			current = outcomes.released.size() > before ? outcomes.released.get(outcomes.released.size() - 1) : null;
		}
	}

	@Test
	void fullInstanceQueueIsRejectedWith429AndRetryAfter() {
		pool.updateMembership(List.of(new RingMember("a", 1)));
		DispatchQueues q = queues(PinnedPolicy.to("a"),
				movesEveryEvent().maxPrefillRequests(1).maxQueuedPerInstance(1));
		q.submit(request("r1", 1, 100), true, outcomes);
		q.submit(request("r2", 2, 100), true, outcomes);
		RequestTicket r3 = q.submit(request("r3", 3, 100), true, outcomes);

		Rejection r = outcomes.rejected.get(r3);
		assertThat(r.status()).isEqualTo(429);
		assertThat(r.errorType()).isEqualTo("rate_limit_exceeded");
		assertThat(r.instanceId()).isEqualTo("a");
		assertThat(r.message()).doesNotContain("'a'");
		// 100 tokens queued + 100 in prefill at 1 ms/token plus 20 ms base: 0.22 s.
		assertThat(r.retryAfterSeconds()).isEqualTo(1);
		assertThat(r3.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(q.queued()).isEqualTo(1);
	}

	@Test
	void aFullPoolShedsItsNewestLoosestSloRequestForATighterArrival() {
		single();
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(1).maxQueuedPerPool(3));
		q.submit(request("running", 0, 100), true, outcomes);
		RequestTicket batch1 = q.submit(withSlo(request("batch1", 1, 100), Duration.ofSeconds(60)), true, outcomes);
		RequestTicket standard = q.submit(request("standard", 2, 100), true, outcomes);
		RequestTicket batch2 = q.submit(withSlo(request("batch2", 3, 100), Duration.ofSeconds(60)), true, outcomes);
		assertThat(q.queued()).isEqualTo(3);

		RequestTicket interactive = q.submit(withSlo(request("interactive", 4, 100), Duration.ofSeconds(2)), true,
				outcomes);

		assertThat(interactive.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(batch2.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(outcomes.rejected.get(batch2)).satisfies(r -> {
			assertThat(r.status()).isEqualTo(429);
			assertThat(r.message()).contains("pool 'llm'").contains("tighter TTFT SLO");
			assertThat(r.retryAfterSeconds()).isPositive();
		});
		assertThat(batch1.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(standard.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(q.queued()).isEqualTo(3);
		assertThat(q.shed()).isEqualTo(1);
		assertThat(q.rejections()).isEqualTo(1);

		// A standard (5 s) arrival displaces the remaining batch request; another
		// standard
		// one finds nothing looser and is refused itself.
		RequestTicket standard2 = q.submit(request("standard2", 5, 100), true, outcomes);
		assertThat(batch1.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(standard2.state()).isEqualTo(RequestTicket.State.QUEUED);
		RequestTicket standard3 = q.submit(request("standard3", 6, 100), true, outcomes);
		assertThat(standard3.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(outcomes.rejected.get(standard3).message()).doesNotContain("tighter");
		assertThat(q.shed()).isEqualTo(2);
		// Every request got exactly one outcome or still waits.
		assertThat(outcomes.calls.values()).allMatch(n -> n == 1);
	}

	@Test
	void aFullInstanceQueueShedsOnlyFromItselfAndALooserArrivalShedsNothing() {
		single();
		DispatchQueues q = queues(PinnedPolicy.to("a"),
				movesEveryEvent().maxPrefillRequests(1).maxQueuedPerInstance(2));
		q.submit(request("running", 0, 100), true, outcomes);
		RequestTicket interactive = q.submit(withSlo(request("interactive", 1, 100), Duration.ofSeconds(2)), true,
				outcomes);
		RequestTicket standard = q.submit(request("standard", 2, 100), true, outcomes);

		RequestTicket batch = q.submit(withSlo(request("batch", 3, 100), Duration.ofSeconds(60)), true, outcomes);
		assertThat(batch.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(q.shed()).isZero();

		RequestTicket urgent = q.submit(withSlo(request("urgent", 4, 100), Duration.ofSeconds(1)), true, outcomes);
		assertThat(urgent.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(standard.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(outcomes.rejected.get(standard).message()).contains("tighter TTFT SLO");
		assertThat(outcomes.rejected.get(standard).instanceId()).isEqualTo("a");
		assertThat(interactive.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(a().queuedRequests()).isEqualTo(2);
		assertThat(a().queuedTokens()).isEqualTo(200);
	}

	@Test
	void fullPoolIsRejectedWith429() {
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(1).maxQueuedPerPool(2));
		for (int i = 0; i < 4; i++) {
			q.submit(request("r" + i, i, 100), true, outcomes);
		}
		assertThat(outcomes.rejected.values()).singleElement().satisfies(r -> {
			assertThat(r.status()).isEqualTo(429);
			assertThat(r.message()).contains("pool 'llm'");
		});
	}

	@Test
	void noInstanceMeans503() {
		pool.instance("a").healthy(false);
		pool.instance("b").healthy(false);
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent());
		RequestTicket r = q.submit(request("r", 1, 100), true, outcomes);
		assertThat(r.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(outcomes.rejected.get(r)).isEqualTo(new Rejection(503, outcomes.rejected.get(r).message(), 5));
	}

	@Test
	void aRequestQueuedBeyondTheWaitBoundIsRejectedWith503() {
		DispatchQueues q = queues(PinnedPolicy.to("a"),
				movesEveryEvent().maxPrefillRequests(1).maxWait(Duration.ofSeconds(10)).maxWaitShare(0));
		RequestTicket busy = q.submit(request("busy", 1, 100), true, outcomes);
		RequestTicket waiting = q.submit(request("waiting", 2, 100), true, outcomes);
		assertThat(q.nextDeadlineNanos())
			.isLessThanOrEqualTo(waiting.submittedAtNanos() + Duration.ofSeconds(10).toNanos());

		clock.advance(Duration.ofSeconds(9));
		q.tick(clock.nanos());
		assertThat(waiting.state()).isEqualTo(RequestTicket.State.QUEUED);
		clock.advance(Duration.ofSeconds(1));
		q.tick(clock.nanos());

		assertThat(waiting.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(outcomes.rejected.get(waiting).status()).isEqualTo(503);
		assertThat(a().queuedRequests()).isZero();
		assertThat(a().queuedTokens()).isZero();
		q.finish(busy);
		assertThat(a().inFlight()).isZero();
	}

	@Test
	void aRequestThatWaitedItsShareOfItsOwnSloIsRejectedBeforeTheWaitBound() {
		// Nothing moves to the idle instance b: every request waits for a.
		DispatchQueues q = queues(PinnedPolicy.to("a"),
				movesEveryEvent().maxPrefillRequests(1)
					.maxWait(Duration.ofSeconds(10))
					.maxWaitShare(0.5)
					.idlePull(false)
					.maxMigrations(0)
					.rescue(false));
		RequestTicket busy = q.submit(request("busy", 1, 100), true, outcomes);
		RequestTicket interactive = q.submit(withSlo(request("interactive", 2, 100), Duration.ofSeconds(2)), true,
				outcomes);
		RequestTicket standard = q.submit(request("standard", 3, 100), true, outcomes);
		RequestTicket batch = q.submit(withSlo(request("batch", 4, 100), Duration.ofSeconds(60)), true, outcomes);
		assertThat(q.nextDeadlineNanos())
			.isLessThanOrEqualTo(interactive.submittedAtNanos() + Duration.ofSeconds(1).toNanos());

		clock.advance(Duration.ofMillis(999));
		q.tick(clock.nanos());
		assertThat(interactive.state()).isEqualTo(RequestTicket.State.QUEUED);
		clock.advance(Duration.ofMillis(1));
		q.tick(clock.nanos());
		// Half of its 2 s: the other half is left for its prefill.
		assertThat(interactive.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(outcomes.rejected.get(interactive).status()).isEqualTo(503);
		assertThat(outcomes.rejected.get(interactive).message()).contains("waited 1000 ms");
		assertThat(standard.state()).isEqualTo(RequestTicket.State.QUEUED);

		clock.advance(Duration.ofMillis(1_500));
		q.tick(clock.nanos());
		assertThat(standard.state()).as("half of 5 s").isEqualTo(RequestTicket.State.REJECTED);
		assertThat(outcomes.rejected.get(standard).message()).contains("waited 2500 ms");
		// Half of 60 s is past the queues' bound, which comes first.
		clock.advance(Duration.ofMillis(7_499));
		q.tick(clock.nanos());
		assertThat(batch.state()).isEqualTo(RequestTicket.State.QUEUED);
		clock.advance(Duration.ofMillis(1));
		q.tick(clock.nanos());
		assertThat(batch.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(outcomes.rejected.get(batch).message()).contains("waited 10000 ms");
		assertThat(a().queuedRequests()).isZero();
		q.finish(busy);
		assertThat(a().inFlight()).isZero();
	}

	@Test
	void theWaitBoundIsAClassesOwnOrElseTheEarlierOfMaxWaitAndTheShareOfTheSlo() {
		long second = Duration.ofSeconds(1).toNanos();
		QueueSettings half = movesEveryEvent().maxWait(Duration.ofSeconds(30)).maxWaitShare(0.5).build();
		assertThat(QueueSettings.ofDefaults().maxWaitShare()).isEqualTo(QueueSettings.DEFAULT_MAX_WAIT_SHARE)
			.isEqualTo(0.5);
		assertThat(half.waitBoundNanos(0, 5 * second)).isEqualTo(2_500_000_000L);
		assertThat(half.waitBoundNanos(second, 5 * second)).as("a class's tighter bound").isEqualTo(second);
		assertThat(half.waitBoundNanos(0, 120 * second)).as("the queues' bound").isEqualTo(30 * second);
		// A class's own bound is its own choice: not cut to half its SLO.
		assertThat(half.waitBoundNanos(90 * second, 60 * second)).as("a class's own looser bound")
			.isEqualTo(90 * second);
		assertThat(half.waitBoundNanos(0, 0)).as("no SLO: the bound alone").isEqualTo(30 * second);
		assertThat(half.waitBoundNanos(0, 1)).as("never 0").isEqualTo(1);
		QueueSettings off = half.toBuilder().maxWaitShare(0).build();
		assertThat(off.waitBoundNanos(0, 5 * second)).isEqualTo(30 * second);
		// A request sent anyway when it expires is not cut short by its SLO.
		QueueSettings dispatch = half.toBuilder().expiry(QueueSettings.Expiry.DISPATCH).build();
		assertThat(dispatch.waitBoundNanos(0, 5 * second)).isEqualTo(30 * second);
		assertThat(dispatch.maxWaitShare()).isEqualTo(0.5);
		for (double bad : new double[] { -0.1, Double.NaN, Double.POSITIVE_INFINITY }) {
			assertThatIllegalArgumentException().isThrownBy(() -> movesEveryEvent().maxWaitShare(bad).build())
				.withMessageContaining("maxWaitShare must be finite and >= 0");
		}
	}

	/**
	 * Every request waits for a; nothing moves before its wait bound, half its SLO (2.5 s
	 * of the default 5 s).
	 */
	private DispatchQueues waitingForA(QueueSettings.Builder settings) {
		return queues(PinnedPolicy.to("a"),
				settings.maxPrefillTokens(1_000)
					.maxWait(Duration.ofSeconds(10))
					.maxWaitShare(0.5)
					.idlePull(false)
					.maxMigrations(0));
	}

	@Test
	void atItsWaitBoundARequestGoesToAnotherInstanceThatCanStartItAndStillMakeItsSlo() {
		DispatchQueues q = waitingForA(movesEveryEvent().maxPrefillRequests(1));
		RequestTicket busy = q.submit(request("busy", 1, 100), true, outcomes);
		RequestTicket waiting = q.submit(request("waiting", 2, 600), true, outcomes);
		clock.advance(Duration.ofMillis(2_499));
		q.tick(clock.nanos());
		assertThat(waiting.state()).isEqualTo(RequestTicket.State.QUEUED);
		clock.advance(Duration.ofMillis(1));
		q.tick(clock.nanos());

		// Half of its 5 s waited; b starts its 600 tokens at once (0.6 s at 1 ms a
		// token).
		assertThat(waiting.state()).isEqualTo(RequestTicket.State.RELEASED);
		Decision d = outcomes.released.get(1).decision();
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.RESCUE);
		assertThat(d.uncachedTokens()).isEqualTo(600);
		assertThat(waiting.placedByRescue()).as("the rescue made its final placement").isTrue();
		assertThat(busy.placedByRescue()).as("released by its own queue").isFalse();
		assertThat(q.rescues()).isEqualTo(1);
		assertThat(q.rejections()).isZero();
		assertThat(pool.instance("b").prefillRequests()).isEqualTo(1);
		assertThat(a().queuedRequests()).isZero();
		q.finish(busy);
		q.finish(waiting);
	}

	@Test
	void aRequestThatCouldNoLongerMakeItsSloAnywhereIsStillRejected() {
		DispatchQueues q = waitingForA(movesEveryEvent().maxPrefillRequests(1));
		q.submit(request("busy", 1, 100), true, outcomes);
		// 2.6 s of prefill on b after 2.5 s of waiting: past its 5 s.
		RequestTicket tooLate = q.submit(request("too-late", 2, 2_600), true, outcomes);
		clock.advance(Duration.ofMillis(2_500));
		q.tick(clock.nanos());
		assertThat(tooLate.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(outcomes.rejected.get(tooLate).status()).isEqualTo(503);
		assertThat(tooLate.placedByRescue()).isFalse();
		assertThat(q.rescues()).isZero();
	}

	@Test
	void aRescueNeedsRoomOnTheInstanceItGoesToCountingOtherReplicasPrefill() {
		DispatchQueues q = waitingForA(movesEveryEvent().maxPrefillRequests(2).rescueToQueue(false));
		q.submit(request("busy-a1", 1, 500), true, outcomes);
		q.submit(request("busy-a2", 2, 500), true, outcomes);
		// b: another replica's request in prefill there (500 tokens).
		pool.instance("b").peerLoad(1, 500, 0);
		RequestTicket waiting = q.submit(request("waiting", 3, 400), true, outcomes);
		clock.advance(Duration.ofMillis(2_500));
		q.tick(clock.nanos());
		assertThat(waiting.state())
			.as("500 + 400 fit b's 1,000 tokens " + outcomes.rejected.get(waiting) + " " + outcomes.releasedIds())
			.isEqualTo(RequestTicket.State.RELEASED);
		assertThat(outcomes.released.get(outcomes.released.size() - 1).decision().instanceId()).isEqualTo("b");

		pool.instance("b").peerLoad(2, 500, 0);
		RequestTicket full = q.submit(request("no-room", 4, 100), true, outcomes);
		clock.advance(Duration.ofMillis(2_500));
		q.tick(clock.nanos());
		assertThat(full.state()).as("b is at its request limit").isEqualTo(RequestTicket.State.REJECTED);
	}

	/**
	 * A request of 600 tokens that waits behind a busy a until its wait bound (2.5 s)
	 * while b has another replica's request of 300 tokens in prefill, so no instance has
	 * room for it then.
	 */
	private RequestTicket waitForABehindBusyB(DispatchQueues q) {
		q.submit(request("busy", 1, 100), true, outcomes);
		pool.instance("b").peerLoad(1, 300, 0);
		RequestTicket waiting = q.submit(request("waiting", 2, 600), true, outcomes);
		clock.advance(Duration.ofMillis(2_500));
		q.tick(clock.nanos());
		return waiting;
	}

	@Test
	void withNoRoomAnywhereARequestAtItsWaitBoundJoinsTheQueueWithTheLowestEstimateThatFits() {
		DispatchQueues q = waitingForA(movesEveryEvent().maxPrefillRequests(1));
		RequestTicket busy = q.submit(request("busy", 1, 100), true, outcomes);
		// b has another replica's request of 300 tokens in prefill: no room now.
		pool.instance("b").peerLoad(1, 300, 0);
		RequestTicket waiting = q.submit(request("waiting", 2, 600), true, outcomes);
		clock.advance(Duration.ofMillis(2_500));
		q.tick(clock.nanos());

		// b's estimate: 300 + 600 tokens at 1 ms = 0.9 s, within the 2.5 s left.
		assertThat(waiting.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(waiting.instanceId()).isEqualTo("b");
		assertThat(waiting.decision().reason()).isEqualTo(Reason.RESCUE);
		assertThat(q.queued("b")).isEqualTo(1);
		assertThat(q.queued("a")).isZero();
		assertThat(pool.instance("b").queuedTokens()).isEqualTo(600);
		assertThat(a().queuedTokens()).isZero();
		assertThat(q.rescues()).isEqualTo(1);
		assertThat(q.rescuesQueued()).isEqualTo(1);
		assertThat(q.rejections()).isZero();

		// The peer's request got its first token: b releases it.
		pool.instance("b").peerLoad(0, 0, 0);
		q.tick(clock.nanos());
		assertThat(waiting.state()).isEqualTo(RequestTicket.State.RELEASED);
		Decision d = outcomes.released.get(outcomes.released.size() - 1).decision();
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.RESCUE);
		assertThat(waiting.placedByRescue()).as("rescued into b's queue, then released there").isTrue();
		assertThat(pool.instance("b").queuedRequests()).isZero();
		q.finish(busy);
		q.finish(waiting);
	}

	@Test
	void aRequestRescuedIntoAQueueIsRejectedOnceItCouldNoLongerStartInTimeAndNeverRescuedTwice() {
		DispatchQueues q = waitingForA(movesEveryEvent().maxPrefillRequests(1));
		RequestTicket waiting = waitForABehindBusyB(q);
		assertThat(waiting.instanceId()).isEqualTo("b");
		// Its 600 tokens take 0.62 s on b (0.6 s plus the estimator's step): started
		// later
		// than that before its 5 s it would miss them.
		long lastStart = waiting.submittedAtNanos() + Duration.ofSeconds(5).toNanos()
				- pool.estimator().estimate(0, 600);
		assertThat(lastStart - waiting.submittedAtNanos()).isEqualTo(Duration.ofMillis(4_380).toNanos());
		assertThat(q.nextDeadlineNanos()).isLessThanOrEqualTo(lastStart);
		clock.advance(Duration.ofNanos(lastStart - 1 - clock.nanos()));
		q.tick(clock.nanos());
		assertThat(waiting.state()).isEqualTo(RequestTicket.State.QUEUED);
		clock.advance(Duration.ofNanos(1));
		q.tick(clock.nanos());

		assertThat(waiting.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(outcomes.rejected.get(waiting).status()).isEqualTo(503);
		assertThat(outcomes.rejected.get(waiting).message()).contains("waited 4380 ms for its instance");
		assertThat(outcomes.rejected.get(waiting).instanceId()).isEqualTo("b");
		assertThat(q.rescues()).isEqualTo(1);
		assertThat(q.rejections()).isEqualTo(1);
		assertThat(pool.instance("b").queuedRequests()).isZero();
		assertThat(pool.instance("b").queuedTokens()).isZero();
	}

	@Test
	void aRequestRescuedIntoAQueueLeavesItWhenItsClientGoesAway() {
		DispatchQueues q = waitingForA(movesEveryEvent().maxPrefillRequests(1));
		RequestTicket waiting = waitForABehindBusyB(q);
		assertThat(waiting.instanceId()).isEqualTo("b");

		assertThat(q.cancel(waiting)).isTrue();
		assertThat(waiting.state()).isEqualTo(RequestTicket.State.CANCELLED);
		assertThat(q.queued()).isZero();
		assertThat(pool.instance("b").queuedTokens()).isZero();
		clock.advance(Duration.ofSeconds(5));
		q.tick(clock.nanos());
		assertThat(outcomes.rejected).doesNotContainKey(waiting);
	}

	@Test
	void withoutRescueToQueueARequestNoInstanceCanStartNowIsRejected() {
		DispatchQueues q = waitingForA(movesEveryEvent().maxPrefillRequests(1).rescueToQueue(false));
		RequestTicket waiting = waitForABehindBusyB(q);
		assertThat(waiting.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(q.rescues()).isZero();
		assertThat(q.rescuesQueued()).isZero();
	}

	@Test
	void aRequestIsNotRescuedIntoAQueueWhoseEstimateMissesItsSlo() {
		DispatchQueues q = waitingForA(movesEveryEvent().maxPrefillRequests(1));
		q.submit(request("busy", 1, 100), true, outcomes);
		// b: 2,000 tokens in prefill, so 2,000 + 600 take 2.6 s, past the 2.5 s left.
		pool.instance("b").peerLoad(1, 2_000, 0);
		RequestTicket waiting = q.submit(request("waiting", 2, 600), true, outcomes);
		clock.advance(Duration.ofMillis(2_500));
		q.tick(clock.nanos());
		assertThat(waiting.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(q.rescues()).isZero();
	}

	/**
	 * One instance whose prefill limit (one request) holds "long" (3,000 tokens, 3.02 s
	 * of prefill at 1 ms a token) behind "busy" for 2.2 s, with "small" queued behind it
	 * when {@code withSmall}; "busy" then gets its first token and "long" is next.
	 */
	private RequestTicket longReadyAfter2200Ms(DispatchQueues q, boolean withSmall) {
		RequestTicket busy = q.submit(request("busy", 1, 100), true, outcomes);
		RequestTicket long_ = q.submit(request("long", 2, 3_000), true, outcomes);
		if (withSmall) {
			q.submit(request("small", 3, 100), true, outcomes);
		}
		clock.advance(Duration.ofMillis(2_200));
		q.firstToken(busy);
		return long_;
	}

	@Test
	void aRequestThatWouldMissItsSloWhereItIsReleasedIsAnswered503WhileOthersWait() {
		single();
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(1));
		RequestTicket long_ = longReadyAfter2200Ms(q, true);

		// 2.2 s waited plus 3.02 s of its own prefill: 5.22 s, past its 5 s. Nowhere to
		// rescue it (one instance), so 503, and the request behind it goes at once.
		assertThat(long_.state()).isEqualTo(RequestTicket.State.REJECTED);
		Rejection r = outcomes.rejected.get(long_);
		assertThat(r.status()).isEqualTo(503);
		assertThat(r.instanceId()).isEqualTo("a");
		assertThat(r.message()).contains("waited 2200 ms for its instance")
			.contains("about 3020 ms more")
			.contains("TTFT objective of 5000 ms");
		assertThat(r.retryAfterSeconds()).isPositive();
		assertThat(outcomes.releasedIds()).containsExactly("busy", "small");
		assertThat(q.hopelessShed()).isEqualTo(1);
		assertThat(q.hopelessShedForOthers()).as("its own queue held the request behind it").isZero();
		assertThat(q.rejections()).isEqualTo(1);
		assertThat(a().queuedRequests()).isZero();
		assertThat(a().queuedTokens()).isZero();
	}

	@Test
	void aRequestThatWouldMissItsSloIsStillSentWhenNothingElseWaits() {
		single();
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(1));
		RequestTicket long_ = longReadyAfter2200Ms(q, false);
		assertThat(long_.state()).as("late beats not at all when it holds no one up")
			.isEqualTo(RequestTicket.State.RELEASED);
		assertThat(q.hopelessShed()).isZero();
	}

	@ParameterizedTest(name = "peers queue {0} tokens for its instance")
	@ValueSource(longs = { 0, 500 })
	void aRequestThatWouldMissItsSloAloneInThisReplicasQueuesIsAnswered503OnlyWhenPeersQueueForItsInstance(
			long peerQueued) {
		single();
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(1));
		// Nothing else waits in this replica's queues; a peer published its load on a,
		// with peerQueued tokens it holds queued there, which the late request would hold
		// up.
		a().peerLoad(0, 0, peerQueued);
		RequestTicket long_ = longReadyAfter2200Ms(q, false);
		assertThat(long_.state())
			.isEqualTo(peerQueued > 0 ? RequestTicket.State.REJECTED : RequestTicket.State.RELEASED);
		assertThat(q.hopelessShed()).isEqualTo(peerQueued > 0 ? 1 : 0);
		assertThat(q.hopelessShedForOthers()).isEqualTo(q.hopelessShed());
		if (peerQueued > 0) {
			assertThat(outcomes.rejected.get(long_).status()).isEqualTo(503);
		}
	}

	@ParameterizedTest(name = "peers queue {0} tokens for its instance")
	@ValueSource(longs = { 0, 500 })
	void anArrivalThatWouldMissItsSloWithNothingQueuedHereIsSentAtOnceOnlyWhenNoPeerQueuesForItsInstance(
			long peerQueued) {
		single();
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent());
		a().peerLoad(0, 0, peerQueued);
		// 5,200 tokens at 1 ms a token: past its 5 s SLO even on an idle instance.
		RequestTicket late = q.submit(request("late", 1, 5_200), true, outcomes);
		assertThat(late.state())
			.isEqualTo(peerQueued > 0 ? RequestTicket.State.REJECTED : RequestTicket.State.RELEASED);
		assertThat(q.hopelessShed()).isEqualTo(peerQueued > 0 ? 1 : 0);
		assertThat(q.book.stats.releasedAtOnce()).isEqualTo(peerQueued > 0 ? 0 : 1);
	}

	@Test
	void aRequestThatCanStillMakeItsSloIsSentEvenWhenOthersWait() {
		single();
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(1));
		RequestTicket busy = q.submit(request("busy", 1, 100), true, outcomes);
		RequestTicket long_ = q.submit(request("long", 2, 3_000), true, outcomes);
		q.submit(request("small", 3, 100), true, outcomes);
		// 1.9 s + 3.02 s = 4.92 s: within 5 s.
		clock.advance(Duration.ofMillis(1_900));
		q.firstToken(busy);
		assertThat(long_.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(q.hopelessShed()).isZero();
	}

	@Test
	void withoutShedHopelessTheRequestIsSentLate() {
		single();
		DispatchQueues off = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(1).shedHopeless(false));
		assertThat(longReadyAfter2200Ms(off, true).state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(off.hopelessShed()).isZero();
	}

	@Test
	void whenExpiredRequestsAreSentAnywaySoIsARequestThatWouldMissItsSlo() {
		single();
		DispatchQueues serveAll = queues(PinnedPolicy.to("a"),
				movesEveryEvent().maxPrefillRequests(1).expiry(QueueSettings.Expiry.DISPATCH));
		assertThat(longReadyAfter2200Ms(serveAll, true).state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(serveAll.hopelessShed()).isZero();
	}

	@Test
	void aRequestThatWouldMissItsSloWhereItIsReleasedIsRescuedWhereItCanStillMakeIt() {
		DispatchQueues q = waitingForA(movesEveryEvent().maxPrefillRequests(1));
		RequestTicket busy = q.submit(request("busy", 1, 100), true, outcomes);
		RequestTicket waiting = q.submit(request("waiting", 2, 600), true, outcomes);
		q.submit(request("other", 3, 100), true, outcomes);
		// Another replica's 2,000 tokens stay in prefill on a (no request of its own
		// counted, so a has room once busy is done): 2,000 + 600 tokens, 2.62 s, after
		// 2.45 s of waiting is past 5 s on a; b starts it at once and makes it.
		a().peerLoad(0, 2_000, 0);
		clock.advance(Duration.ofMillis(2_450));
		q.firstToken(busy);

		assertThat(waiting.state()).isEqualTo(RequestTicket.State.RELEASED);
		Decision d = outcomes.released.get(outcomes.released.indexOf(waiting)).decision();
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.RESCUE);
		assertThat(q.rescues()).isEqualTo(1);
		assertThat(q.hopelessShed()).isZero();
		assertThat(outcomes.rejected).isEmpty();
	}

	@Test
	void withHoldOnEngineQueueNothingIsReleasedWhileTheEngineQueuesRequestsThisGatewayDidNotSend() {
		single();
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().holdOnEngineQueue(true));
		RequestTicket first = q.submit(request("first", 1, 100), true, outcomes);
		assertThat(first.state()).as("no engine state scraped yet: nothing to hold for")
			.isEqualTo(RequestTicket.State.RELEASED);
		// The engine reports its one waiting request: ours, still in prefill.
		a().updateEngine(new EngineSnapshot(clock.nanos(), 1, 0, 0.1, 0, 0, 0));
		RequestTicket second = q.submit(request("second", 2, 100), true, outcomes);
		assertThat(second.state()).isEqualTo(RequestTicket.State.RELEASED);

		// Three waiting there against our two in prefill: someone else's backlog.
		a().updateEngine(new EngineSnapshot(clock.nanos(), 3, 0, 0.1, 0, 0, 0));
		RequestTicket third = q.submit(request("third", 3, 100), true, outcomes);
		assertThat(third.state()).isEqualTo(RequestTicket.State.QUEUED);
		clock.advance(Duration.ofMillis(100));
		a().updateEngine(new EngineSnapshot(clock.nanos(), 2, 0, 0.1, 0, 0, 0));
		q.tick(clock.nanos());
		assertThat(third.state()).isEqualTo(RequestTicket.State.RELEASED);

		// A stale report (older than stale-after, 2 s) holds nothing.
		a().updateEngine(new EngineSnapshot(clock.nanos(), 50, 0, 0.1, 0, 0, 0));
		RequestTicket fourth = q.submit(request("fourth", 4, 100), true, outcomes);
		assertThat(fourth.state()).isEqualTo(RequestTicket.State.QUEUED);
		clock.advance(Duration.ofMillis(2_001));
		q.tick(clock.nanos());
		assertThat(fourth.state()).isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void byDefaultTheEnginesQueueHoldsReleasesAndWithHoldOffItHoldsNothing() {
		single();
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent());
		assertThat(q.settings().holdOnEngineQueue()).isTrue();
		a().updateEngine(new EngineSnapshot(clock.nanos(), 50, 0, 0.1, 0, 0, 0));
		assertThat(q.submit(request("r", 1, 100), true, outcomes).state()).isEqualTo(RequestTicket.State.QUEUED);

		DispatchQueues off = queues(PinnedPolicy.to("a"), movesEveryEvent().holdOnEngineQueue(false));
		assertThat(off.submit(request("s", 2, 100), true, outcomes).state()).isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void withoutRescueOrForAPinnedRequestTheWaitBoundRejects() {
		DispatchQueues off = waitingForA(movesEveryEvent().maxPrefillRequests(1).rescue(false));
		off.submit(request("busy", 1, 100), true, outcomes);
		RequestTicket waiting = off.submit(request("waiting", 2, 600), true, outcomes);
		clock.advance(Duration.ofMillis(2_500));
		off.tick(clock.nanos());
		assertThat(waiting.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(off.rescues()).isZero();

		// A request continuing a stored response only a holds waits for a or nothing.
		DispatchQueues pinned = queues(PinnedPolicy.holding("a"),
				movesEveryEvent().maxPrefillRequests(1).maxWait(Duration.ofSeconds(10)));
		pinned.submit(request("busy", 1, 100), true, outcomes);
		RequestTicket held = pinned.submit(request("held", 2, 600), true, outcomes);
		clock.advance(Duration.ofMillis(2_500));
		pinned.tick(clock.nanos());
		assertThat(held.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(pinned.rescues()).isZero();
	}

	@Test
	void aRequestWithItsOwnWaitBoundExpiresByItNotByArrival() {
		DispatchQueues q = queues(PinnedPolicy.to("a"),
				movesEveryEvent().maxPrefillRequests(1).maxWait(Duration.ofSeconds(10)).maxWaitShare(0).rescue(false));
		q.submit(request("busy", 1, 100), true, outcomes);
		RequestTicket patient = q.submit(request("patient", 2, 100), true, outcomes);
		clock.advance(Duration.ofSeconds(1));
		// Arrived later, but its class gives up after 2 s; another waits a minute.
		RoutingRequest q3 = request("hurried", 3, 100);
		RequestTicket hurried = q.submit(new RoutingRequest(q3.id(), q3.blocks(), q3.sloTtftNanos(), q3.arrivalNanos(),
				Duration.ofSeconds(2).toNanos()), true, outcomes);
		RoutingRequest q4 = request("batch", 4, 100);
		RequestTicket batch = q.submit(new RoutingRequest(q4.id(), q4.blocks(), q4.sloTtftNanos(), q4.arrivalNanos(),
				Duration.ofMinutes(1).toNanos()), true, outcomes);
		assertThat(q.nextDeadlineNanos())
			.isLessThanOrEqualTo(hurried.submittedAtNanos() + Duration.ofSeconds(2).toNanos());

		clock.advance(Duration.ofSeconds(2));
		q.tick(clock.nanos());
		assertThat(hurried.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(outcomes.rejected.get(hurried).message()).contains("waited 2000 ms");
		assertThat(patient.state()).isEqualTo(RequestTicket.State.QUEUED);

		clock.advance(Duration.ofSeconds(7));
		q.tick(clock.nanos());
		assertThat(patient.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(outcomes.rejected.get(patient).message()).contains("waited 10000 ms");
		// Past the queues' bound, within its own.
		assertThat(batch.state()).isEqualTo(RequestTicket.State.QUEUED);
		clock.advance(Duration.ofSeconds(51));
		q.tick(clock.nanos());
		assertThat(batch.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(a().queuedRequests()).isZero();
	}

	@Test
	void withExpiryDispatchAnExpiredRequestIsSentAnyway() {
		DispatchQueues q = queues(PinnedPolicy.to("a"),
				movesEveryEvent().maxPrefillRequests(1)
					.maxWait(Duration.ofSeconds(10))
					.expiry(QueueSettings.Expiry.DISPATCH));
		q.submit(request("busy", 1, 100), true, outcomes);
		RequestTicket waiting = q.submit(request("waiting", 2, 100), true, outcomes);
		clock.advance(Duration.ofSeconds(10));
		q.tick(clock.nanos());

		assertThat(waiting.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(a().prefillRequests()).as("beyond the limit").isEqualTo(2);
		assertThat(outcomes.rejected).isEmpty();
	}

	@Test
	void cancellingAQueuedRequestRemovesItAtOnce() {
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(1));
		RequestTicket busy = q.submit(request("busy", 1, 100), true, outcomes);
		RequestTicket waiting = q.submit(request("waiting", 2, 300), true, outcomes);
		assertThat(a().queuedTokens()).isEqualTo(300);

		assertThat(q.cancel(waiting)).isTrue();
		assertThat(waiting.state()).isEqualTo(RequestTicket.State.CANCELLED);
		assertThat(a().queuedTokens()).isZero();
		assertThat(a().queuedRequests()).isZero();
		assertThat(a().oldestQueuedNanos()).isEqualTo(Long.MAX_VALUE);
		assertThat(q.cancel(waiting)).isFalse();
		assertThat(q.cancel(busy)).as("already released").isFalse();

		q.finish(busy);
		assertThat(outcomes.releasedIds()).containsExactly("busy");
		assertThat(outcomes.calls).doesNotContainKey(waiting);
		assertThat(a().inFlight()).isZero();
		assertThat(a().prefillTokens()).isZero();
	}

	@Test
	void finishingAQueuedRequestCancelsIt() {
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(1));
		q.submit(request("busy", 1, 100), true, outcomes);
		RequestTicket waiting = q.submit(request("waiting", 2, 300), true, outcomes);
		q.finish(waiting);
		assertThat(waiting.state()).isEqualTo(RequestTicket.State.CANCELLED);
		assertThat(q.queued()).isZero();
	}

	@Test
	void removingAnInstanceReroutesItsQueueAtOnce() {
		PinnedPolicy policy = PinnedPolicy.to("a");
		DispatchQueues q = queues(policy, movesEveryEvent().maxPrefillRequests(1));
		RequestTicket onA = q.submit(request("on-a", 1, 100), true, outcomes);
		List<RequestTicket> waiting = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			waiting.add(q.submit(request("w" + i, 10 + i, 100), true, outcomes));
		}
		InstanceState oldA = a();
		pool.updateMembership(List.of(new RingMember("b", 1)));
		q.onMembershipChanged();

		assertThat(waiting).allSatisfy(w -> assertThat(w.instanceId()).isEqualTo("b"));
		assertThat(waiting.get(0).state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(q.queued("b")).isEqualTo(2);
		assertThat(q.rerouted()).isEqualTo(3);
		assertThat(oldA.queuedRequests()).isZero();
		assertThat(oldA.queuedTokens()).isZero();
		assertThat(onA.state()).as("already sent: finishes where it is").isEqualTo(RequestTicket.State.RELEASED);

		q.finish(onA);
		for (int i = 0; i < 3; i++) {
			q.finish(waiting.get(i));
		}
		assertThat(outcomes.calls.values()).containsOnly(1);
		assertThat(outcomes.released).hasSize(4);
		assertThat(oldA.inFlight()).isZero();
		assertThat(pool.instance("b").inFlight()).isZero();
		assertThat(policy.finished).isEqualTo(4);
	}

	@Test
	void aDrainingInstanceHandsItsQueueOnAndReportsIdle() {
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(1));
		RequestTicket onA = q.submit(request("on-a", 1, 100), true, outcomes);
		RequestTicket waiting = q.submit(request("waiting", 2, 100), true, outcomes);
		a().draining(true);
		q.tick(clock.nanos());

		assertThat(waiting.instanceId()).isEqualTo("b");
		assertThat(waiting.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(q.isIdle("a")).as("one in flight").isFalse();
		RequestTicket later = q.submit(request("later", 3, 100), true, outcomes);
		assertThat(later.instanceId()).isEqualTo("b");

		q.finish(onA);
		assertThat(q.isIdle("a")).isTrue();
		assertThat(q.isIdle("b")).isFalse();
	}

	@Test
	void queuesADrainFilledReleaseInMembershipOrder() {
		List<RingMember> members = new ArrayList<>();
		for (char c = 'a'; c <= 'h'; c++) {
			members.add(new RingMember(String.valueOf(c), 1));
		}
		pool.updateMembership(members);
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(1).idlePull(false));
		q.submit(request("first", 0, 100), true, outcomes);
		List<RequestTicket> waiting = new ArrayList<>();
		for (int i = 1; i <= 24; i++) {
			// 24 x 30 tokens stay below the hotspot floor: nothing moves before the
			// drain.
			waiting.add(q.submit(request("w" + i, i, 30), true, outcomes));
		}
		assertThat(waiting).allSatisfy(w -> assertThat(w.state()).isEqualTo(RequestTicket.State.QUEUED));
		outcomes.released.clear();
		a().draining(true);
		q.tick(clock.nanos());

		// The drain moves a's queue in arrival order; each target then releases its first
		// arrival, target by target in the order of queues: every member has its queue
		// from its join, so that is the membership's order, whichever target the moves
		// reached first. (A set ordered by identity hashes released them in an order that
		// changed run to run.)
		List<String> firstReached = new ArrayList<>();
		List<String> targets = new ArrayList<>();
		for (RequestTicket w : waiting) {
			if (!targets.contains(w.instanceId())) {
				targets.add(w.instanceId());
				firstReached.add(w.request().id());
			}
		}
		assertThat(targets).hasSizeGreaterThan(3).doesNotContain("a");
		List<String> expected = new ArrayList<>();
		for (InstanceState s : pool.instances()) {
			int at = targets.indexOf(s.id());
			if (at >= 0) {
				expected.add(firstReached.get(at));
			}
		}
		assertThat(expected).as("the moves reached the targets out of membership order").isNotEqualTo(firstReached);
		assertThat(outcomes.releasedIds()).containsExactlyElementsOf(expected);
	}

	@Test
	void migratesQueuedWorkOffAHotspotUntilBalanced() {
		DispatchQueues q = queues(PinnedPolicy.to("a"), ungatedMoves().maxPrefillRequests(1));
		List<RequestTicket> all = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			all.add(q.submit(request("r" + i, i, 1_000), true, outcomes));
		}

		assertThat(q.migrations()).isPositive();
		long movedToB = all.stream().filter(r -> "b".equals(r.instanceId())).count();
		assertThat(movedToB).isEqualTo(q.migrations());
		assertThat(all.stream().filter(r -> "b".equals(r.instanceId())))
			.allSatisfy(r -> assertThat(r.decision().reason()).isEqualTo(Reason.HOTSPOT));
		assertThat(pool.isHotspot(a())).as("excess shed").isFalse();
		assertThat(movedToB).as("stops once balanced, not everything moves").isLessThan(6);
		assertThat(all).allSatisfy(r -> assertThat(r.migrations()).isLessThanOrEqualTo(1));
	}

	@Test
	void withMoveLateOnlyAHotspotMovesNothingUntilAQueuedRequestWouldMissItsSloThere() {
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(1).idlePull(false));
		InstancePool eagerPool = new InstancePool("eager", scheduler, clock);
		eagerPool.updateMembership(List.of(new RingMember("a", 1), new RingMember("b", 1)));
		DispatchQueues eager = new DispatchQueues(eagerPool, PinnedPolicy.to("a"),
				movesEveryEvent().maxPrefillRequests(1).idlePull(false).moveLateOnly(false).build());
		for (int i = 0; i < 4; i++) {
			q.submit(request("r" + i, i, 1_000), true, outcomes);
			eager.submit(request("r" + i, i, 1_000), true, outcomes);
		}
		// a is a hotspot either way; at 1 ms a token 4,000 tokens pending make every
		// queued request's estimate about 4 s, within its 5 s.
		assertThat(pool.isHotspot(a())).isTrue();
		assertThat(eager.migrations()).as("without the gate the hotspot sheds at once").isPositive();
		assertThat(q.migrations()).isZero();
		assertThat(q.queued("a")).isEqualTo(3);

		// Two more and the estimate passes 5 s: now moves go to b.
		RequestTicket r4 = q.submit(request("r4", 4, 1_000), true, outcomes);
		RequestTicket r5 = q.submit(request("r5", 5, 1_000), true, outcomes);
		assertThat(q.migrations()).isPositive();
		assertThat(List.of(r4, r5).stream().filter(r -> "b".equals(r.instanceId())).count() + q.queued("b")
				+ pool.instance("b").prefillRequests())
			.isPositive();
	}

	@Test
	void withMoveLateOnlyAHotspotMoveNeedsPrefillRoomOnTheTarget() {
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(1).idlePull(false));
		// b has another replica's request in prefill: at its limit of 1.
		pool.instance("b").peerLoad(1, 100, 0);
		for (int i = 0; i < 10; i++) {
			q.submit(request("r" + i, i, 1_000), true, outcomes);
		}
		assertThat(pool.isHotspot(a())).isTrue();
		assertThat(q.migrations()).as("late work, but b cannot take it").isZero();

		// Its prefill done, b has room: the next trigger moves late work there.
		pool.instance("b").peerLoad(0, 0, 0);
		q.submit(request("r10", 10, 1_000), true, outcomes);
		assertThat(q.migrations()).isPositive();
		assertThat(q.queued("b") + pool.instance("b").prefillRequests()).isPositive();
	}

	@Test
	void withMoveLateOnlyAnIdleCandidatePullsARequestOnlyOnceItWouldMissItsSloWhereItWaits() {
		// One request in prefill on a (1,000 tokens), then one of 3,500 tokens whose
		// other
		// candidate b is idle: about 4.5 s at a, within its 5 s, so it stays.
		DispatchQueues q = pullOnly(true, true);
		q.submit(request("busy", 1, 1_000), true, outcomes);
		RequestTicket waiting = q.submit(request("waiting", 2, 3_500), true, outcomes);
		assertThat(waiting.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(q.pulls()).isZero();

		// 0.6 s later its wait plus its estimate there pass 5 s: b pulls it.
		clock.advance(Duration.ofMillis(600));
		q.tick(clock.nanos());
		assertThat(waiting.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(waiting.instanceId()).isEqualTo("b");
		assertThat(waiting.decision().reason()).isEqualTo(Reason.IDLE_PULL);
		assertThat(q.pulls()).isEqualTo(1);
	}

	@Test
	void requestsPinnedToTheStateTheyContinueAreNeverMovedOrPulled() {
		// The hotspot of the test above, every request pinned: none moves.
		DispatchQueues q = queues(PinnedPolicy.holding("a"), movesEveryEvent().maxPrefillRequests(1));
		List<RequestTicket> all = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			all.add(q.submit(request("r" + i, i, 1_000), true, outcomes));
		}
		assertThat(pool.isHotspot(a())).isTrue();
		assertThat(q.migrations()).isZero();
		assertThat(all).allSatisfy(r -> {
			assertThat(r.pinned()).isTrue();
			assertThat(r.instanceId()).isEqualTo("a");
		});
		// Nor does an idle other candidate pull them.
		DispatchQueues pulling = new DispatchQueues(pullOnly(true).instancePool(), PinnedPolicy.holding("a"),
				movesEveryEvent().maxPrefillRequests(1).build());
		for (int i = 0; i < 6; i++) {
			pulling.submit(request("p" + i, i, 1_000), true, outcomes);
		}
		assertThat(pulling.pulls()).isZero();
		assertThat(pulling.queued("a")).isEqualTo(5);
		// A full queue does not send a pinned request to the other candidate: 429.
		InstancePool fresh = new InstancePool("full", scheduler, clock);
		fresh.updateMembership(List.of(new RingMember("a", 1), new RingMember("b", 1)));
		DispatchQueues full = new DispatchQueues(fresh, PinnedPolicy.holding("a"),
				movesEveryEvent().maxPrefillRequests(1).maxQueuedPerInstance(2).build());
		List<RequestTicket> some = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			some.add(full.submit(request("f" + i, i, 1_000), true, outcomes));
		}
		assertThat(some.get(3).state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(some).noneMatch(r -> "b".equals(r.instanceId()));
	}

	@Test
	void movesStayWithinTheMarginAndTheBoundSoWorkDoesNotPingPong() {
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(1).maxMigrations(0));
		for (int i = 0; i < 10; i++) {
			q.submit(request("r" + i, i, 1_000), true, outcomes);
		}
		assertThat(q.migrations()).isZero();

		// A move of one 100-token request gains 1 s (1100 vs 100 tokens ahead): below a
		// margin of 0.5 x 5 s SLO, so the hotspot keeps its queue.
		DispatchQueues small = new DispatchQueues(new InstancePool("small", scheduler, clock), PinnedPolicy.to("a"),
				movesEveryEvent().maxPrefillRequests(1).migrationMargin(0.5).build());
		small.instancePool().updateMembership(List.of(new RingMember("a", 1), new RingMember("b", 1)));
		for (int i = 0; i < 12; i++) {
			small.submit(request("s" + i, i, 100), true, outcomes);
		}
		assertThat(small.instancePool().isHotspot(small.instancePool().instance("a"))).isTrue();
		assertThat(small.migrations()).isZero();
	}

	/**
	 * Two instances where only idle pull moves work: no pool-mean hotspot (floor and wait
	 * bound out of reach), one request in prefill at a time.
	 */
	private DispatchQueues pullOnly(boolean idlePull) {
		return pullOnly(idlePull, false);
	}

	/** Two instances that never turn hot, so only idle pull moves work. */
	private DispatchQueues pullOnly(boolean idlePull, boolean moveLateOnly) {
		SchedulerSettings noHotspot = scheduler.toBuilder()
			.hotspotFloorTokens(Long.MAX_VALUE / 4)
			.hotspotMaxWait(Duration.ofHours(1))
			.build();
		InstancePool p = new InstancePool("pull", noHotspot, clock);
		p.updateMembership(List.of(new RingMember("a", 1), new RingMember("b", 1)));
		return new DispatchQueues(p, PinnedPolicy.to("a"),
				movesEveryEvent().maxPrefillRequests(1).idlePull(idlePull).moveLateOnly(moveLateOnly).build());
	}

	@Test
	void anIdleCandidatePullsQueuedWorkWhileItHasCapacity() {
		DispatchQueues q = pullOnly(true);
		List<RequestTicket> all = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			all.add(q.submit(request("r" + i, i, 1_000), true, outcomes));
		}
		InstanceState b = q.instancePool().instance("b");

		// b took one request (its one prefill slot), then stopped: it is no longer idle.
		assertThat(q.pulls()).isEqualTo(1);
		assertThat(q.migrations()).isEqualTo(1);
		assertThat(b.prefillRequests()).isEqualTo(1);
		assertThat(q.queued("b")).isZero();
		RequestTicket pulled = all.stream().filter(r -> "b".equals(r.instanceId())).findFirst().orElseThrow();
		assertThat(pulled.decision().reason()).isEqualTo(Reason.IDLE_PULL);
		assertThat(pulled.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(pulled.migrations()).isEqualTo(1);

		// Its first token frees the slot: b pulls the next queued request of a.
		clock.advance(Duration.ofMillis(100));
		q.firstToken(pulled);
		assertThat(q.pulls()).isEqualTo(2);
		assertThat(all.stream().filter(r -> "b".equals(r.instanceId()))).hasSize(2);
	}

	@Test
	void withoutIdlePullTheQueueWaitsForItsOwnInstance() {
		DispatchQueues q = pullOnly(false);
		for (int i = 0; i < 6; i++) {
			q.submit(request("r" + i, i, 1_000), true, outcomes);
		}
		assertThat(q.pulls()).isZero();
		assertThat(q.migrations()).isZero();
		assertThat(q.queued("a")).isEqualTo(5);
	}

	@Test
	void aNewInstanceInItsSlowStartIsNeitherPulledToNorMovedTo() {
		// Slow start made a new instance look up to ten times slower in the policy's
		// choice, but the queue's moves ranked it unscaled: a brand-new idle instance is
		// exactly what they prefer, and took a full share at once.
		for (boolean pull : List.of(true, false)) {
			SchedulerSettings slow = scheduler.toBuilder()
				.slowStart(Duration.ofSeconds(120))
				.hotspotFloorTokens(pull ? Long.MAX_VALUE / 4 : 1_000)
				.hotspotMaxWait(pull ? Duration.ofHours(1) : Duration.ofSeconds(3))
				.build();
			InstancePool p = new InstancePool("slow", slow, clock);
			p.updateMembership(List.of(new RingMember("a", 1)));
			clock.advance(Duration.ofSeconds(300));
			p.updateMembership(List.of(new RingMember("a", 1), new RingMember("b", 1)));
			DispatchQueues q = new DispatchQueues(p, PinnedPolicy.to("a"),
					movesEveryEvent().maxPrefillRequests(1).idlePull(pull).build());
			for (int i = 0; i < 8; i++) {
				q.submit(request("s" + i + pull, i, 1_000), true, outcomes);
			}
			assertThat(q.migrations()).as(pull ? "idle pull" : "hotspot moves").isZero();
			assertThat(q.queued("a")).isEqualTo(7);

			// Half way through its slow start it takes part.
			clock.advance(Duration.ofSeconds(60));
			q.submit(request("late" + pull, 99, 1_000), true, outcomes);
			assertThat(q.migrations()).as(pull ? "idle pull" : "hotspot moves").isPositive();
		}
	}

	@Test
	void instancesThatJoinedTogetherRebalanceDuringSlowStartAsWithoutIt() {
		// At a gateway's start every instance is new and none is newer than another: the
		// moves compare an instance's warmth with the source's, not with a warm pool's.
		for (boolean pull : List.of(true, false)) {
			List<Long> migrations = new ArrayList<>();
			for (Duration slowStart : List.of(Duration.ZERO, Duration.ofSeconds(120))) {
				SchedulerSettings s = scheduler.toBuilder()
					.slowStart(slowStart)
					.hotspotFloorTokens(pull ? Long.MAX_VALUE / 4 : 1_000)
					.hotspotMaxWait(pull ? Duration.ofHours(1) : Duration.ofSeconds(3))
					.build();
				InstancePool p = new InstancePool("cold", s, clock);
				p.updateMembership(List.of(new RingMember("a", 1), new RingMember("b", 1)));
				DispatchQueues q = new DispatchQueues(p, PinnedPolicy.to("a"),
						movesEveryEvent().maxPrefillRequests(1).idlePull(pull).build());
				for (int i = 0; i < 8; i++) {
					q.submit(request("c" + i + pull + slowStart, i, 1_000), true, outcomes);
				}
				migrations.add(q.migrations());
			}
			assertThat(migrations.get(0)).as(pull ? "idle pull" : "hotspot moves").isPositive();
			assertThat(migrations.get(1)).as(pull ? "idle pull" : "hotspot moves").isEqualTo(migrations.get(0));
		}
	}

	@Test
	void anIdleCandidatePullsOnlyWhenTheGainBeatsTheMargin() {
		DispatchQueues q = pullOnly(true);
		// Two 100-token requests: the queued one waits behind 100 tokens (0.1 s), far
		// below the 0.5 s margin of a 5 s SLO, so b leaves it where its cache is.
		q.submit(request("r0", 0, 100), true, outcomes);
		RequestTicket second = q.submit(request("r1", 1, 100), true, outcomes);
		assertThat(q.pulls()).isZero();
		assertThat(second.instanceId()).isEqualTo("a");
		assertThat(second.state()).isEqualTo(RequestTicket.State.QUEUED);
	}

	@Test
	void aMoveIsChargedTheCachedPrefixItGivesUpSoUncachedWorkMovesFirst() {
		DispatchQueues q = pullOnly(true, false);
		InstanceState a = q.instancePool().instance("a");
		// 2000 tokens in prefill on a; r1 has 1024 of its 1200 tokens cached there.
		q.submit(request("r0", 0, 2_000), true, outcomes);
		RoutingRequest warm = request("r1", 1, 1_200);
		a.shadow().record(Arrays.copyOf(warm.blocks().chain(), 16));
		RequestTicket r1 = q.submit(warm, true, outcomes);
		// On b it would wait for nothing but redo its 1024 cached tokens: 2.176 s here
		// against 1.2 s there is a 0.976 s gain, but 1.024 s of prefill given up.
		assertThat(r1.instanceId()).isEqualTo("a");
		assertThat(r1.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(q.pulls()).isZero();
		// An uncached request behind it loses nothing by moving: b pulls that one.
		RequestTicket r2 = q.submit(request("r2", 2, 1_200), true, outcomes);
		assertThat(q.pulls()).isEqualTo(1);
		assertThat(r2.instanceId()).isEqualTo("b");
		assertThat(r2.decision().reason()).isEqualTo(Reason.IDLE_PULL);
		assertThat(r1.instanceId()).isEqualTo("a");
	}

	@Test
	void passThroughDispatchesAtOnceThroughTheSameCallbacks() {
		DispatchQueues q = queues(PinnedPolicy.to("a"),
				movesEveryEvent().mode(DispatchMode.of("pass-through")).maxPrefillRequests(1));
		for (int i = 0; i < 5; i++) {
			q.submit(request("r" + i, i, 100), true, outcomes);
		}
		assertThat(outcomes.released).hasSize(5);
		assertThat(a().prefillRequests()).isEqualTo(5);
		assertThat(q.queued()).isZero();
		outcomes.released.forEach(q::finish);
		assertThat(a().inFlight()).isZero();
	}

	@Test
	void nonStreamingPrefillEndsAtItsEstimateWithoutCalibratingTheModel() {
		SchedulerSettings calibrating = scheduler.toBuilder().calibrationAlpha(0.5).build();
		InstancePool p = new InstancePool("ns", calibrating, clock);
		p.updateMembership(List.of(new RingMember("a", 1)));
		DispatchQueues q = new DispatchQueues(p, PinnedPolicy.to("a"), movesEveryEvent().maxPrefillRequests(1).build());
		RequestTicket first = q.submit(request("first", 1, 100), false, outcomes);
		RequestTicket second = q.submit(request("second", 2, 100), false, outcomes);
		long deadline = q.nextDeadlineNanos();
		// 100 tokens at 1 ms plus 20 ms base.
		assertThat(deadline - first.submittedAtNanos()).isEqualTo(Duration.ofMillis(120).toNanos());

		clock.advance(Duration.ofMillis(119));
		q.tick(clock.nanos());
		assertThat(second.state()).isEqualTo(RequestTicket.State.QUEUED);
		clock.advance(Duration.ofMillis(1));
		q.tick(clock.nanos());
		assertThat(second.state()).isEqualTo(RequestTicket.State.RELEASED);

		clock.advance(Duration.ofSeconds(30));
		assertThat(q.firstToken(second)).as("whole-response time is no TTFT").isEqualTo(-1);
		assertThat(p.estimator().nanosPerToken()).isEqualTo(1_000_000);
		q.finish(first);
		q.finish(second);
		assertThat(p.instance("a").prefillRequests()).isZero();
		assertThat(p.instance("a").inFlight()).isZero();
	}

	@Test
	void aListenerThatThrowsOnReleaseDoesNotLeakCounters() {
		DispatchQueues q = queues(PinnedPolicy.to("a"), movesEveryEvent());
		RequestTicket r = q.submit(request("r", 1, 100), true, DispatchListener.of((req, d) -> {
			throw new IllegalStateException("sink gone");
		}, (req, rej) -> {
		}));
		assertThat(r.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(a().inFlight()).isZero();
		assertThat(a().prefillRequests()).isZero();
	}

	@Test
	void settingsNameTheBadValue() {
		assertThatIllegalArgumentException().isThrownBy(() -> movesEveryEvent().maxPrefillRequests(0).build())
			.withMessageContaining("maxPrefillRequests must be > 0 but was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> movesEveryEvent().migrationMargin(1.5).build())
			.withMessageContaining("1.5");
		assertThatIllegalArgumentException().isThrownBy(() -> DispatchMode.of("later"))
			.withMessageContaining("'later'")
			.withMessageContaining("queue, pass-through");
		assertThat(DispatchMode.of("PASS_THROUGH")).isEqualTo(DispatchMode.PASS_THROUGH);
		assertThatIllegalArgumentException().isThrownBy(() -> new Rejection(500, "x", 1)).withMessageContaining("500");
	}

}

package io.github.dualmap.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static io.github.dualmap.core.QueueFixture.request;
import static io.github.dualmap.core.QueueFixture.ungatedMoves;
import static io.github.dualmap.core.QueueFixture.withSlo;

/**
 * Where the dispatch queues send work: overflow of a full queue, shedding, re-placement
 * after a membership change, hotspot moves and idle pull. Most cases use more than two
 * instances: with two, "the other candidate", "the next instance on ring 2" and "the
 * first accepting instance on ring 1" are all the same instance, and a wrong choice among
 * them goes unnoticed. The move mechanics are tested without
 * {@link QueueSettings#moveLateOnly()}, whose gate has tests of its own in
 * {@link DispatchQueuesTests}.
 */
class DispatchQueuesMovesTests {

	private final ManualClock clock = new ManualClock();

	private final SchedulerSettings scheduler = QueueFixture.millisecondPerToken().hotspotFloorTokens(1_000).build();

	private final Outcomes outcomes = new Outcomes();

	private InstancePool pool(SchedulerSettings settings, String... ids) {
		return QueueFixture.pool(settings, clock, ids);
	}

	private InstancePool pool(String... ids) {
		return pool(scheduler, ids);
	}

	private static void members(InstancePool pool, String... ids) {
		pool.updateMembership(Arrays.stream(ids).map(id -> new RingMember(id, 1)).toList());
	}

	/** Settings where only idle pull moves work: no pool-mean or wait-bound hotspot. */
	private SchedulerSettings noHotspot() {
		return scheduler.toBuilder().hotspotFloorTokens(Long.MAX_VALUE / 4).hotspotMaxWait(Duration.ofHours(1)).build();
	}

	/** Places each request on the instance its id starts with. */
	private static PinnedPolicy byFirstLetter() {
		return new PinnedPolicy(r -> r.id().substring(0, 1));
	}

	/** The candidate of {@code q}'s key that is not {@code here}. */
	private static String otherCandidate(InstancePool pool, RequestTicket q, String here) {
		Candidates c = pool.rings().candidates(q.key());
		return c.first().equals(here) ? c.second() : c.first();
	}

	/**
	 * The first prompt family from {@code from} on whose key's candidates on
	 * {@code pool}'s rings are the given ones, in either order.
	 */
	private static long familyWithCandidates(InstancePool pool, long from, String x, String y) {
		for (long family = from;; family++) {
			Candidates c = candidatesOf(pool, family);
			if (Set.of(c.first(), c.second()).equals(Set.of(x, y))) {
				return family;
			}
		}
	}

	private static Candidates candidatesOf(InstancePool pool, long family) {
		return pool.rings().candidates(request("probe", family, 64).blocks().keyAt(1));
	}

	// ---- admission: overflow and shedding ----

	@Test
	void aFullInstanceQueueSendsTheRequestToItsOtherCandidate() {
		InstancePool pool = pool("a", "b", "c", "d");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).maxQueuedPerInstance(1).idlePull(false).build());
		q.submit(request("r0", 1, 100), true, outcomes);
		RequestTicket r1 = q.submit(request("r1", 2, 100), true, outcomes);
		// A prompt whose first candidate is a: the overflow goes to the second one.
		long family = 3;
		while (!pool.rings().candidates(request("r2", family, 100).blocks().keyAt(1)).first().equals("a")) {
			family++;
		}
		RequestTicket r2 = q.submit(request("r2", family, 100), true, outcomes);

		assertThat(r1.instanceId()).isEqualTo("a");
		assertThat(r1.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(r2.instanceId()).isEqualTo(pool.rings().candidates(r2.key()).second());
		assertThat(r2.decision().reason()).isEqualTo(Reason.FALLBACK);
		assertThat(r2.state()).as("nothing in prefill there").isEqualTo(RequestTicket.State.RELEASED);
		assertThat(outcomes.rejected).isEmpty();
	}

	@Test
	void aRequestForAnInstanceThatStoppedAcceptingGoesToItsBestCandidate() {
		// A policy that looked before the instance started draining.
		RoutingPolicy stale = new RoutingPolicy() {
			@Override
			public String name() {
				return "stale";
			}

			@Override
			public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
				return Decision.of("a", Reason.AFFINITY, request);
			}
		};
		InstancePool pool = pool("a", "b", "c", "d");
		DispatchQueues q = new DispatchQueues(pool, stale, ungatedMoves().idlePull(false).build());
		pool.instance("a").draining(true);
		RoutingRequest r = request("r", 4, 1_000);
		Candidates c = pool.rings().candidates(r.blocks().keyAt(1));
		String home = c.first().equals("a") ? c.second() : c.first();
		pool.instance(home).shadow().record(r.blocks().chain());

		RequestTicket sent = q.submit(r, true, outcomes);

		assertThat(sent.instanceId()).isEqualTo(home);
		assertThat(sent.decision().reason()).isEqualTo(Reason.FALLBACK);
		assertThat(sent.decision().cachedTokens()).isEqualTo(999);
		assertThat(pool.instance("a").dispatched()).isZero();
		assertThat(q.rerouted()).as("placed, never queued on a").isZero();
	}

	@Test
	void aFullInstanceQueueDoesNotShedALooserRequestQueuedElsewhere() {
		InstancePool pool = pool("a", "b");
		DispatchQueues q = new DispatchQueues(pool, byFirstLetter(),
				ungatedMoves().maxPrefillRequests(1).maxQueuedPerInstance(1).idlePull(false).build());
		q.submit(request("a0", 1, 100), true, outcomes);
		q.submit(withSlo(request("a1-tight", 2, 100), Duration.ofSeconds(2)), true, outcomes);
		q.submit(request("b0", 3, 100), true, outcomes);
		RequestTicket loose = q.submit(withSlo(request("b1-loose", 4, 100), Duration.ofSeconds(60)), true, outcomes);

		// a is full of work as tight as the arrival, and its other candidate b is full.
		RequestTicket arrival = q.submit(withSlo(request("a2-tight", 5, 100), Duration.ofSeconds(2)), true, outcomes);

		assertThat(arrival.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(outcomes.rejected.get(arrival).instanceId()).isEqualTo("a");
		assertThat(loose.state()).as("queued on b, not a's to shed").isEqualTo(RequestTicket.State.QUEUED);
		assertThat(q.queued("a")).isEqualTo(1);
		assertThat(q.queued("b")).isEqualTo(1);
		assertThat(q.shed()).isZero();
	}

	@Test
	void aFullPoolShedsTheLoosestSloFirstNotTheNewest() {
		InstancePool pool = pool("a");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).maxQueuedPerPool(2).build());
		q.submit(request("running", 1, 100), true, outcomes);
		RequestTicket loosest = q.submit(withSlo(request("loose", 2, 100), Duration.ofSeconds(60)), true, outcomes);
		RequestTicket newer = q.submit(withSlo(request("mid", 3, 100), Duration.ofSeconds(30)), true, outcomes);

		RequestTicket tight = q.submit(withSlo(request("tight", 4, 100), Duration.ofSeconds(2)), true, outcomes);

		assertThat(tight.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(loosest.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(newer.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(q.shed()).isEqualTo(1);
	}

	// ---- membership changes ----

	@Test
	void aRemovedInstanceIsNoticedOnTheNextFirstToken() {
		InstancePool pool = pool(noHotspot(), "a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).idlePull(false).build());
		RequestTicket r0 = q.submit(request("r0", 1, 100), true, outcomes);
		RequestTicket r1 = q.submit(request("r1", 2, 100), true, outcomes);
		members(pool, "b");

		// No onMembershipChanged call: the next event must not release r1 to the old a.
		q.firstToken(r0);

		assertThat(r1.instanceId()).isEqualTo("b");
		assertThat(r1.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(q.rerouted()).isEqualTo(1);
	}

	@Test
	void aRemovedInstanceIsNoticedBeforeATickExpiresItsQueue() {
		InstancePool pool = pool(noHotspot(), "a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1)
					.idlePull(false)
					.maxWait(Duration.ofSeconds(1))
					.expiry(QueueSettings.Expiry.DISPATCH)
					.build());
		InstanceState oldA = pool.instance("a");
		q.submit(request("r0", 1, 100), true, outcomes);
		RequestTicket r1 = q.submit(request("r1", 2, 100), true, outcomes);
		RequestTicket r2 = q.submit(request("r2", 3, 100), true, outcomes);
		members(pool, "b");
		clock.advance(Duration.ofSeconds(2));

		q.tick(clock.nanos());

		// Expired with expiry=dispatch: sent anyway, but where the pool still is.
		assertThat(List.of(r1, r2)).allSatisfy(r -> {
			assertThat(r.instanceId()).isEqualTo("b");
			assertThat(r.state()).isEqualTo(RequestTicket.State.RELEASED);
		});
		assertThat(oldA.dispatched()).isEqualTo(1);
	}

	@Test
	void anInstanceThatJoinsPullsWorkWhoseOtherCandidateItBecame() {
		InstancePool pool = pool(noHotspot(), "a", "b", "c");
		pool.instance("b").healthy(false);
		pool.instance("c").healthy(false);
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"), ungatedMoves().maxPrefillRequests(1).build());
		List<RequestTicket> all = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			all.add(q.submit(request("r" + i, i, 1_000), true, outcomes));
		}
		assertThat(q.pulls()).isZero();

		members(pool, "a", "b", "c", "d");
		q.onMembershipChanged();

		// The queued requests' alternatives follow the new rings: d pulls one at once.
		assertThat(q.pulls()).isEqualTo(1);
		assertThat(pool.instance("d").prefillRequests()).isEqualTo(1);
		assertThat(all).filteredOn(r -> "d".equals(r.instanceId()))
			.singleElement()
			.satisfies(r -> assertThat(r.decision().reason()).isEqualTo(Reason.IDLE_PULL));
	}

	private record Orphan(InstancePool pool, DispatchQueues queues, RequestTicket request) {
	}

	/**
	 * Pool a-d, every request for a, one prefill slot, no idle pull: r1 waits behind r0
	 * on a, then a leaves (the queues are not told yet).
	 */
	private Orphan orphanOfA(SchedulerSettings settings) {
		InstancePool pool = pool(settings, "a", "b", "c", "d");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).idlePull(false).build());
		q.submit(request("r0", 1, 100), true, outcomes);
		RequestTicket r1 = q.submit(request("r1", 2, 1_000), true, outcomes);
		members(pool, "b", "c", "d");
		return new Orphan(pool, q, r1);
	}

	@Test
	void anOrphanGoesToTheNewCandidateThatHoldsItsPrefix() {
		Orphan o = orphanOfA(scheduler);
		InstancePool pool = o.pool();
		DispatchQueues q = o.queues();
		RequestTicket r1 = o.request();
		Candidates c = pool.rings().candidates(r1.key());
		// The second candidate holds its prefix: cache beats ring order.
		pool.instance(c.second()).shadow().record(r1.request().blocks().chain());

		q.onMembershipChanged();

		assertThat(r1.instanceId()).isEqualTo(c.second());
		assertThat(r1.decision().reason()).isEqualTo(Reason.FALLBACK);
		assertThat(r1.decision().cachedTokens()).isEqualTo(999);
		assertThat(r1.decision().uncachedTokens()).isEqualTo(1);
	}

	@Test
	void anOrphanWithNothingCachedGoesToTheCandidateWithTheLowerEstimate() {
		Orphan o = orphanOfA(noHotspot());
		InstancePool pool = o.pool();
		DispatchQueues q = o.queues();
		RequestTicket r1 = o.request();
		Candidates c = pool.rings().candidates(r1.key());
		// The first candidate is busy: the second is faster.
		pool.dispatch(request("busy", 9, 800), new Decision(c.first(), Reason.AFFINITY, 0, 800, -1));

		q.onMembershipChanged();

		assertThat(r1.instanceId()).isEqualTo(c.second());
		assertThat(r1.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(r1.decision().uncachedTokens()).isEqualTo(1_000);
	}

	@Test
	void anOrphanWithNothingCachedAndNoFasterCandidateGoesToItsFirstCandidate() {
		Orphan o = orphanOfA(noHotspot());
		InstancePool pool = o.pool();
		DispatchQueues q = o.queues();
		RequestTicket r1 = o.request();
		Candidates c = pool.rings().candidates(r1.key());

		q.onMembershipChanged();

		// Equal cache, equal estimate: the key's home on ring 1, not the second
		// candidate.
		assertThat(r1.instanceId()).isEqualTo(c.first());
		assertThat(r1.state()).isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void anOrphanWhoseNewCandidatesBothDrainGoesToTheFirstAcceptingInstanceOnRingOne() {
		InstancePool pool = pool(noHotspot(), "a", "b", "c", "d", "e");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).idlePull(false).build());
		// A prompt whose first accepting instance on ring 1, once a has left and its two
		// candidates drain, is not the first accepting instance in id order: "anywhere
		// that accepts" would then put it elsewhere.
		InstancePool after = QueueFixture.pool(noHotspot(), clock, "b", "c", "d", "e");
		long family = 1;
		while (!expectedFallback(after, family).equals("e")) {
			family++;
		}
		q.submit(request("r0", 0, 100), true, outcomes);
		RequestTicket r1 = q.submit(request("r1", family, 1_000), true, outcomes);
		members(pool, "b", "c", "d", "e");
		Candidates c = pool.rings().candidates(r1.key());
		pool.instance(c.first()).draining(true);
		pool.instance(c.second()).draining(true);

		q.onMembershipChanged();

		assertThat(r1.instanceId()).isEqualTo("e");
		assertThat(r1.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(r1.decision().reason()).isEqualTo(Reason.FALLBACK);
		assertThat(q.rerouted()).isEqualTo(1);
		assertThat(pool.instance(c.first()).dispatched()).isZero();
		assertThat(pool.instance(c.second()).dispatched()).isZero();
	}

	/**
	 * Where a request of {@code family} falls back when both its candidates on
	 * {@code pool} drain: the first other instance clockwise on ring 1.
	 */
	private static String expectedFallback(InstancePool pool, long family) {
		Candidates c = candidatesOf(pool, family);
		return pool.rings()
			.walk(0, request("probe", family, 64).blocks().keyAt(1),
					id -> !id.equals(c.first()) && !id.equals(c.second()));
	}

	@Test
	void aRingChangeTakesAQueuedRequestOffTheIdlePullOfTheCandidateItLost() {
		InstancePool pool = pool(noHotspot(), "a", "b");
		DispatchQueues q = new DispatchQueues(pool, byFirstLetter(), ungatedMoves().maxPrefillRequests(1).build());
		// A prompt whose candidates are a and b now, and a and c once c joins.
		long family = familyWithCandidates(QueueFixture.pool(noHotspot(), clock, "a", "b", "c"), 10, "a", "c");
		// b is busy, so it cannot pull yet.
		RequestTicket b0 = q.submit(request("b0", 0, 100), true, outcomes);
		q.submit(request("a0", 1, 2_000), true, outcomes);
		RequestTicket a1 = q.submit(request("a1", family, 1_000), true, outcomes);
		assertThat(a1.state()).isEqualTo(RequestTicket.State.QUEUED);
		// c joins, not yet accepting work.
		members(pool, "a", "b", "c");
		pool.instance("c").healthy(false);
		q.onMembershipChanged();

		q.firstToken(b0);

		// b is idle, but no longer a candidate of a1: it must not pull it.
		assertThat(a1.instanceId()).isEqualTo("a");
		assertThat(a1.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(q.pulls()).isZero();

		pool.instance("c").healthy(true);
		q.tick(clock.nanos());

		assertThat(a1.instanceId()).isEqualTo("c");
		assertThat(a1.decision().reason()).isEqualTo(Reason.IDLE_PULL);
		assertThat(q.pulls()).isEqualTo(1);
	}

	// ---- hotspot moves ----

	@Test
	void aHotspotMovesWorkToOtherCandidatesButNeverToADrainingInstance() {
		InstancePool pool = pool("a", "b", "c", "d");
		pool.instance("b").draining(true);
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).idlePull(false).build());
		List<RequestTicket> all = new ArrayList<>();
		for (int i = 0; i < 12; i++) {
			all.add(q.submit(request("r" + i, i, 1_000), true, outcomes));
		}

		List<RequestTicket> moved = all.stream().filter(r -> !"a".equals(r.instanceId())).toList();
		assertThat(moved).isNotEmpty();
		assertThat(q.migrations()).isEqualTo(moved.size());
		assertThat(moved).allSatisfy(r -> {
			assertThat(r.instanceId()).isNotEqualTo("b");
			assertThat(r.decision().reason()).isEqualTo(Reason.HOTSPOT);
			assertThat(r.migrations()).isEqualTo(1);
		});
		assertThat(pool.instance("b").dispatched()).isZero();
		// A request whose other candidate accepts work goes there; one whose other
		// candidate is the draining b goes to the next instance on ring 2.
		for (RequestTicket r : moved) {
			String other = otherCandidate(pool, r, "a");
			if (!"b".equals(other)) {
				assertThat(r.instanceId()).as(r.request().id()).isEqualTo(other);
			}
		}
		assertThat(moved).anySatisfy(r -> assertThat(otherCandidate(pool, r, "a")).isEqualTo("b"));
	}

	@Test
	void whenTheOtherCandidateIsDrainingAHotspotMovesWorkToTheNextInstanceOnRingTwo() {
		InstancePool pool = pool("a", "b", "c", "d");
		pool.instance("b").draining(true);
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).idlePull(false).build());
		// Prompts whose two candidates are a and b.
		List<RequestTicket> all = new ArrayList<>();
		for (long family = 1; all.size() < 8; family++) {
			RoutingRequest r = request("r" + family, family, 1_000);
			Candidates c = pool.rings().candidates(r.blocks().keyAt(1));
			if (Set.of(c.first(), c.second()).equals(Set.of("a", "b"))) {
				all.add(q.submit(r, true, outcomes));
			}
		}

		List<RequestTicket> moved = all.stream().filter(r -> !"a".equals(r.instanceId())).toList();
		assertThat(moved).isNotEmpty().allSatisfy(r -> {
			assertThat(r.instanceId()).isIn("c", "d");
			assertThat(r.decision().reason()).isEqualTo(Reason.HOTSPOT);
		});
		RequestTicket first = moved.get(0);
		assertThat(first.instanceId())
			.isEqualTo(pool.rings().walk(1, first.key(), id -> !id.equals("a") && !id.equals("b")));
		assertThat(pool.instance("b").dispatched()).isZero();
	}

	@Test
	void aHotspotDoesNotMoveWorkToAnotherHotspot() {
		InstancePool pool = pool("a", "b", "c", "d");
		// c is a hotspot of its own: 12k tokens against a pool mean of at most 5k.
		pool.dispatch(request("load", 99, 12_000), new Decision("c", Reason.AFFINITY, 0, 12_000, -1));
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).idlePull(false).build());
		// Prompts whose two candidates are a and c.
		List<RequestTicket> all = new ArrayList<>();
		for (long family = 1; all.size() < 8; family++) {
			RoutingRequest r = request("r" + family, family, 1_000);
			Candidates c = pool.rings().candidates(r.blocks().keyAt(1));
			if (Set.of(c.first(), c.second()).equals(Set.of("a", "c"))) {
				all.add(q.submit(r, true, outcomes));
			}
		}

		assertThat(pool.isHotspot(pool.instance("c"))).isTrue();
		assertThat(q.migrations()).isPositive();
		assertThat(all).filteredOn(r -> !"a".equals(r.instanceId()))
			.isNotEmpty()
			.allSatisfy(r -> assertThat(r.instanceId()).isIn("b", "d"));
		assertThat(pool.instance("c").dispatched()).isEqualTo(1);
	}

	@Test
	void aHotspotMovesFirstTheRequestWhosePrefixTheTargetHolds() {
		InstancePool pool = pool("a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).maxMovesPerTrigger(1).idlePull(false).build());
		pool.instance("b").healthy(false);
		q.submit(request("r0", 0, 2_000), true, outcomes);
		RequestTicket cold = q.submit(request("cold", 1, 1_000), true, outcomes);
		RoutingRequest warm = request("warm", 2, 1_000);
		pool.instance("b").shadow().record(warm.blocks().chain());
		RequestTicket held = q.submit(warm, true, outcomes);
		pool.instance("b").healthy(true);

		q.tick(clock.nanos());

		// Same size, same queue, and the cold one is older: only b's cache tells them
		// apart.
		assertThat(q.migrations()).isEqualTo(1);
		assertThat(held.instanceId()).isEqualTo("b");
		assertThat(held.decision().reason()).isEqualTo(Reason.HOTSPOT);
		assertThat(held.decision().cachedTokens()).isEqualTo(999);
		assertThat(cold.instanceId()).isEqualTo("a");
	}

	@Test
	void aHotspotMovesNothingToACandidateWhoseQueueIsFull() {
		InstancePool pool = pool("a", "b");
		DispatchQueues q = new DispatchQueues(pool, byFirstLetter(),
				ungatedMoves().maxPrefillRequests(1).maxQueuedPerInstance(2).idlePull(false).build());
		RequestTicket b0 = q.submit(request("b0", 0, 100), true, outcomes);
		q.submit(request("b1", 1, 100), true, outcomes);
		q.submit(request("b2", 2, 100), true, outcomes);
		q.submit(request("a0", 3, 3_000), true, outcomes);
		q.submit(request("a1", 4, 1_000), true, outcomes);
		q.submit(request("a2", 5, 1_000), true, outcomes);

		// b's queue is at the limit: a stays hot rather than overfill it.
		assertThat(pool.isHotspot(pool.instance("a"))).isTrue();
		assertThat(q.migrations()).isZero();
		assertThat(q.queued("a")).isEqualTo(2);
		assertThat(q.queued("b")).isEqualTo(2);

		// b0's prefill ends and b1 goes: b has room for one.
		q.firstToken(b0);

		assertThat(q.migrations()).isEqualTo(1);
		assertThat(q.queued("a")).isEqualTo(1);
		assertThat(q.queued("b")).isEqualTo(2);
	}

	// ---- the requests one pass weighs ----

	@Test
	void aPassOfTheMovesWeighsNoMoreRequestsThanItsChecks() {
		List<RequestTicket> queued = new ArrayList<>();
		DispatchQueues bounded = fourMovableOffHotspotA(1, queued);

		bounded.tick(clock.nanos());

		// One check: one request weighed, and moved.
		assertThat(bounded.migrations()).isEqualTo(1);
		assertThat(queued).filteredOn(r -> "b".equals(r.instanceId())).hasSize(1);

		bounded.tick(clock.nanos());

		assertThat(bounded.migrations()).isEqualTo(2);
	}

	@Test
	void withoutTheBoundOnChecksTheSameQueueMovesSeveralInOnePass() {
		DispatchQueues unbounded = fourMovableOffHotspotA(0, new ArrayList<>());

		unbounded.tick(clock.nanos());

		assertThat(unbounded.migrations()).isGreaterThan(1);
	}

	/**
	 * Instance a, a hotspot, with r0 in prefill and four requests queued (added to
	 * {@code queued}) whose other candidate b went down before they queued and is back: a
	 * pass of the moves may weigh {@code checks} of them (0: no bound).
	 */
	private DispatchQueues fourMovableOffHotspotA(int checks, List<RequestTicket> queued) {
		InstancePool pool = pool("a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).maxMoveChecksPerTrigger(checks).idlePull(false).build());
		pool.instance("b").healthy(false);
		q.submit(request("r0", 0, 1_000), true, outcomes);
		for (int i = 1; i <= 4; i++) {
			queued.add(q.submit(request("r" + i, i, 1_000), true, outcomes));
		}
		pool.instance("b").healthy(true);
		return q;
	}

	@Test
	void aPassThatRanOutOfChecksLeavesTheNextToStartAfterItsHotspot() {
		InstancePool pool = pool("a", "b", "c", "d");
		DispatchQueues q = new DispatchQueues(pool, byFirstLetter(),
				ungatedMoves().maxPrefillRequests(1).maxMoveChecksPerTrigger(1).idlePull(false).build());
		pool.instance("b").healthy(false);
		pool.instance("d").healthy(false);
		List<RequestTicket> onA = new ArrayList<>();
		List<RequestTicket> onC = new ArrayList<>();
		for (int i = 0; i <= 4; i++) {
			onA.add(q.submit(request("a" + i, i, 1_000), true, outcomes));
			onC.add(q.submit(request("c" + i, 10 + i, 1_000), true, outcomes));
		}
		pool.instance("b").healthy(true);
		pool.instance("d").healthy(true);
		assertThat(pool.isHotspot(pool.instance("a"))).isTrue();
		assertThat(pool.isHotspot(pool.instance("c"))).isTrue();

		q.tick(clock.nanos());

		// The pass began at a, the first queue, and its one check went there.
		assertThat(q.migrations()).isEqualTo(1);
		assertThat(onA).filteredOn(r -> !"a".equals(r.instanceId())).hasSize(1);

		q.tick(clock.nanos());

		// This one begins after a: c's turn, though a still has requests to move.
		assertThat(q.migrations()).isEqualTo(2);
		assertThat(onC).filteredOn(r -> !"c".equals(r.instanceId())).hasSize(1);
		assertThat(pool.isHotspot(pool.instance("a"))).isTrue();
	}

	// ---- the move interval ----

	@Test
	void hotspotMovesRunOncePerMoveIntervalOnTheFirstEventOrTickAfterIt() {
		InstancePool pool = pool("a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().moveInterval(Duration.ofMillis(50))
					.maxPrefillRequests(1)
					.maxMovesPerTrigger(1)
					.idlePull(false)
					.build());
		pool.instance("b").healthy(false);
		long start = clock.nanos();
		for (int i = 0; i < 10; i++) {
			q.submit(request("r" + i, i, 1_000), true, outcomes);
		}
		pool.instance("b").healthy(true);
		// The first submit ran the moves (nowhere to go then): they are due 50 ms later,
		// before any expiry or wait bound.
		assertThat(q.nextDeadlineNanos()).isEqualTo(start + Duration.ofMillis(50).toNanos());

		clock.advance(Duration.ofMillis(49));
		q.tick(clock.nanos());
		q.submit(request("r10", 10, 1_000), true, outcomes);
		assertThat(q.migrations()).isZero();

		clock.advance(Duration.ofMillis(1));
		q.submit(request("r11", 11, 1_000), true, outcomes);
		assertThat(q.migrations()).isEqualTo(1);
		q.tick(clock.nanos());
		assertThat(q.migrations()).isEqualTo(1);
		assertThat(q.nextDeadlineNanos()).isEqualTo(clock.nanos() + Duration.ofMillis(50).toNanos());

		clock.advance(Duration.ofMillis(50));
		q.tick(clock.nanos());
		assertThat(q.migrations()).isEqualTo(2);
	}

	@Test
	void anIdleCandidatePullsOncePerMoveInterval() {
		InstancePool pool = pool(noHotspot(), "a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().moveInterval(Duration.ofMillis(50)).maxPrefillRequests(1).build());
		RequestTicket r0 = q.submit(request("r0", 0, 1_000), true, outcomes);
		RequestTicket r1 = q.submit(request("r1", 1, 1_000), true, outcomes);

		// b has room and r1 would start a second sooner there, but the pull ran with
		// r0's submit, when nothing was queued.
		assertThat(r0.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(r1.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(q.pulls()).isZero();

		clock.advance(Duration.ofMillis(50));
		q.tick(clock.nanos());

		assertThat(q.pulls()).isEqualTo(1);
		assertThat(r1.instanceId()).isEqualTo("b");
		assertThat(r1.state()).isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void theMoveIntervalIsOffByDefaultAndNeverNegative() {
		assertThat(QueueSettings.ofDefaults().moveIntervalNanos()).isZero();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> QueueSettings.custom().moveInterval(Duration.ofMillis(-1)).build())
			.withMessageContaining("moveIntervalNanos must be >= 0");
	}

	@Test
	void noDeadlineWaitsForMovesWithoutAnIntervalOrWhenNothingMayMove() {
		QueueSettings everyEvent = ungatedMoves().maxPrefillRequests(1).idlePull(false).maxWaitShare(0).build();
		QueueSettings noMigrations = everyEvent.toBuilder()
			.moveInterval(Duration.ofMillis(50))
			.maxMigrations(0)
			.idlePull(true)
			.build();
		for (QueueSettings settings : List.of(everyEvent, noMigrations)) {
			InstancePool pool = pool("a", "b");
			DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"), settings);
			// Nowhere to move r1 to: it stays queued on a.
			pool.instance("b").healthy(false);
			q.submit(request("r0", 0, 1_000), true, outcomes);
			RequestTicket r1 = q.submit(request("r1", 1, 1_000), true, outcomes);

			assertThat(q.nextDeadlineNanos())
				.isEqualTo(r1.submittedAtNanos() + pool.settings().hotspotMaxWaitNanos() + 1);
		}
	}

	@Test
	void aHotspotMovesAtMostTheConfiguredNumberPerEvent() {
		InstancePool pool = pool("a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).maxMovesPerTrigger(1).idlePull(false).build());
		pool.instance("b").healthy(false);
		for (int i = 0; i < 10; i++) {
			q.submit(request("r" + i, i, 1_000), true, outcomes);
		}
		pool.instance("b").healthy(true);
		assertThat(q.migrations()).isZero();

		q.tick(clock.nanos());

		assertThat(q.migrations()).isEqualTo(1);
	}

	@Test
	void aMovedRequestIsNotMovedAgainPastTheMigrationBound() {
		InstancePool pool = pool("a", "b");
		DispatchQueues q = new DispatchQueues(pool, byFirstLetter(),
				ungatedMoves().maxPrefillRequests(1).maxMigrations(1).idlePull(false).build());
		pool.instance("b").healthy(false);
		List<RequestTicket> fromA = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			fromA.add(q.submit(request("a" + i, i, 1_000), true, outcomes));
		}
		pool.instance("b").healthy(true);
		q.tick(clock.nanos());
		List<RequestTicket> moved = fromA.stream()
			.filter(r -> "b".equals(r.instanceId()) && r.state() == RequestTicket.State.QUEUED)
			.toList();
		assertThat(moved).isNotEmpty().allSatisfy(r -> assertThat(r.migrations()).isEqualTo(1));

		// b turns into the hotspot: what came from a stays.
		for (int i = 0; i < 10; i++) {
			q.submit(request("b" + i, 100 + i, 1_000), true, outcomes);
		}
		assertThat(moved).allSatisfy(r -> {
			assertThat(r.instanceId()).isEqualTo("b");
			assertThat(r.migrations()).isEqualTo(1);
		});
	}

	@Test
	void aRequestWithoutAnSloOfItsOwnMovesOnlyBeyondTheDefaultMargin() {
		InstancePool pool = pool("a", "b");
		// No expiry at half the SLO: it waits past the 3 s hotspot bound.
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).idlePull(false).maxWaitShare(0).build());
		q.submit(request("r0", 0, 100), true, outcomes);
		RequestTicket none = q.submit(withSlo(request("none", 1, 100), Duration.ZERO), true, outcomes);
		clock.advance(Duration.ofSeconds(4));

		q.tick(clock.nanos());

		// Hot by its wait, but the move gains 0.1 s: below 10 % of the 5 s default.
		assertThat(pool.isHotspot(pool.instance("a"))).isTrue();
		assertThat(none.instanceId()).isEqualTo("a");
		assertThat(q.migrations()).isZero();
	}

	// ---- idle pull ----

	@Test
	void releasedRequestsLeaveNoStaleEntriesThatStopIdlePull() {
		InstancePool pool = pool(noHotspot(), "a", "b");
		DispatchQueues q = new DispatchQueues(pool, byFirstLetter(), ungatedMoves().maxPrefillRequests(1).build());
		RequestTicket busyB = q.submit(request("b-busy", 999, 100), true, outcomes);
		List<RequestTicket> onA = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			onA.add(q.submit(request("a" + i, 1_000 + i, 1_000), true, outcomes));
		}
		// More requests released from a than one pull looks at.
		for (int i = 0; i < 36; i++) {
			q.firstToken(onA.get(i));
			q.finish(onA.get(i));
		}
		assertThat(q.pulls()).isZero();

		q.firstToken(busyB);

		assertThat(q.pulls()).isEqualTo(1);
		assertThat(q.queued("a")).isEqualTo(2);
	}

	@Test
	void idlePullMovesAtMostTheConfiguredNumberPerEventAndSendsAtOnce() {
		InstancePool pool = pool(noHotspot(), "a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(4).maxMovesPerTrigger(1).build());
		pool.instance("b").healthy(false);
		List<RequestTicket> all = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			all.add(q.submit(request("r" + i, i, 1_000), true, outcomes));
		}
		pool.instance("b").healthy(true);

		q.tick(clock.nanos());

		assertThat(q.pulls()).isEqualTo(1);
		assertThat(all).filteredOn(r -> "b".equals(r.instanceId()))
			.singleElement()
			.satisfies(r -> assertThat(r.state()).isEqualTo(RequestTicket.State.RELEASED));
	}

	@Test
	void anIdleInstanceLooksAtNoMoreThanTheOldestRequestsOfOnePullScan() {
		InstancePool pool = pool(noHotspot(), "a", "b");
		// As many checks as the scan's requests: the scan is the bound here.
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).maxPullChecksPerTrigger(IdlePull.PULL_SCAN).build());
		q.submit(request("r0", 0, 2_000), true, outcomes);
		// The oldest requests are cached on a: moving one would give up its prefix, so
		// the idle b passes them over.
		List<RequestTicket> cached = new ArrayList<>();
		for (int i = 1; i <= IdlePull.PULL_SCAN; i++) {
			RoutingRequest r = request("cached" + i, i, 1_000);
			pool.instance("a").shadow().record(r.blocks().chain());
			cached.add(q.submit(r, true, outcomes));
		}
		// Worth pulling (2 s gained), but behind a full scan.
		RequestTicket cold = q.submit(request("cold", 999, 100), true, outcomes);

		assertThat(cold.instanceId()).isEqualTo("a");
		assertThat(q.pulls()).isZero();

		// One of the oldest goes: the cold request is now within the scan.
		q.cancel(cached.get(0));
		q.tick(clock.nanos());

		assertThat(cold.instanceId()).isEqualTo("b");
		assertThat(cold.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(q.pulls()).isEqualTo(1);
	}

	@Test
	void aPassOfTheMovesConsidersEveryRequestByDefaultAndTheBoundIsNeverNegative() {
		assertThat(QueueSettings.ofDefaults().maxMoveChecksPerTrigger()).isZero();
		assertThat(QueueSettings.ofDefaults().moveChecksPerPass()).isEqualTo(Integer.MAX_VALUE);
		assertThat(QueueSettings.custom().maxMoveChecksPerTrigger(16).build().moveChecksPerPass()).isEqualTo(16);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> QueueSettings.custom().maxMoveChecksPerTrigger(-1).build())
			.withMessageContaining("maxMoveChecksPerTrigger must be >= 0");
	}

	@Test
	void aPassOfTheIdlePullLooksAtSixteenRequestsByDefaultAndTheBoundIsNeverNegative() {
		assertThat(QueueSettings.ofDefaults().maxPullChecksPerTrigger()).isEqualTo(16);
		assertThat(QueueSettings.ofDefaults().pullChecksPerPass()).isEqualTo(16);
		assertThat(QueueSettings.custom().maxPullChecksPerTrigger(0).build().pullChecksPerPass())
			.isEqualTo(Integer.MAX_VALUE);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> QueueSettings.custom().maxPullChecksPerTrigger(-1).build())
			.withMessageContaining("maxPullChecksPerTrigger must be >= 0");
	}

	@Test
	void anIdlePullLooksAtNoMoreRequestsThanItsChecks() {
		InstancePool pool = pool(noHotspot(), "a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).maxPullChecksPerTrigger(4).build());
		q.submit(request("r0", 0, 2_000), true, outcomes);
		// The four oldest are cached on a: the idle b looks at them and passes them over.
		List<RequestTicket> cached = new ArrayList<>();
		for (int i = 1; i <= 4; i++) {
			RoutingRequest r = request("cached" + i, i, 1_000);
			pool.instance("a").shadow().record(r.blocks().chain());
			cached.add(q.submit(r, true, outcomes));
		}
		// Worth pulling, but the fifth.
		RequestTicket cold = q.submit(request("cold", 999, 100), true, outcomes);
		q.tick(clock.nanos());

		assertThat(cold.instanceId()).isEqualTo("a");
		assertThat(q.pulls()).isZero();

		// One of the four goes: the cold request is now within the checks.
		q.cancel(cached.get(0));
		q.tick(clock.nanos());

		assertThat(cold.instanceId()).isEqualTo("b");
		assertThat(q.pulls()).isEqualTo(1);
	}

	@Test
	void aPullPassThatRanOutOfChecksLeavesTheNextToStartAfterItsIdleInstance() {
		InstancePool pool = pool(noHotspot(), "a", "b", "c");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(2).maxPullChecksPerTrigger(1).build());
		pool.instance("b").healthy(false);
		pool.instance("c").healthy(false);
		// a's prefill is full; two requests could go to b, one to c, once they are back.
		q.submit(request("r0", 0, 2_000), true, outcomes);
		q.submit(request("r1", 1, 2_000), true, outcomes);
		long toB = familyWithCandidates(pool, 10, "a", "b");
		RequestTicket b1 = q.submit(request("b1", toB, 100), true, outcomes);
		RequestTicket b2 = q.submit(request("b2", familyWithCandidates(pool, toB + 1, "a", "b"), 100), true, outcomes);
		RequestTicket c1 = q.submit(request("c1", familyWithCandidates(pool, 10, "a", "c"), 100), true, outcomes);
		pool.instance("b").healthy(true);
		pool.instance("c").healthy(true);

		q.tick(clock.nanos());

		// The pass began at b, the first idle instance, and its one check went there.
		assertThat(q.pulls()).isEqualTo(1);
		assertThat(b1.instanceId()).isEqualTo("b");

		q.tick(clock.nanos());

		// This one begins after b: c's turn, though b still has room for b2.
		assertThat(q.pulls()).isEqualTo(2);
		assertThat(c1.instanceId()).isEqualTo("c");
		assertThat(b2.instanceId()).isEqualTo("a");

		q.tick(clock.nanos());

		// And then b's again.
		assertThat(q.pulls()).isEqualTo(3);
		assertThat(b2.instanceId()).isEqualTo("b");
	}

	@Test
	void anIdlePullSkipsARequestThatWouldOverflowThePrefillTokensAndTakesOneThatFits() {
		InstancePool pool = pool(noHotspot(), "a", "b", "c");
		DispatchQueues q = new DispatchQueues(pool, byFirstLetter(), ungatedMoves().maxPrefillTokens(1_000).build());
		q.submit(request("b0", 0, 400), true, outcomes);
		// Lone prompts over the token limit: a and c queue whatever comes next.
		q.submit(request("a0", 1, 5_000), true, outcomes);
		q.submit(request("c0", 2, 3_000), true, outcomes);
		// b is the other candidate of both. The first would gain more on b, but 400 +
		// 700 tokens overflow its prefill; 400 + 600 is exactly the limit.
		long bigFamily = familyWithCandidates(pool, 10, "a", "b");
		RequestTicket big = q.submit(request("a-big", bigFamily, 700), true, outcomes);
		RequestTicket fits = q.submit(request("c-fits", familyWithCandidates(pool, bigFamily + 1, "b", "c"), 600), true,
				outcomes);

		assertThat(big.instanceId()).isEqualTo("a");
		assertThat(big.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(fits.instanceId()).isEqualTo("b");
		assertThat(fits.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(q.pulls()).isEqualTo(1);
	}

	@Test
	void anIdleInstanceWithNothingInPrefillPullsAPromptOverThePrefillTokenLimit() {
		InstancePool pool = pool(noHotspot(), "a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillTokens(1_000).build());
		q.submit(request("r0", 0, 1_000), true, outcomes);
		RequestTicket huge = q.submit(request("huge", 1, 3_000), true, outcomes);

		// As a lone prompt on a would be, it is sent alone.
		assertThat(huge.instanceId()).isEqualTo("b");
		assertThat(huge.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(q.pulls()).isEqualTo(1);
	}

	@Test
	void anIdleCandidateCountsThePrefixItHoldsWhenItPulls() {
		InstancePool pool = pool(noHotspot(), "a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"), ungatedMoves().maxPrefillRequests(1).build());
		RoutingRequest warm = request("r1", 7, 2_000);
		pool.instance("b").healthy(false);
		q.submit(request("r0", 1, 300), true, outcomes);
		RequestTicket r1 = q.submit(warm, true, outcomes);
		// Cold, b would gain only the 300 tokens ahead (0.3 s, below the 0.5 s margin);
		// b holds r1's prompt, so there it also skips its 2000-token prefill.
		pool.instance("b").shadow().record(warm.blocks().chain());
		pool.instance("b").healthy(true);

		q.tick(clock.nanos());

		assertThat(r1.instanceId()).isEqualTo("b");
		assertThat(r1.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(r1.decision().cachedTokens()).isEqualTo(1_999);
	}

	@Test
	void aRequestsOwnSloSetsTheMarginAnIdlePullMustBeat() {
		// Behind 1000 tokens in prefill a 1000-token request gains 1 s on the idle b:
		// beyond 10 % of 5 s, not of 60 s.
		assertThat(pulledBehind(1_000, withSlo(request("batch", 1, 1_000), Duration.ofSeconds(60)))).isFalse();
		assertThat(pulledBehind(1_000, request("standard", 1, 1_000))).isTrue();
		// Behind 100 tokens a 100-token request gains 0.1 s: below 10 % of the 5 s
		// default that a request without an SLO of its own gets.
		assertThat(pulledBehind(100, withSlo(request("none", 1, 100), Duration.ZERO))).isFalse();
	}

	/**
	 * Whether the idle b pulls {@code r}, queued on a behind a request of {@code ahead}.
	 */
	private boolean pulledBehind(int ahead, RoutingRequest r) {
		InstancePool pool = pool(noHotspot(), "a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"), ungatedMoves().maxPrefillRequests(1).build());
		q.submit(request("ahead", 0, ahead), true, outcomes);
		RequestTicket queued = q.submit(r, true, outcomes);
		assertThat(q.pulls()).isEqualTo("b".equals(queued.instanceId()) ? 1 : 0);
		return "b".equals(queued.instanceId());
	}

	@Test
	void aRequestsOwnSloSetsTheMarginAHotspotMoveMustBeat() {
		for (boolean batch : List.of(true, false)) {
			InstancePool pool = pool("a", "b");
			DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
					ungatedMoves().maxPrefillRequests(1).idlePull(false).build());
			for (int i = 0; i < 5; i++) {
				RoutingRequest r = request("r" + i + batch, i, 1_000);
				q.submit(batch ? withSlo(r, Duration.ofSeconds(60)) : r, true, outcomes);
			}
			assertThat(pool.isHotspot(pool.instance("a")) || q.migrations() > 0).isTrue();
			// No move gains more than 4 s: beyond 10 % of 5 s, not of 60 s.
			if (batch) {
				assertThat(q.migrations()).as("60 s SLO").isZero();
			}
			else {
				assertThat(q.migrations()).as("5 s SLO").isPositive();
			}
		}
	}

}

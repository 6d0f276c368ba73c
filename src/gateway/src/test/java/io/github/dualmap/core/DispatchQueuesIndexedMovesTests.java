package io.github.dualmap.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The queue rules with their shortcuts ({@link QueueShortcuts#ALL}) against their plain
 * form ({@link PlainRules}): the moves look only at the late requests of a hotspot (the
 * first of its queue in order of lateness) and for a target only among the members that
 * are not hotspots by their wait, a cached-prefix lookup is reused while the shadow index
 * holds the same blocks, the release pass passes over parked queues, a request that
 * arrives while nothing is queued and finds room is released without queueing, the tenant
 * served next is the first of a queue's tenants kept in order of service, and a tenant
 * that starts waiting is lifted to the first of its band's waiting tenants kept by
 * counter; the plain form looks at every queued request, walks the ring, looks every
 * prefix up again, pumps every queue with requests, queues every arrival before the
 * release pass and passes over every waiting tenant (in a queue for the next, in the pool
 * for a lift). Random sequences of arrivals of three SLO classes (so lateness order
 * differs from arrival order), some avoiding an instance, first tokens, completions,
 * ticks, draining, membership changes, peers' published load, engine snapshots and peers'
 * releases, under both TTFT models, with one tenant or four sharing the queues by weight
 * and priority (their charges corrected to the output and credited with peers' service),
 * fed to both forms: every release (instance, reason, cached prefix), rejection and
 * counter is the same after every step, and every queue the shortcut form has parked
 * would release nothing if it were pumped.
 */
class DispatchQueuesIndexedMovesTests {

	private static final String[] IDS = { "a", "b", "c", "d", "e" };

	// Tenants of half the sequences: fair shares with three weights and two priority
	// bands.
	private static final Tenant[] TENANTS = { new Tenant("a", 1, 0), new Tenant("b", 2, 0), new Tenant("c", 1, 1),
			new Tenant("d", 3, 0) };

	// 500 ms: some prompts miss it with nothing else waiting (the hopeless rules).
	private static final Duration[] SLOS = { Duration.ofSeconds(5), Duration.ofSeconds(2), Duration.ofSeconds(30),
			Duration.ofMillis(500) };

	@Test
	void indexedMovesDecideAsTheFullScan() {
		long moves = 0;
		long pulls = 0;
		long rescues = 0;
		long parked = 0;
		long woken = 0;
		long passedOver = 0;
		long atOnce = 0;
		for (int seed = 0; seed < 120; seed++) {
			Run reference = new Run(seed, new PlainRules());
			// Every member takes few moves here: the targets are also looked for among
			// the young members in three runs of eight, as when few of many are. In two
			// of eight, queues keep their tenants in order from two or four waiting (the
			// product does from 16, more than these sequences have).
			QueueShortcuts shortcuts = switch (seed % 8) {
				case 5 -> new TenantsInOrderFrom(2);
				case 7 -> new TenantsInOrderFrom(4);
				default -> seed % 4 < 2 ? QueueShortcuts.ALL : new TargetsAmongYoung();
			};
			Run indexed = new Run(seed, shortcuts);
			SplittableRandom random = new SplittableRandom(seed);
			for (int step = 0; step < 400; step++) {
				long action = random.nextLong();
				List<InstanceQueue> parkedBefore = indexed.queues.book.nonEmpty.stream()
					.filter(iq -> iq.parked)
					.toList();
				reference.apply(action);
				indexed.apply(action);
				woken += parkedBefore.stream().filter(iq -> !iq.parked).count();
				assertThat(indexed.log).as("seed %d, step %d", seed, step).isEqualTo(reference.log);
				assertThat(indexed.counters()).as("seed %d, step %d", seed, step).isEqualTo(reference.counters());
				parked += indexed.parkedThatWouldReleaseNothing(seed, step);
				passedOver += indexed.passedOverThatHaveNoRoom(seed, step);
				assertThat(reference.queues.book.unparked).as("the plain form parks nothing")
					.containsAll(reference.queues.book.nonEmpty);
			}
			atOnce += indexed.queues.book.stats.releasedAtOnce();
			assertThat(reference.queues.book.stats.releasedAtOnce()).isZero();
			moves += reference.queues.migrations() - reference.queues.pulls();
			pulls += reference.queues.pulls();
			rescues += reference.queues.rescues();
		}
		// The sequences do exercise the moves, the pulls and the rescue.
		assertThat(moves).isGreaterThan(200);
		assertThat(pulls).isGreaterThan(50);
		assertThat(rescues).isGreaterThan(50);
		// And the release pass did pass over parked queues, which were woken again.
		assertThat(parked).isGreaterThan(5_000);
		assertThat(woken).isGreaterThan(500);
		// And requests arriving with nothing queued were released without queueing.
		assertThat(atOnce).isGreaterThan(1_000);
		// And the moves had late requests to pass over as without room on their other
		// candidate.
		assertThat(passedOver).isGreaterThan(1_000);
	}

	@Test
	void shadowIndexVersionMovesWithTheBlocksHeldOnly() {
		ShadowKvIndex shadow = new ShadowKvIndex(4);
		long v0 = shadow.version();
		shadow.peekMatchedBlocks(new long[] { 1, 2 });
		shadow.matchedBlocks(new long[] { 1, 2 });
		assertThat(shadow.version()).isEqualTo(v0);
		shadow.record(new long[] { 1, 2 });
		long v1 = shadow.version();
		assertThat(v1).isNotEqualTo(v0);
		shadow.matchedBlocks(new long[] { 1, 2 });
		assertThat(shadow.version()).isEqualTo(v1);
		shadow.resize(8);
		long v2 = shadow.version();
		assertThat(v2).isNotEqualTo(v1);
		shadow.resize(8);
		assertThat(shadow.version()).isEqualTo(v2);
		shadow.clear();
		assertThat(shadow.version()).isNotEqualTo(v2);
	}

	/** Every rule in its plain form: no shortcut taken. */
	static final class PlainRules extends QueueShortcuts {

		@Override
		boolean reuseCachedPrefix() {
			return false;
		}

		@Override
		boolean releaseAtOnce() {
			return false;
		}

		@Override
		boolean lateRequestsOnly() {
			return false;
		}

		@Override
		boolean estimateOncePerQueue() {
			return false;
		}

		@Override
		boolean skipEvacuationWhileAllAccept() {
			return false;
		}

		@Override
		boolean parkQueues() {
			return false;
		}

		@Override
		boolean targetsAmongYoung() {
			return false;
		}

		@Override
		int orderTenantsFrom() {
			return Integer.MAX_VALUE;
		}

		@Override
		boolean orderedFloor() {
			return false;
		}

	}

	/** Every shortcut, a move's target always looked for among the young members. */
	static final class TargetsAmongYoung extends QueueShortcuts {

		@Override
		boolean targetsAmongYoung(int young, int members) {
			return true;
		}

	}

	/**
	 * Every shortcut, a queue's tenants kept in order from {@code from} waiting there.
	 */
	static final class TenantsInOrderFrom extends QueueShortcuts {

		private final int from;

		TenantsInOrderFrom(int from) {
			this.from = from;
		}

		@Override
		int orderTenantsFrom() {
			return this.from;
		}

	}

	/** One pool with its queues, driven by the actions of a sequence. */
	private static final class Run {

		final ManualClock clock = new ManualClock();

		final InstancePool pool;

		final DispatchQueues queues;

		final List<String> log = new ArrayList<>();

		final List<RequestTicket> all = new ArrayList<>();

		// Each engine's prefix-cache query counter: it grows by the uncached tokens it
		// admits, so the estimated backlog is sometimes someone else's prompt in prefill.
		final Map<String, Double> queried = new java.util.HashMap<>();

		final boolean[] member = { true, true, true, true, false };

		final boolean tenants;

		// Whether peers publish their load (replica sync); without, the engines'
		// counters are all a gateway knows of other senders.
		final boolean peers;

		private final DispatchListener listener = new DispatchListener() {
			@Override
			public void released(RequestTicket request, Decision decision, InstancePool.InFlight dispatch) {
				log.add("sent " + request.request().id() + " to " + decision.instanceId() + " " + decision.reason()
						+ " cached " + decision.cachedTokens() + " at " + clock.nanos());
			}

			@Override
			public void rejected(RequestTicket request, Rejection rejection) {
				log.add("rejected " + request.request().id() + " " + rejection.status() + " at " + clock.nanos());
			}
		};

		Run(int seed, QueueShortcuts shortcuts) {
			tenants = seed % 8 >= 4;
			peers = seed % 3 != 0;
			SchedulerSettings scheduler = SchedulerSettings.custom()
				.prefillNanosPerToken(200_000)
				.hotspotFloorTokens(500)
				.hotspotMaxWait(Duration.ofMillis(300))
				.ttftModel(seed % 2 == 0 ? TtftModel.LINEAR : TtftModel.ATTENTION)
				.build();
			pool = new InstancePool("p", scheduler, clock);
			pool.updateMembership(members());
			PinnedPolicy policy = new PinnedPolicy(r -> IDS[Math.floorMod(r.id().hashCode(), 4)]);
			QueueSettings settings = QueueSettings.custom()
				.maxPrefillRequests(3)
				.maxPrefillTokens(4_000)
				.maxQueuedPerInstance(12)
				.maxQueuedPerPool(40)
				.maxWait(Duration.ofSeconds(4))
				// No bound on the requests a pass considers: the bound is a rule, not a
				// shortcut, and the shortcuts consider fewer, so the two forms would run
				// out at different places.
				.maxMoveChecksPerTrigger(0)
				.build();
			queues = new DispatchQueues(pool, policy, settings, FairnessSettings.ofDefaults(), shortcuts);
		}

		void apply(long action) {
			int kind = (int) Math.floorMod(action, 23);
			int param = (int) Math.floorMod(action >>> 8, 1_000_000);
			if (kind < 9) {
				clock.advance(Duration.ofMillis(param % 40));
				submit(param);
			}
			else if (kind < 12) {
				released(param).ifPresent(queues::firstToken);
			}
			else if (kind < 15) {
				released(param).ifPresent(q -> {
					queues.firstToken(q);
					queues.finish(q);
					// Its tenant's charge corrected to its output, up or down.
					queues.reportOutput(q, param / 3 % 400);
				});
			}
			else if (kind < 18) {
				clock.advance(Duration.ofMillis(10 + param % 400));
				queues.tick(clock.nanos());
			}
			else if (kind == 18) {
				InstanceState s = pool.instance(IDS[param % IDS.length]);
				if (s != null) {
					s.draining(!s.draining());
				}
			}
			else if (kind == 20) {
				// Peers publish their load (now and then none, so holds apply again
				// elsewhere).
				InstanceState s = pool.instance(IDS[param % IDS.length]);
				if (s != null && peers && param % 3 != 0) {
					s.peerLoad(param / 7 % 3, param / 21 % 3_000, param / 13 % 2_000);
				}
				// And the service they released for a tenant.
				Tenant t = TENANTS[param % TENANTS.length];
				queues.creditRemoteService(Map.of(t.priority() + ":" + t.name(), (double) (param / 5 % 2_000)));
			}
			else if (kind == 21) {
				InstanceState s = pool.instance(IDS[param % IDS.length]);
				if (s != null) {
					// Waiting and running counts and admitted tokens that sometimes
					// exceed this gateway's: another sender's requests and prompts.
					double q = queried.merge(s.id(), (double) (param / 3 % 4 * 1_500), Double::sum);
					s.updateEngine(new EngineSnapshot(clock.nanos(), param / 7 % 4, param / 5 % 6, 0.5, q, 0, 0));
				}
			}
			else if (kind == 22) {
				// A peer's release of a family's prefix.
				InstanceState s = pool.instance(IDS[param % IDS.length]);
				if (s != null) {
					long family = param / 7 % 6;
					long[] chain = new long[4 + param / 11 % 40];
					for (int i = 0; i < chain.length; i++) {
						chain[i] = family * 1_000_000 + i;
					}
					pool.recordElsewhere(s, chain);
				}
			}
			else {
				member[param % IDS.length] = !member[param % IDS.length];
				if (pool.updateMembership(members())) {
					queues.onMembershipChanged();
				}
			}
		}

		private void submit(int param) {
			int tokens = 100 + param % 2_900;
			long family = param % 6;
			long[] chain = new long[Math.max(1, tokens / 64)];
			for (int i = 0; i < chain.length; i++) {
				chain[i] = family * 1_000_000 + (i < 4 + param % 8 ? i : param * 131L + i);
			}
			String id = "r" + all.size();
			RoutingRequest r = new RoutingRequest(id, new PromptBlocks(chain, 64, tokens),
					SLOS[param / 7 % SLOS.length].toNanos(), clock.nanos());
			if (tenants) {
				r = r.withTenant(TENANTS[param / 17 % TENANTS.length], 0);
			}
			// Now and then it must avoid an instance other than the one the policy picks.
			Set<String> avoid = param % 9 == 0 ? Set.of(IDS[(Math.floorMod(id.hashCode(), 4) + 1) % IDS.length])
					: Set.of();
			all.add(queues.submit(r.placed(avoid, null, false), param % 5 != 0, listener));
		}

		private java.util.Optional<RequestTicket> released(int param) {
			List<RequestTicket> sent = all.stream()
				.filter(q -> q.state() == RequestTicket.State.RELEASED && q.dispatch() != null
						&& !q.dispatch().isFinished())
				.toList();
			return sent.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(sent.get(param % sent.size()));
		}

		/**
		 * How many queued requests the next hotspot moves would pass over as found
		 * without room on their other candidate (InstanceQueue.MoveGroup); fails unless
		 * that candidate, when it still takes moves, has no room for each of them.
		 */
		int passedOverThatHaveNoRoom(int seed, int step) {
			QueueBook book = queues.book;
			int n = 0;
			for (InstanceQueue iq : book.queues.values()) {
				assertThat(iq.withoutOther.first)
					.isSameAs(iq.withoutOther.byLateness.isEmpty() ? null : iq.withoutOther.byLateness.first());
				for (InstanceQueue.MoveGroup g : iq.byOther.values()) {
					assertThat(g.first).as("seed %d, step %d: a group's first", seed, step)
						.isSameAs(g.byLateness.first());
					InstanceState other = g.other;
					if (g.lookedUpTo == null || g.noRoomAt != other.roomChanges() || pool.isHotspot(other)
							|| !other.acceptsNewWork() || pool.instance(other.id()) != other) {
						continue;
					}
					for (RequestTicket q : g.byLateness.headSet(g.lookedUpTo, true)) {
						if (g.withRoom.contains(q)) {
							continue;
						}
						n++;
						if (!book.movable(q) || book.gate.full(other)) {
							continue;
						}
						int uncached = Math.max(0, q.request().promptTokens() - book.cachedTokens(q, other));
						assertThat(book.hasRoom(other, uncached))
							.as("seed %d, step %d: %s passed over though %s has room", seed, step, q.request().id(),
									other)
							.isFalse();
					}
				}
			}
			return n;
		}

		/**
		 * How many queues with requests the next release pass passes over; fails unless
		 * each would release nothing (its instance full, or no room for the request it
		 * would take next).
		 */
		int parkedThatWouldReleaseNothing(int seed, int step) {
			QueueBook book = queues.book;
			int n = 0;
			for (InstanceQueue iq : book.nonEmpty) {
				if (book.unparked.contains(iq)) {
					continue;
				}
				assertThat(iq.parked).as("seed %d, step %d: %s neither parked nor looked at", seed, step, iq.state)
					.isTrue();
				if (!book.passesOver(iq)) {
					// Woken since: the next pass looks at it.
					continue;
				}
				n++;
				InstanceState s = iq.state;
				if (book.gate.full(s)) {
					continue;
				}
				long now = pool.now();
				RequestTicket next = book.fair.enabled() ? book.fair.next(iq, now)
						: now >= iq.byAged.first().agedAtNanos ? iq.byAged.first() : iq.byPriority.first();
				int uncached = Math.max(0, next.request().promptTokens() - book.cachedTokens(next, s));
				assertThat(book.hasRoom(s, uncached))
					.as("seed %d, step %d: parked %s has room for %s", seed, step, s, next.request().id())
					.isFalse();
			}
			return n;
		}

		List<Long> counters() {
			return List.of((long) queues.queued(), queues.releases(), queues.rejections(), queues.migrations(),
					queues.pulls(), queues.rescues(), queues.rescuesQueued(), queues.hopelessShed(), queues.rerouted(),
					queues.shed());
		}

		private List<RingMember> members() {
			List<RingMember> list = new ArrayList<>();
			for (int i = 0; i < IDS.length; i++) {
				if (member[i]) {
					list.add(new RingMember(IDS[i], 1));
				}
			}
			return list;
		}

	}

}

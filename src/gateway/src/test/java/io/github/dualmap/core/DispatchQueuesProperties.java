package io.github.dualmap.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random sequences of submit (three SLO classes), cancel, first token, finish, tick,
 * membership changes and draining, with and without idle pull, from three tenants of
 * different weights and bands: every request ends exactly once, nothing is sent twice,
 * counters never go negative and all return to zero once everything finished, the
 * tenants' queued counts with them.
 */
class DispatchQueuesProperties {

	private static final String[] IDS = { "a", "b", "c", "d" };

	// Three SLO classes: aging in proportion and shedding for tighter arrivals take part.
	private static final Duration[] SLOS = { Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ofSeconds(60) };

	// Tenants of two bands and two weights: fair shares and shedding by band take part.
	private static final Tenant[] TENANTS = { new Tenant("a", 1, 0), new Tenant("b", 3, 0), new Tenant("c", 1, 1) };

	@Property(tries = 200)
	void everyRequestEndsExactlyOnceAndCountersReturnToZero(
			@ForAll @Size(max = 120) List<@IntRange(min = 0, max = 9_999) Integer> actions, @ForAll boolean passThrough,
			@ForAll boolean idlePull, @ForAll boolean rescueToQueue) {
		ManualClock clock = new ManualClock();
		SchedulerSettings scheduler = SchedulerSettings.custom()
			.prefillNanosPerToken(1_000_000)
			.hotspotFloorTokens(500)
			.build();
		InstancePool pool = new InstancePool("p", scheduler, clock);
		boolean[] member = { true, true, true, false };
		pool.updateMembership(members(member));
		Map<InstanceState, Boolean> everSeen = new IdentityHashMap<>();
		pool.instances().forEach(s -> everSeen.put(s, true));
		PinnedPolicy policy = new PinnedPolicy(r -> IDS[Math.floorMod(r.id().hashCode(), IDS.length)]);
		QueueSettings settings = QueueSettings.custom()
			.mode(passThrough ? DispatchMode.PASS_THROUGH : DispatchMode.QUEUE)
			.maxPrefillRequests(2)
			.maxPrefillTokens(1_500)
			.maxQueuedPerInstance(6)
			.maxQueuedPerPool(15)
			.maxWait(Duration.ofSeconds(8))
			.idlePull(idlePull)
			.rescueToQueue(rescueToQueue)
			.expiry(actions.size() % 2 == 0 ? QueueSettings.Expiry.REJECT : QueueSettings.Expiry.DISPATCH)
			.build();
		DispatchQueues queues = new DispatchQueues(pool, policy, settings);
		Outcomes outcomes = new Outcomes();
		List<RequestTicket> all = new ArrayList<>();
		List<RequestTicket> cancelled = new ArrayList<>();

		for (int v : actions) {
			int param = v / 8;
			switch (v % 8) {
				case 0, 1 -> {
					int tokens = 50 + param * 7 % 1_200;
					long family = param % 5;
					long[] chain = new long[Math.max(1, tokens / 64)];
					for (int i = 0; i < chain.length; i++) {
						chain[i] = family * 1_000 + (i < 3 ? i : param * 31L + i);
					}
					RoutingRequest r = new RoutingRequest("r" + all.size(), new PromptBlocks(chain, 64, tokens),
							SLOS[param % SLOS.length].toNanos(), clock.nanos())
						.withTenant(TENANTS[param / 3 % TENANTS.length], param % 2 == 0 ? 0 : 40);
					all.add(queues.submit(r, param % 3 != 0, outcomes));
				}
				case 2 -> pick(all, param).ifPresent(q -> {
					if (queues.cancel(q)) {
						cancelled.add(q);
					}
				});
				case 3 -> pick(all, param).ifPresent(queues::firstToken);
				case 4 -> pick(all, param).ifPresent(q -> {
					if (q.state() == RequestTicket.State.QUEUED) {
						cancelled.add(q);
					}
					queues.finish(q);
					queues.reportOutput(q, param % 100);
				});
				case 5 -> {
					clock.advance(Duration.ofMillis(50L * (param % 60)));
					queues.tick(clock.nanos());
				}
				case 6 -> {
					member[param % IDS.length] = !member[param % IDS.length];
					if (pool.updateMembership(members(member))) {
						pool.instances().forEach(s -> everSeen.put(s, true));
						queues.onMembershipChanged();
					}
				}
				default -> {
					InstanceState s = pool.instance(IDS[param % IDS.length]);
					if (s != null) {
						s.draining(!s.draining());
					}
				}
			}
			everSeen.keySet().forEach(DispatchQueuesProperties::assertNonNegative);
			assertThat(outcomes.calls.values()).allMatch(n -> n == 1);
			assertThat(all).allMatch(q -> q.migrations() <= settings.maxMigrations());
			assertThat(queues.pulls()).isLessThanOrEqualTo(queues.migrations());
			assertThat(queues.rescuesQueued()).isLessThanOrEqualTo(queues.rescues());
			if (!rescueToQueue) {
				assertThat(queues.rescuesQueued()).isZero();
			}
			if (!idlePull || passThrough) {
				assertThat(queues.pulls()).isZero();
			}
		}

		// Wind down: finish everything sent until nothing is queued; cancel nothing.
		for (int round = 0; round < 1_000 && (queues.queued() > 0 || anyUnfinished(all)); round++) {
			for (RequestTicket q : List.copyOf(outcomes.released)) {
				queues.firstToken(q);
				queues.finish(q);
			}
			if (queues.queued() > 0 && pool.instances().stream().noneMatch(InstanceState::acceptsNewWork)) {
				clock.advance(Duration.ofSeconds(1));
				queues.tick(clock.nanos());
			}
		}

		assertThat(queues.queued()).isZero();
		assertThat(queues.tenantShares()).allMatch(t -> t.queued() == 0 && t.share() >= 0 && t.share() <= 1 + 1e-9);
		for (RequestTicket q : all) {
			int calls = outcomes.calls.getOrDefault(q, 0);
			if (cancelled.contains(q)) {
				assertThat(q.state()).isEqualTo(RequestTicket.State.CANCELLED);
				assertThat(calls).isZero();
			}
			else {
				assertThat(calls).as("outcomes of %s", q).isEqualTo(1);
				assertThat(q.state()).isIn(RequestTicket.State.RELEASED, RequestTicket.State.REJECTED);
			}
		}
		long released = all.stream().filter(q -> q.state() == RequestTicket.State.RELEASED).count();
		assertThat(queues.releases()).isEqualTo(released);
		assertThat(everSeen.keySet().stream().mapToLong(InstanceState::dispatched).sum()).as("none sent twice")
			.isEqualTo(released);
		assertThat(policy.dispatched).isEqualTo(released);
		assertThat(policy.finished).isEqualTo(released);
		for (InstanceState s : everSeen.keySet()) {
			assertThat(s.queuedRequests()).isZero();
			assertThat(s.queuedTokens()).isZero();
			assertThat(s.prefillRequests()).isZero();
			assertThat(s.prefillTokens()).isZero();
			assertThat(s.inFlight()).isZero();
			assertThat(s.oldestQueuedNanos()).isEqualTo(Long.MAX_VALUE);
		}
	}

	private static boolean anyUnfinished(List<RequestTicket> all) {
		return all.stream()
			.anyMatch(q -> q.state() == RequestTicket.State.RELEASED && q.dispatch() != null
					&& !q.dispatch().isFinished());
	}

	private static java.util.Optional<RequestTicket> pick(List<RequestTicket> all, int param) {
		return all.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(all.get(param % all.size()));
	}

	private static List<RingMember> members(boolean[] member) {
		List<RingMember> list = new ArrayList<>();
		for (int i = 0; i < IDS.length; i++) {
			if (member[i]) {
				list.add(new RingMember(IDS[i], 1));
			}
		}
		return list;
	}

	private static void assertNonNegative(InstanceState s) {
		assertThat(s.queuedRequests()).isNotNegative();
		assertThat(s.queuedTokens()).isNotNegative();
		assertThat(s.prefillRequests()).isNotNegative();
		assertThat(s.prefillTokens()).isNotNegative();
		assertThat(s.inFlight()).isNotNegative();
	}

}

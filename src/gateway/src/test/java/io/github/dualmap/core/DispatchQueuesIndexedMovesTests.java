package io.github.dualmap.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The moves look only at the late requests of a hotspot (the first of its queue in order
 * of lateness) and reuse a cached-prefix lookup while the shadow index holds the same
 * blocks; the plain form ({@code QueueBook.reference}) looks at every queued request and
 * looks every prefix up again. Random sequences of arrivals of three SLO classes (so
 * lateness order differs from arrival order), some avoiding an instance, first tokens,
 * completions, ticks, draining and membership changes, under both TTFT models, fed to
 * both forms: every release (instance, reason, cached prefix), rejection and counter is
 * the same after every step.
 */
class DispatchQueuesIndexedMovesTests {

	private static final String[] IDS = { "a", "b", "c", "d", "e" };

	private static final Duration[] SLOS = { Duration.ofSeconds(5), Duration.ofSeconds(2), Duration.ofSeconds(30) };

	@Test
	void indexedMovesDecideAsTheFullScan() {
		long moves = 0;
		long pulls = 0;
		long rescues = 0;
		for (int seed = 0; seed < 120; seed++) {
			Run reference = new Run(seed, true);
			Run indexed = new Run(seed, false);
			SplittableRandom random = new SplittableRandom(seed);
			for (int step = 0; step < 400; step++) {
				long action = random.nextLong();
				reference.apply(action);
				indexed.apply(action);
				assertThat(indexed.log).as("seed %d, step %d", seed, step).isEqualTo(reference.log);
				assertThat(indexed.counters()).as("seed %d, step %d", seed, step).isEqualTo(reference.counters());
			}
			moves += reference.queues.migrations() - reference.queues.pulls();
			pulls += reference.queues.pulls();
			rescues += reference.queues.rescues();
		}
		// The sequences do exercise the moves, the pulls and the rescue.
		assertThat(moves).isGreaterThan(200);
		assertThat(pulls).isGreaterThan(50);
		assertThat(rescues).isGreaterThan(50);
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

	/** One pool with its queues, driven by the actions of a sequence. */
	private static final class Run {

		final ManualClock clock = new ManualClock();

		final InstancePool pool;

		final DispatchQueues queues;

		final List<String> log = new ArrayList<>();

		final List<RequestTicket> all = new ArrayList<>();

		final boolean[] member = { true, true, true, true, false };

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

		Run(int seed, boolean reference) {
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
				.build();
			queues = new DispatchQueues(pool, policy, settings);
			queues.book.reference = reference;
		}

		void apply(long action) {
			int kind = (int) Math.floorMod(action, 20);
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

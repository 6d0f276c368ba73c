package io.github.dualmap.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static io.github.dualmap.core.QueueFixture.request;
import static io.github.dualmap.core.QueueFixture.ungatedMoves;

/**
 * What the dispatch queues must get right when the world changes under them: a request
 * that must avoid an instance (it failed there), instances that stop accepting work while
 * requests wait for them, and membership changed by another thread in the middle of a
 * queue operation.
 */
class DispatchQueuesHazardsTests {

	private final AtomicLong now = new AtomicLong(1_000_000_000L);

	private final SchedulerSettings scheduler = QueueFixture.millisecondPerToken().hotspotFloorTokens(1_000).build();

	private final Outcomes outcomes = new Outcomes();

	private InstancePool pool(NanoClock clock, String... ids) {
		return QueueFixture.pool(this.scheduler, clock, ids);
	}

	private InstancePool pool(String... ids) {
		return pool(this.now::get, ids);
	}

	@Test
	void anIdleInstanceARequestMustAvoidDoesNotTakeIt() {
		InstancePool pool = pool("a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("b"), ungatedMoves().maxPrefillRequests(1).build());
		RequestTicket busy = q.submit(request("busy", 1, 1_000), true, this.outcomes);
		assertThat(busy.instanceId()).isEqualTo("b");

		// The retry of a request whose connection to a failed waits for b, while a idles.
		RequestTicket retry = q.submit(request("retry", 2, 1_000).placed(Set.of("a"), null, false), true,
				this.outcomes);
		assertThat(retry.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(retry.instanceId()).isEqualTo("b");
		assertThat(q.migrations()).isZero();

		// Another request queued on b moves to idle a, as it should.
		RequestTicket other = q.submit(request("other", 3, 1_000), true, this.outcomes);
		assertThat(other.instanceId()).isEqualTo("a");
		assertThat(q.migrations()).isEqualTo(1);
		assertThat(retry.instanceId()).isEqualTo("b");

		q.firstToken(busy);
		assertThat(retry.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(retry.instanceId()).isEqualTo("b");
	}

	@Test
	void aHotspotMovesNoQueuedRequestToAnInstanceItMustAvoid() {
		InstancePool pool = pool("a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("b"),
				ungatedMoves().maxPrefillRequests(1).idlePull(false).build());
		q.submit(request("busy", 1, 1_000), true, this.outcomes);
		List<RequestTicket> avoiding = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			avoiding.add(q.submit(request("avoid" + i, 10 + i, 1_000).placed(Set.of("a"), null, false), true,
					this.outcomes));
		}
		assertThat(pool.isHotspot(pool.instance("b"))).isTrue();
		assertThat(avoiding).allSatisfy(r -> assertThat(r.instanceId()).isEqualTo("b"));
		assertThat(q.migrations()).isZero();

		// A request free to go anywhere is moved off the hotspot.
		RequestTicket free = q.submit(request("free", 20, 1_000), true, this.outcomes);
		assertThat(q.migrations()).isPositive();
		assertThat(avoiding).allSatisfy(r -> assertThat(r.instanceId()).isEqualTo("b"));
		assertThat(free.instanceId()).isEqualTo("a");
	}

	@Test
	void aQueuedRequestWhoseInstanceLeftIsNotReplacedOnAnInstanceItMustAvoid() {
		InstancePool pool = pool("a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("b"),
				ungatedMoves().maxPrefillRequests(1).idlePull(false).build());
		q.submit(request("busy", 1, 1_000), true, this.outcomes);
		RequestTicket retry = q.submit(request("retry", 2, 1_000).placed(Set.of("a"), null, false), true,
				this.outcomes);
		RequestTicket free = q.submit(request("free", 3, 1_000), true, this.outcomes);

		pool.updateMembership(List.of(new RingMember("a", 1)));
		q.onMembershipChanged();

		assertThat(retry.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(this.outcomes.rejected.get(retry).status()).isEqualTo(Rejection.SERVICE_UNAVAILABLE);
		assertThat(free.instanceId()).isEqualTo("a");
		assertThat(free.state()).isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void queuedRequestsOfAnInstanceThatTurnedUnhealthyGoElsewhereWhenItFreesCapacity() {
		OnA on = oneSentOneQueuedOnA();
		assertThat(on.queued().state()).isEqualTo(RequestTicket.State.QUEUED);

		// A breaker opens (no tick yet), then a's request ends and frees its capacity.
		on.pool().instance("a").healthy(false);
		on.queues().finish(on.sent());

		assertThat(on.queued().state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(on.queued().instanceId()).isEqualTo("b");
	}

	@Test
	void queuedRequestsOfADrainingInstanceGoElsewhereWhenItsFirstTokenComesBeforeATick() {
		OnA on = oneSentOneQueuedOnA();

		on.pool().instance("a").draining(true);
		on.queues().firstToken(on.sent());

		assertThat(on.queued().state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(on.queued().instanceId()).isEqualTo("b");
	}

	@Test
	void aQueuedRequestStillGoesToItsInstanceThatStoppedAcceptingWorkWhenNoOtherDoes() {
		OnA on = oneSentOneQueuedOnA();
		on.pool().instance("a").draining(true);
		on.pool().instance("b").healthy(false);
		on.queues().finish(on.sent());

		assertThat(on.queued().state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(on.queued().instanceId()).isEqualTo("a");
	}

	private record OnA(InstancePool pool, DispatchQueues queues, RequestTicket sent, RequestTicket queued) {
	}

	/** Pool a, b without idle pull; one request in prefill on a, one queued behind it. */
	private OnA oneSentOneQueuedOnA() {
		InstancePool pool = pool("a", "b");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).idlePull(false).build());
		RequestTicket sent = q.submit(request("r1", 1, 100), true, this.outcomes);
		return new OnA(pool, q, sent, q.submit(request("r2", 2, 100), true, this.outcomes));
	}

	@Test
	void requestsReleasedBeforeAnotherThreadEmptiedTheMembershipAreStillHandedOver() {
		// The clock stands in for another thread: the moment rebalancing reads it, the
		// discovery refresh applies an empty list.
		AtomicBoolean armed = new AtomicBoolean();
		InstancePool[] holder = new InstancePool[1];
		NanoClock clock = () -> {
			if (armed.get() && calledFrom(Rebalancer.class, "rebalance")) {
				armed.set(false);
				holder[0].updateMembership(List.of());
			}
			return this.now.get();
		};
		InstancePool pool = pool(clock, "a", "b");
		holder[0] = pool;
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				ungatedMoves().maxPrefillRequests(1).idlePull(false).build());
		RequestTicket r1 = q.submit(request("r1", 1, 200), true, this.outcomes);
		RequestTicket r2 = q.submit(request("r2", 2, 200), true, this.outcomes);
		RequestTicket r3 = q.submit(request("r3", 3, 200), true, this.outcomes);
		// r2 and r3 have waited past the hotspot bound: a is a hotspot, rebalancing runs.
		this.now.addAndGet(Duration.ofMillis(3_100).toNanos());
		armed.set(true);

		assertThatCode(() -> q.firstToken(r1)).doesNotThrowAnyException();
		assertThat(armed.get()).as("the membership changed inside rebalancing").isFalse();

		assertThat(r2.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(this.outcomes.calls.get(r2)).as("r2's listener was told").isEqualTo(1);
		q.tick(this.now.get());
		assertThat(r3.state()).isEqualTo(RequestTicket.State.REJECTED);
		assertThat(this.outcomes.calls.values()).containsOnly(1);
	}

	private static boolean calledFrom(Class<?> type, String method) {
		for (StackTraceElement e : Thread.currentThread().getStackTrace()) {
			if (e.getClassName().equals(type.getName()) && e.getMethodName().equals(method)) {
				return true;
			}
		}
		return false;
	}

	@Test
	void aRequestWhoseChosenInstanceLeftBeforeAdmissionIsPlacedOnAnotherInsteadOf503() {
		InstancePool pool = pool("a", "b", "c");
		RoutingPolicy real = PinnedPolicy.to("c");
		RoutingPolicy racing = new RoutingPolicy() {
			@Override
			public String name() {
				return "racing";
			}

			@Override
			public @Nullable Decision choose(RoutingRequest request, InstancePool p) {
				Decision d = real.choose(request, p);
				// Another thread: discovery scaled the chosen instance away.
				p.updateMembership(
						p.rings().members().stream().filter(m -> d == null || !m.id().equals(d.instanceId())).toList());
				return d;
			}
		};
		DispatchQueues q = new DispatchQueues(pool, racing, ungatedMoves().build());
		RequestTicket r = q.submit(request("r", 1, 100), true, this.outcomes);

		assertThat(r.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(r.instanceId()).isIn("a", "b");
		assertThat(r.decision().reason()).isEqualTo(Reason.FALLBACK);
	}

}

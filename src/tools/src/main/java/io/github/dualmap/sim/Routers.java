package io.github.dualmap.sim;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;

import io.github.dualmap.core.AdmissionHold;
import io.github.dualmap.core.Decision;
import io.github.dualmap.core.DispatchListener;
import io.github.dualmap.core.DispatchQueues;
import io.github.dualmap.core.ForwardingRoutingPolicy;
import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.core.FairnessSettings;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.KvEventFeed;
import io.github.dualmap.core.NanoClock;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.RequestTicket;
import io.github.dualmap.core.Rejection;
import io.github.dualmap.core.RingMember;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
import org.jspecify.annotations.Nullable;

/**
 * A run's gateway replicas, each with its own pool view, policy instance and, as the
 * gateway has them, its dispatch queues (a policy with queue settings) or a FCFS hold (a
 * policy that is an {@link AdmissionHold}); otherwise a request is routed on arrival.
 * Request {@code i} arrives at the router the run's {@link RouterSpread} assigned it.
 * What becomes of a routed request (its delivery, rejection, the replicas' view of it) is
 * the {@link Outcomes}'.
 */
final class Routers {

	/** What the run does with a routed request. */
	interface Outcomes {

		/** Router's {@code choose()} for request {@code i} took {@code nanos}. */
		void decided(int i, long nanos);

		/**
		 * Request {@code i} was released with {@code decision}, by the queues' rescue
		 * when {@code byRescue}, after the queues moved it {@code moves} times.
		 */
		void released(int i, Decision decision, boolean byRescue, int moves);

		/** Request {@code i}, routed on arrival, was dispatched to {@code instanceId}. */
		void dispatched(int i, String instanceId);

		/** Request {@code i} reaches its engine now (no network delay). */
		void deliverNow(int i);

		/**
		 * Request {@code i} was turned away, for {@code reason}, on {@code instance} when
		 * the rejection concerns one.
		 */
		void rejected(int i, String reason, @Nullable String instance);

	}

	private final EventQueue events;

	private final EngineFleet fleet;

	private final Outcomes outcomes;

	private final long delayNanos;

	private final int warmup;

	private final NanoClock timer;

	private final InstancePool[] pools;

	private final RoutingPolicy[] policies;

	private final @Nullable DispatchQueues[] queues;

	// Per router, requests held by an AdmissionHold policy's queue (FCFS); null when the
	// policy holds nothing.
	private final @Nullable ArrayDeque<Integer>[] held;

	private final long[] tickAt;

	// Per request: its routing request, router, instance, and its queue entry or direct
	// dispatch.
	private final RoutingRequest[] routed;

	private final int[] routerOf;

	private final int[] instanceOf;

	private final RequestTicket[] queued;

	private final InstancePool.@Nullable InFlight[] dispatches;

	// The arrival whose choose() is being timed; -1 outside a submission.
	private int choosing = -1;

	@SuppressWarnings("unchecked")
	Routers(PolicySpec policy, SimulationConfig config, FairnessSettings fairness, int[] routerOf, EventQueue events,
			EngineFleet fleet, Outcomes outcomes) {
		int requests = routerOf.length;
		this.events = events;
		this.fleet = fleet;
		this.outcomes = outcomes;
		this.delayNanos = config.networkDelay().toNanos();
		this.warmup = config.warmup();
		this.timer = config.decisionTimer();
		this.routed = new RoutingRequest[requests];
		// The run's assignment, which the measurement reads too: neither writes it.
		this.routerOf = routerOf;
		this.instanceOf = new int[requests];
		Arrays.fill(this.instanceOf, -1);
		this.queued = new RequestTicket[requests];
		this.dispatches = new InstancePool.InFlight[requests];
		List<RingMember> members = fleet.members();
		int count = config.routers();
		for (int r : routerOf) {
			if (r < 0 || r >= count) {
				throw new IllegalArgumentException("router must be in [0, " + count + ") but was " + r);
			}
		}
		this.pools = new InstancePool[count];
		this.policies = new RoutingPolicy[count];
		this.queues = new DispatchQueues[count];
		this.tickAt = new long[count];
		Arrays.fill(this.tickAt, Long.MAX_VALUE);
		QueueSettings queueSettings = policy.queue();
		SchedulerSettings settings = policy.settingsFor(config.settings());
		for (int r = 0; r < count; r++) {
			this.pools[r] = new InstancePool("router-" + r, settings, events::now);
			this.pools[r].updateMembership(members);
			this.policies[r] = policy.create(settings);
			if (this.policies[r] instanceof KvEventFeed.Consumer consumer) {
				consumer.attach(fleet.kvEventFeed(policy.name()));
			}
			this.policies[r].onMembershipChanged(this.pools[r]);
			if (queueSettings != null) {
				this.queues[r] = new DispatchQueues(this.pools[r], new TimedPolicy(this.policies[r]), queueSettings,
						fairness);
			}
		}
		this.held = new ArrayDeque[count];
		for (int r = 0; r < count; r++) {
			this.held[r] = this.queues[r] == null && this.policies[r] instanceof AdmissionHold ? new ArrayDeque<>()
					: null;
		}
	}

	int count() {
		return this.pools.length;
	}

	InstancePool pool(int r) {
		return this.pools[r];
	}

	RoutingPolicy policy(int r) {
		return this.policies[r];
	}

	int routerOf(int i) {
		return this.routerOf[i];
	}

	RoutingRequest routed(int i) {
		return this.routed[i];
	}

	/** The engine slot request {@code i} was sent to, -1 before it was. */
	int instanceOf(int i) {
		return this.instanceOf[i];
	}

	int[] instances() {
		return this.instanceOf.clone();
	}

	/**
	 * Request {@code i} arrives as {@code request} at its router: submitted to the
	 * queues, held, or routed at once.
	 */
	void arrive(int i, RoutingRequest request) {
		int r = this.routerOf[i];
		this.routed[i] = request;
		DispatchQueues q = this.queues[r];
		if (q != null) {
			this.choosing = i;
			this.queued[i] = q.submit(request, true, new Listener(i));
			this.choosing = -1;
			scheduleTick(r);
			return;
		}
		ArrayDeque<Integer> waiting = this.held[r];
		if (waiting != null && (!waiting.isEmpty() || ((AdmissionHold) this.policies[r]).mustHold(this.pools[r]))) {
			waiting.addLast(i);
			return;
		}
		route(i, false);
	}

	/**
	 * Releases router {@code r}'s held requests, oldest first, while its policy admits
	 * them.
	 */
	void release(int r) {
		ArrayDeque<Integer> waiting = this.held[r];
		if (waiting == null) {
			return;
		}
		while (!waiting.isEmpty() && !((AdmissionHold) this.policies[r]).mustHold(this.pools[r])) {
			route(waiting.pollFirst(), true);
		}
	}

	/**
	 * Chooses request {@code i}'s instance and sends it there (immediate dispatch);
	 * {@code later}: through the event queue even without a network delay, since a
	 * release runs inside the handling of another event, which may be about to start the
	 * same engine's next step.
	 */
	private void route(int i, boolean later) {
		int r = this.routerOf[i];
		RoutingRequest request = this.routed[i];
		long start = this.timer.nanos();
		Decision d = this.policies[r].choose(request, this.pools[r]);
		long took = this.timer.nanos() - start;
		if (i >= this.warmup) {
			this.outcomes.decided(i, took);
		}
		Integer target = d == null ? null : this.fleet.slotOf(d.instanceId());
		if (d == null || target == null) {
			this.outcomes.rejected(i,
					d == null ? "its policy chose no instance" : "its policy chose an unknown instance",
					d == null ? null : d.instanceId());
			return;
		}
		this.instanceOf[i] = target;
		this.dispatches[i] = this.pools[r].dispatch(request, d);
		this.outcomes.released(i, d, false, 0);
		this.policies[r].onDispatched(request, d, this.pools[r]);
		this.outcomes.dispatched(i, d.instanceId());
		if (this.delayNanos == 0 && !later) {
			this.outcomes.deliverNow(i);
		}
		else {
			this.events.schedule(this.events.now() + this.delayNanos, new SimEvent.Delivery(i));
		}
	}

	/** Request {@code i}'s first token reached its router. */
	void firstToken(int i) {
		int r = this.routerOf[i];
		DispatchQueues q = this.queues[r];
		if (q != null) {
			q.firstToken(this.queued[i]);
			scheduleTick(r);
			return;
		}
		InstancePool.InFlight d = this.dispatches[i];
		if (d != null) {
			d.firstToken();
		}
		release(r);
	}

	/**
	 * Request {@code i}'s end reached its router, the engine having generated
	 * {@code outputTokens}.
	 */
	void finished(int i, int outputTokens) {
		int r = this.routerOf[i];
		DispatchQueues q = this.queues[r];
		if (q != null) {
			// The engine generated the trace's output: the tenant's estimate is
			// corrected.
			q.reportOutput(this.queued[i], outputTokens);
			q.finish(this.queued[i]);
			scheduleTick(r);
			return;
		}
		InstancePool.InFlight d = this.dispatches[i];
		if (d != null && !d.isFinished()) {
			d.finish();
			this.policies[r].onFinished(this.routed[i], this.fleet.id(this.instanceOf[i]), this.pools[r]);
		}
		release(r);
	}

	/** Request {@code i}'s engine refused it (it can never fit there): it is done. */
	void refusedByEngine(int i) {
		int r = this.routerOf[i];
		DispatchQueues q = this.queues[r];
		if (q != null) {
			q.finish(this.queued[i]);
			scheduleTick(r);
			return;
		}
		InstancePool.InFlight d = this.dispatches[i];
		if (d != null) {
			d.finish();
		}
		this.policies[r].onFinished(this.routed[i], this.fleet.id(this.instanceOf[i]), this.pools[r]);
	}

	/**
	 * The pool's members are now {@code members}: every router's rings and policy follow,
	 * requests still queued for a removed instance are re-routed at once, and held
	 * requests may be released.
	 */
	void membershipChanged(List<RingMember> members) {
		for (int r = 0; r < this.pools.length; r++) {
			this.pools[r].updateMembership(members);
			this.policies[r].onMembershipChanged(this.pools[r]);
			DispatchQueues q = this.queues[r];
			if (q != null) {
				q.onMembershipChanged();
				scheduleTick(r);
			}
			release(r);
		}
	}

	/**
	 * A scrape's {@code snapshot} of instance {@code instanceId} reaches router
	 * {@code r}.
	 */
	void engineScraped(int r, String instanceId, EngineSnapshot snapshot) {
		InstanceState state = this.pools[r].instance(instanceId);
		if (state != null) {
			state.updateEngine(snapshot);
		}
	}

	/** Requests in flight to {@code instanceId}, over every router. */
	int inFlight(String instanceId) {
		int sum = 0;
		for (InstancePool pool : this.pools) {
			InstanceState state = pool.instance(instanceId);
			sum += state == null ? 0 : state.inFlight();
		}
		return sum;
	}

	/** Requests queued for {@code instanceId}, over every router's queues. */
	int queued(String instanceId) {
		int sum = 0;
		for (DispatchQueues q : this.queues) {
			sum += q == null ? 0 : q.queued(instanceId);
		}
		return sum;
	}

	/** Router {@code r}'s queues, if any, act on what is due now. */
	void tickQueues(int r) {
		DispatchQueues q = this.queues[r];
		if (q != null) {
			q.tick(this.events.now());
			scheduleTick(r);
		}
	}

	/** Makes sure router {@code r}'s queues are ticked at their next deadline. */
	private void scheduleTick(int r) {
		DispatchQueues q = this.queues[r];
		if (q == null) {
			return;
		}
		long now = this.events.now();
		long next = DispatchQueues.tickAt(q.nextDeadlineNanos(), now);
		if (next == Long.MAX_VALUE) {
			return;
		}
		if (next < this.tickAt[r]) {
			this.tickAt[r] = next;
			this.events.schedule(next, new SimEvent.QueueTick(r));
		}
	}

	/** Router {@code r}'s queue tick, unless an earlier one superseded it. */
	void queueTick(int r) {
		if (this.events.now() != this.tickAt[r]) {
			// Superseded by an earlier tick, which rescheduled what is still due.
			return;
		}
		this.tickAt[r] = Long.MAX_VALUE;
		tickQueues(r);
	}

	/** Requests the queues moved to another instance, over every router. */
	long migrations() {
		long sum = 0;
		for (DispatchQueues q : this.queues) {
			if (q != null) {
				sum += q.migrations();
			}
		}
		return sum;
	}

	/** Hands a released request to the network, or records its rejection as a miss. */
	private final class Listener implements DispatchListener {

		private final int index;

		Listener(int index) {
			this.index = index;
		}

		@Override
		public void released(RequestTicket request, Decision decision, InstancePool.InFlight dispatch) {
			Integer target = Routers.this.fleet.slotOf(decision.instanceId());
			if (target == null) {
				throw new IllegalStateException("released to unknown instance " + decision.instanceId());
			}
			Routers.this.instanceOf[this.index] = target;
			Routers.this.dispatches[this.index] = dispatch;
			Routers.this.outcomes.released(this.index, decision, request.placedByRescue(), request.migrations());
			// Always through the event queue: the engine may start a step, and this runs
			// inside a call into the queues.
			Routers.this.events.schedule(Routers.this.events.now() + Routers.this.delayNanos,
					new SimEvent.Delivery(this.index));
		}

		@Override
		public void rejected(RequestTicket request, Rejection rejection) {
			Routers.this.outcomes.rejected(this.index, rejection.status() + ": " + rejection.message(),
					rejection.instanceId());
		}

	}

	/** Times {@code choose()} of the arrival being submitted, as the direct path does. */
	private final class TimedPolicy extends ForwardingRoutingPolicy {

		TimedPolicy(RoutingPolicy delegate) {
			super(delegate);
		}

		@Override
		public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
			long start = Routers.this.timer.nanos();
			Decision d = delegate().choose(request, pool);
			long took = Routers.this.timer.nanos() - start;
			if (Routers.this.choosing >= Routers.this.warmup) {
				Routers.this.outcomes.decided(Routers.this.choosing, took);
			}
			return d;
		}

	}

}

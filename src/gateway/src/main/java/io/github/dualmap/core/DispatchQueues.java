package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

import net.openhft.hashing.LongHashFunction;

/**
 * Late binding for one {@link InstancePool}: the policy places each request, and the
 * request then waits in a per-instance queue until that instance has prefill capacity.
 * While it waits its uncached tokens count in {@link InstanceState#queuedTokens()}, so
 * every policy's TTFT estimate and the hotspot test see it, and the rebalancer may still
 * move it to its other candidate.
 * <p>
 * The object has no threads and no timers: it acts when called. {@link #submit} places a
 * request, {@link #firstToken} and {@link #finish} report its progress (and free
 * capacity), {@link #tick} expires requests that waited too long and should be called at
 * {@link #nextDeadlineNanos()} or periodically, and {@link #onMembershipChanged()}
 * re-routes the queue of a removed instance (membership changes are also noticed on the
 * next call). Outcomes go to each request's {@link DispatchListener}, always outside the
 * lock. Requests of several tenants ({@link RoutingRequest#tenant()}) share each
 * instance's releases by weighted fair queuing with strict priority bands
 * ({@link FairnessSettings}; a request's band is its SLO class's or its tenant's,
 * {@link RoutingRequest#priority()}). In {@link DispatchMode#PASS_THROUGH} mode
 * {@code submit} dispatches at once through the same callbacks, so callers have one code
 * path. Thread-safe: one lock per pool guards the queues; every operation under it is
 * short.
 * <p>
 * This class is the coordinator: the public API, the lock, and the order in which one
 * event applies the queue rules. Each rule is a package-private class it calls under its
 * lock: {@link QueueAdmission} (where a request queues, the limits, shedding),
 * {@link ReleasePass} (which request goes next, through {@link EngineQueueGate}),
 * {@link Rescue} (the wait bound and the last chance), {@link Rebalancer} (hotspot moves,
 * weighed by {@link MoveGain}), {@link IdlePull} (work stealing), {@link Evacuation}
 * (membership changes, draining instances), {@link Relocator} (where a displaced request
 * goes), {@link FairShares} (tenants and priority bands) and {@link QueueStatistics} (the
 * counters); {@link QueueBook} holds the state they share.
 */
public final class DispatchQueues {

	// Keys requests whose prompt could not be parsed, so they still have two homes.
	private static final LongHashFunction ID_HASH = LongHashFunction.xx3();

	private static final long NEVER = Long.MIN_VALUE;

	/**
	 * How long a ticker waits before it ticks again for a deadline that is already due
	 * ({@link #tickAt}): a request waiting past the hotspot bound keeps its deadline in
	 * the past until it leaves, and ticking at the same instant again would change
	 * nothing.
	 */
	public static final long RETICK_NANOS = 10_000_000L;

	private final InstancePool pool;

	private final RoutingPolicy policy;

	private final QueueSettings settings;

	// Guarded by lock from here on: what waits where (package-private for the tests that
	// look at which queues are parked), and the rules that act on it.
	final QueueBook book;

	private final Relocator relocator;

	private final ReleasePass releasePass;

	private final Rescue rescue;

	private final QueueAdmission admission;

	private final Evacuation evacuation;

	private final Rebalancer rebalancer;

	private final IdlePull idlePull;

	private final FairShares fair;

	private final QueueStatistics stats;

	/**
	 * Most tenant accounts a pool keeps ({@link #takeLocalService()} names at most this
	 * many tenants).
	 */
	public static final int MAX_TENANT_ACCOUNTS = FairShares.MAX_ACCOUNTS;

	private final ReentrantLock lock = new ReentrantLock();

	private long sequence;

	// When settle last ran the hotspot moves and the idle pull, NEVER before the first.
	private long movesRanAtNanos = NEVER;

	// Told outside the lock of a deadline an event set that may precede the others.
	private volatile LongConsumer earlierDeadline = at -> {
	};

	/** Queues that share the pool between tenants with the default fairness settings. */
	public DispatchQueues(InstancePool pool, RoutingPolicy policy, QueueSettings settings) {
		this(pool, policy, settings, FairnessSettings.ofDefaults());
	}

	/**
	 * Queues that share the pool between the tenants of the requests
	 * ({@link RoutingRequest#tenant()}) as {@code fairness} says.
	 */
	public DispatchQueues(InstancePool pool, RoutingPolicy policy, QueueSettings settings, FairnessSettings fairness) {
		this(pool, policy, settings, fairness, QueueShortcuts.ALL);
	}

	/**
	 * Queues whose rules take {@code shortcuts} (tests compare the plain form with the
	 * one the queues run).
	 */
	DispatchQueues(InstancePool pool, RoutingPolicy policy, QueueSettings settings, FairnessSettings fairness,
			QueueShortcuts shortcuts) {
		this.pool = pool;
		this.policy = policy;
		this.settings = settings;
		this.book = new QueueBook(pool, settings, fairness, shortcuts);
		this.fair = book.fair;
		this.stats = book.stats;
		this.relocator = new Relocator(book);
		this.releasePass = new ReleasePass(book, policy, this::finish, at -> this.earlierDeadline.accept(at));
		this.rescue = new Rescue(book, releasePass);
		releasePass.rescueHopelessWith(rescue);
		this.admission = new QueueAdmission(book, relocator, releasePass);
		this.evacuation = new Evacuation(book, relocator);
		MoveGain gain = new MoveGain(pool);
		this.rebalancer = new Rebalancer(book, relocator, releasePass, gain);
		this.idlePull = new IdlePull(book, relocator, releasePass, gain);
	}

	public InstancePool instancePool() {
		return pool;
	}

	public QueueSettings settings() {
		return settings;
	}

	/** How the queues share the pool between tenants. */
	public FairnessSettings fairness() {
		return fair.settings();
	}

	/**
	 * The finished request {@code request} generated {@code outputTokens}: its tenant's
	 * account is corrected from the estimate charged at its release (once; a request
	 * never released is not charged).
	 */
	public void reportOutput(RequestTicket request, int outputTokens) {
		lock.lock();
		try {
			fair.correct(request, outputTokens, pool.now());
		}
		finally {
			lock.unlock();
		}
	}

	/**
	 * Each tenant account's service charged by these queues (at release, and the
	 * correction to its actual output when it finishes) since the last call, in weighted
	 * tokens, keyed {@code <band>:<tenant>} (a tenant has an account per priority band it
	 * sends in); every account of the pool is in it (0 when it was not served), at most
	 * {@value #MAX_TENANT_ACCOUNTS}. What a replica adds to the pool's account shared
	 * with other replicas; the lock is held only to copy.
	 */
	public Map<String, Double> takeLocalService() {
		lock.lock();
		try {
			return fair.takeLocalService();
		}
		finally {
			lock.unlock();
		}
	}

	/**
	 * Credits each account of {@code serviceByTenant} (keyed as
	 * {@link #takeLocalService()} keys them) with the service (weighted tokens) other
	 * replicas released for it from the same pool since the last credit: its virtual
	 * token counter grows as if these queues had released it, so releases here give each
	 * tenant its share of the whole pool's service in each band, and its share of the
	 * window counts it. An account this replica does not have (never served or waiting
	 * here, or dropped as idle) is skipped.
	 * @return how many accounts were credited
	 */
	public int creditRemoteService(Map<String, Double> serviceByTenant) {
		lock.lock();
		try {
			long now = pool.now();
			int credited = 0;
			for (Map.Entry<String, Double> e : serviceByTenant.entrySet()) {
				if (fair.credit(e.getKey(), e.getValue(), now)) {
					credited++;
				}
			}
			return credited;
		}
		finally {
			lock.unlock();
		}
	}

	/**
	 * Each tenant served or waiting in the recent window
	 * ({@link FairnessSettings#windowNanos()}): its share of the served tokens and its
	 * weighted fair share, largest share first.
	 */
	public List<TenantShare> tenantShares() {
		lock.lock();
		try {
			return fair.shares(pool.now());
		}
		finally {
			lock.unlock();
		}
	}

	/**
	 * Places {@code request} with the policy and queues it for the chosen instance (or
	 * sends it at once in pass-through mode, or when the instance has capacity). The
	 * outcome reaches {@code listener}, possibly before this method returns.
	 * @param streaming whether the response streams, so its first byte marks the end of
	 * prefill; for non-streaming responses the end of prefill is estimated with the TTFT
	 * model
	 * @return the handle for {@link #cancel}, {@link #firstToken} and {@link #finish}
	 */
	public RequestTicket submit(RoutingRequest request, boolean streaming, DispatchListener listener) {
		return submit(request, streaming, Long.MAX_VALUE, listener);
	}

	/**
	 * As {@link #submit(RoutingRequest, boolean, DispatchListener)}, for a request placed
	 * again that has waited in these queues since {@code waitingSinceNanos} (the pool
	 * clock's reading when it was first submitted): its wait bound, aging and place in
	 * arrival order count from then, so a request an instance refused after its release
	 * does not start its wait over. {@code Long.MAX_VALUE}: from now. The instances the
	 * request must avoid ({@link RoutingRequest#avoid()}) it is never placed, moved or
	 * pulled to while it waits; the policy's choice must already avoid them.
	 */
	public RequestTicket submit(RoutingRequest request, boolean streaming, long waitingSinceNanos,
			DispatchListener listener) {
		// Peek before the policy records the request, so this is the depth it routes on.
		PromptBlocks blocks = request.blocks();
		long key = blocks == null ? ID_HASH.hashChars(request.id())
				: blocks.keyAt(pool.hotPrefixes().peekDepth(blocks));
		Decision decision = policy.choose(request, pool);
		List<Runnable> out = new ArrayList<>();
		RequestTicket q;
		lock.lock();
		try {
			evacuation.reconcileMembership(out);
			long since = Math.min(pool.now(), waitingSinceNanos);
			q = new RequestTicket(request, streaming, key, sequence++, since, since + admission.agingOf(request),
					since + settings.waitBoundNanos(request.maxWaitNanos(), book.sloOf(request)), decision, listener);
			InstanceState chosen = decision == null ? null : pool.instance(decision.instanceId());
			if (decision != null && chosen == null) {
				// The chosen instance left between the policy's look and the lock (a
				// membership change on another thread): place the request as a queued one
				// whose instance left.
				chosen = relocator.place(q, null);
				if (chosen != null) {
					q.decision = relocator.decisionOn(q, chosen, Reason.FALLBACK);
				}
			}
			if (decision == null || chosen == null) {
				book.reject(q, Rejection.SERVICE_UNAVAILABLE,
						"no instance of pool '" + pool.name() + "' accepts requests",
						settings.unavailableRetryAfterSeconds(), out);
			}
			else if (settings.mode() == DispatchMode.PASS_THROUGH) {
				releasePass.release(q, chosen, pool.pendingWork(chosen), out);
			}
			else {
				admission.admit(q, chosen, out);
			}
			settle(out);
		}
		finally {
			lock.unlock();
			run(out);
		}
		return q;
	}

	/**
	 * Removes a queued request at once (its client went away) and takes its tokens off
	 * the instance's queue. No listener method is called.
	 * @return whether it was queued; false when it was already released, rejected or
	 * cancelled
	 */
	public boolean cancel(RequestTicket request) {
		lock.lock();
		try {
			if (request.state != RequestTicket.State.QUEUED) {
				return false;
			}
			book.dequeue(request);
			request.state = RequestTicket.State.CANCELLED;
			return true;
		}
		finally {
			lock.unlock();
		}
	}

	/**
	 * The first response byte of a released request arrived: its prefill is over, which
	 * may let queued requests go. For a streaming request the TTFT is fed to the model;
	 * for a non-streaming one the first byte comes only at the end of generation, so it
	 * merely ends prefill if the estimate had not yet.
	 * @return the observed TTFT in nanoseconds for a streaming request, else -1
	 */
	public long firstToken(RequestTicket request) {
		List<Runnable> out = new ArrayList<>();
		long ttft = -1;
		lock.lock();
		try {
			InstancePool.InFlight d = request.dispatch;
			if (request.state != RequestTicket.State.RELEASED || d == null) {
				return -1;
			}
			long t = d.endPrefill(request.streaming());
			if (t < 0) {
				return -1;
			}
			releasePass.prefillEnded(request);
			ttft = request.streaming() ? t : -1;
			settle(out);
		}
		finally {
			lock.unlock();
			run(out);
		}
		return ttft;
	}

	/**
	 * The request ended (response complete, error, or client gone): call it from every
	 * terminal path. A request still queued is cancelled; a released one is finished once
	 * (later calls are no-ops) and its capacity goes to the next queued request.
	 */
	public void finish(RequestTicket request) {
		List<Runnable> out = new ArrayList<>();
		lock.lock();
		try {
			switch (request.state) {
				case QUEUED -> {
					book.dequeue(request);
					request.state = RequestTicket.State.CANCELLED;
				}
				case RELEASED -> {
					InstancePool.InFlight d = request.dispatch;
					if (request.finished || d == null) {
						return;
					}
					request.finished = true;
					releasePass.prefillEnded(request);
					d.finish();
					String id = d.instance().id();
					out.add(() -> policy.onFinished(request.request(), id, pool));
					settle(out);
				}
				case REJECTED, CANCELLED -> {
					return;
				}
			}
		}
		finally {
			lock.unlock();
			run(out);
		}
	}

	/**
	 * Advances time-driven work to {@code nowNanos} (the pool clock's reading): ends the
	 * estimated prefill of non-streaming requests, expires requests queued longer than
	 * the wait bound (rejected with 503, or sent anyway, per
	 * {@link QueueSettings#expiry()}), releases what now fits and rebalances hotspots.
	 */
	public void tick(long nowNanos) {
		List<Runnable> out = new ArrayList<>();
		lock.lock();
		try {
			evacuation.reconcileMembership(out);
			releasePass.endEstimatedPrefills(nowNanos);
			long end = book.queueOrdinals;
			for (InstanceQueue iq = book.nextNonEmpty(null, end); iq != null; iq = book.nextNonEmpty(iq, end)) {
				while (!iq.byExpiry.isEmpty() && nowNanos >= iq.byExpiry.first().expiresAtNanos) {
					rescue.expire(iq.byExpiry.first(), iq, out);
				}
			}
			settle(out);
		}
		finally {
			lock.unlock();
			run(out);
		}
	}

	/**
	 * Re-routes the queued requests of instances that left the pool (call after
	 * {@link InstancePool#updateMembership}); requests already sent to them finish or
	 * fail on their own.
	 */
	public void onMembershipChanged() {
		List<Runnable> out = new ArrayList<>();
		lock.lock();
		try {
			evacuation.reconcileMembership(out);
			settle(out);
		}
		finally {
			lock.unlock();
			run(out);
		}
	}

	/**
	 * The earliest time at which {@link #tick} has work that no other event would trigger
	 * (an expiry, an estimated end of prefill, a wait-bound hotspot, the queue's moves
	 * due again while requests that may move wait,
	 * {@link QueueSettings#moveIntervalNanos()}); {@code Long.MAX_VALUE} when none. A
	 * discrete-event loop schedules a tick there.
	 */
	public long nextDeadlineNanos() {
		lock.lock();
		try {
			long next = releasePass.nextPrefillDeadlineNanos();
			boolean queued = false;
			for (InstanceQueue iq : book.nonEmpty) {
				if (!iq.byArrival.isEmpty()) {
					queued = true;
					long oldest = iq.byArrival.first().submittedAtNanos();
					next = Math.min(next, iq.byExpiry.first().expiresAtNanos);
					if (pool.size() > 1) {
						next = Math.min(next, oldest + pool.settings().hotspotMaxWaitNanos() + 1);
					}
				}
			}
			long interval = settings.moveIntervalNanos();
			if (queued && pool.size() > 1 && anyMayMove() && interval > 0 && movesRanAtNanos != NEVER) {
				next = Math.min(next, movesRanAtNanos + interval);
			}
			return next;
		}
		finally {
			lock.unlock();
		}
	}

	/**
	 * When a ticker should next call {@link #tick}, given {@link #nextDeadlineNanos()}
	 * and the time now: at the deadline, or {@link #RETICK_NANOS} from now when it is not
	 * in the future; {@code Long.MAX_VALUE} when there is none.
	 */
	public static long tickAt(long deadlineNanos, long nowNanos) {
		if (deadlineNanos == Long.MAX_VALUE) {
			return Long.MAX_VALUE;
		}
		return deadlineNanos > nowNanos ? deadlineNanos : nowNanos + RETICK_NANOS;
	}

	/**
	 * Tells {@code listener}, outside the lock, of each deadline an event sets that may
	 * come before every other {@link #nextDeadlineNanos()} knew of: the estimated end of
	 * prefill of a released non-streaming request, when it is the earliest such end. A
	 * ticker that sleeps until {@link #nextDeadlineNanos()} wakes earlier on it instead
	 * of finding the deadline at its next tick. Replaces the listener set before; it must
	 * be quick and must not throw.
	 */
	public void onEarlierDeadline(LongConsumer listener) {
		this.earlierDeadline = Objects.requireNonNull(listener, "listener");
	}

	/**
	 * Whether {@code instanceId} has nothing queued and nothing in flight (a draining
	 * instance may then be removed); true for an unknown instance.
	 */
	public boolean isIdle(String instanceId) {
		lock.lock();
		try {
			InstanceState s = pool.instance(instanceId);
			InstanceQueue iq = s == null ? null : book.queues.get(s);
			return (iq == null || iq.byArrival.isEmpty()) && (s == null || s.inFlight() == 0);
		}
		finally {
			lock.unlock();
		}
	}

	/** Requests queued in the whole pool. */
	public int queued() {
		lock.lock();
		try {
			return book.queuedTotal;
		}
		finally {
			lock.unlock();
		}
	}

	/** Requests queued for {@code instanceId}. */
	public int queued(String instanceId) {
		lock.lock();
		try {
			InstanceState s = pool.instance(instanceId);
			InstanceQueue iq = s == null ? null : book.queues.get(s);
			return iq == null ? 0 : iq.byArrival.size();
		}
		finally {
			lock.unlock();
		}
	}

	/**
	 * Queued requests moved by the rebalancer: off a hotspot, or pulled by an idle
	 * candidate.
	 */
	public long migrations() {
		return locked(stats::migrations);
	}

	/**
	 * Queued requests moved because their instance left the pool, is draining or is
	 * unhealthy.
	 */
	public long rerouted() {
		return locked(stats::rerouted);
	}

	/**
	 * Requests placed at their wait bound on another instance that could still make their
	 * SLO instead of being rejected ({@link QueueSettings#rescue()}): sent at once, or
	 * queued there ({@link #rescuesQueued()}).
	 */
	public long rescues() {
		return locked(stats::rescues);
	}

	/**
	 * Of {@link #rescues()}, the requests that joined another instance's queue because
	 * none could start them at once ({@link QueueSettings#rescueToQueue()}).
	 */
	public long rescuesQueued() {
		return locked(stats::rescuesQueued);
	}

	/**
	 * Requests answered 503 when about to be released, because their wait so far plus
	 * their TTFT estimate there exceeded their SLO while others waited
	 * ({@link QueueSettings#shedHopeless()}; counted in {@link #rejections()} too).
	 */
	public long hopelessShed() {
		return locked(stats::hopelessShed);
	}

	/**
	 * Of {@link #hopelessShed()}, the requests shed while nothing else waited in this
	 * gateway's queues: for the requests others had waiting for the instance, its peers'
	 * as they published them under replica sync, or another sender's the engine showed
	 * ({@link QueueSettings#shedBehindForeignPrefill()},
	 * {@link QueueSettings#shedWhereOthersSend()}). With several replicas and no replica
	 * sync, what sync or a load balancer keeping conversations on one replica might save.
	 */
	public long hopelessShedForOthers() {
		return locked(stats::hopelessShedForOthers);
	}

	/** Requests rejected (429 and 503). */
	public long rejections() {
		return locked(stats::rejections);
	}

	/**
	 * Queued requests turned away (429, counted in {@link #rejections()} too) to make
	 * room for an arrival with a tighter SLO.
	 */
	public long shed() {
		return locked(stats::shed);
	}

	/**
	 * Queued requests taken over by their idle other candidate (also counted in
	 * {@link #migrations()}).
	 */
	public long pulls() {
		return locked(stats::pulls);
	}

	/** Requests sent to an instance. */
	public long releases() {
		return locked(stats::releases);
	}

	private long locked(LongSupplier read) {
		lock.lock();
		try {
			return read.getAsLong();
		}
		finally {
			lock.unlock();
		}
	}

	/**
	 * After any event, the queue rules in their order (under the lock): membership,
	 * estimated ends of prefill, evacuation of instances that stopped accepting work, the
	 * release pass, hotspot moves, the idle pull.
	 */
	private void settle(List<Runnable> out) {
		evacuation.reconcileMembership(out);
		// One reading of the clock for the event's rules that ask it.
		long now = pool.now();
		releasePass.endEstimatedPrefills(now);
		// Queues of instances that stopped accepting work move first: a release pass
		// would otherwise send them where they no longer belong.
		evacuation.evacuate();
		releasePass.pumpAll(out);
		if (anyMayMove() && movesDue(now)) {
			movesRanAtNanos = now;
			rebalancer.rebalance(out);
			if (settings.idlePull() && settings.mode() == DispatchMode.QUEUE) {
				idlePull.pullToIdle(out);
			}
		}
	}

	/**
	 * Whether a queued request may ever move ({@link QueueSettings#maxMigrations()} above
	 * 0; every policy without DualMap's hotspot step runs with 0): otherwise neither the
	 * hotspot moves nor the idle pull can do anything, so they have no time to wait for
	 * and do not run (past capacity the moves' scan of every hotspot's late requests
	 * would still find none movable).
	 */
	private boolean anyMayMove() {
		return settings.maxMigrations() > 0;
	}

	/**
	 * Whether the hotspot moves and the idle pull are due at {@code nowNanos}: never run,
	 * or {@link QueueSettings#moveIntervalNanos()} since they last ran (always with an
	 * interval of 0).
	 */
	private boolean movesDue(long nowNanos) {
		long interval = settings.moveIntervalNanos();
		return interval == 0 || movesRanAtNanos == NEVER || nowNanos - movesRanAtNanos >= interval;
	}

	/**
	 * Runs the listener and policy callbacks an operation collected under the lock, after
	 * the lock is released; every operation calls it in its {@code finally}, so what was
	 * released or rejected before a failure is still handed over.
	 */
	private static void run(List<Runnable> callbacks) {
		for (Runnable r : callbacks) {
			r.run();
		}
	}

}

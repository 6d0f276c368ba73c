package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.ToLongFunction;

import org.jspecify.annotations.Nullable;

/**
 * The state every queue rule of {@link DispatchQueues} reads and changes, and its
 * bookkeeping: which request waits where (in every order of its {@link InstanceQueue}),
 * the indexes that let each pass touch only what it acts on (the queues with requests,
 * those of them the release pass must look at and what wakes the others, the queues by
 * their oldest queued arrival, the idle pull's requests by their other candidate), the
 * count of queued requests and their SLOs, a request's cached prefix on an instance, and
 * the rejection of a request. The rules live in their own classes
 * ({@link QueueAdmission}, {@link ReleasePass}, {@link Rescue}, {@link Rebalancer},
 * {@link IdlePull}, {@link Evacuation}), and where a displaced request goes in
 * {@link Relocator}; they share this one object rather than a dozen references. Guarded
 * by the queues' lock: every method runs under it.
 */
final class QueueBook {

	private static final System.Logger LOG = System.getLogger(DispatchQueues.class.getName());

	final InstancePool pool;

	final QueueSettings settings;

	// The release limits over the prefill in flight on each instance.
	final EngineQueueGate gate;

	// The tenants' shares of the pool.
	final FairShares fair;

	final QueueStatistics stats = new QueueStatistics();

	// When a queued request becomes late for a given estimate where it waits: its
	// arrival plus its SLO, arrival order among equals. Every request queued on an
	// instance has the same estimate there (see Rebalancer.bestLateMove), so the late
	// ones are a
	// prefix of each queue in this order.
	final Comparator<RequestTicket> lateOrder = (x, y) -> InstanceQueue
		.bySequenceAfter(x.submittedAtNanos() + sloOf(x.request()), y.submittedAtNanos() + sloOf(y.request()), x, y);

	// Keyed by the state object, not the id: an instance
	// that left and came back is a new object, and the old queue must stay visible
	// until its requests are re-routed. Insertion order keeps simulations reproducible.
	final Map<InstanceState, InstanceQueue> queues = new LinkedHashMap<>();

	// Queues and idle-pull entries are ordered by when they were created.
	static final ToLongFunction<InstanceQueue> QUEUE_ORDINAL = iq -> iq.ordinal;

	static final Comparator<InstanceQueue> QUEUE_ORDER = (x, y) -> Long.compare(x.ordinal, y.ordinal);

	static final ToLongFunction<Pullable> PULLABLE_ORDINAL = p -> p.ordinal;

	// The queues with requests in them, in the order of queues: the passes over queues
	// visit only these, so an event costs what it touches, not the pool's size.
	final TreeSet<InstanceQueue> nonEmpty = new TreeSet<>(QUEUE_ORDER);

	long queueOrdinals;

	// Idle pull: queued requests by the candidate that may take them over, oldest first.
	final Map<InstanceState, Pullable> byAlternative = new LinkedHashMap<>();

	// Of byAlternative, the entries with requests whose instance has none queued: the
	// only ones the idle pull acts on, in byAlternative's order.
	final TreeSet<Pullable> pullers = new TreeSet<>((x, y) -> Long.compare(x.ordinal, y.ordinal));

	// Entries of byAlternative that lost their last request since the idle pull last
	// dropped the empty ones.
	final List<Pullable> emptied = new ArrayList<>();

	long pullableOrdinals;

	// The rings the queued requests' candidates were last worked out on.
	DualHashRing seenRings;

	// Requests queued in the whole pool.
	int queuedTotal;

	// The SLOs of queued requests with their counts: tells whether anything queued has a
	// looser SLO than an arrival that finds the queues full, without a scan.
	final TreeMap<Long, Integer> queuedSlos = new TreeMap<>();

	// The release pass: the queues with requests it looks at, in the order of queues;
	// the others are parked (see park).
	final TreeSet<InstanceQueue> unparked = new TreeSet<>(QUEUE_ORDER);

	// Parked queues that aging wakes, by when.
	final TreeSet<InstanceQueue> byWake = new TreeSet<>((x, y) -> x.wakeAtNanos != y.wakeAtNanos
			? Long.compare(x.wakeAtNanos, y.wakeAtNanos) : Long.compare(x.ordinal, y.ordinal));

	// The instances of parked queues, and those of them whose room may have grown since
	// (InstanceState.roomChanged, possibly on another thread: a scrape, replica sync).
	private final Set<InstanceState> parkedStates = ConcurrentHashMap.newKeySet();

	private final ConcurrentLinkedQueue<InstanceState> woken = new ConcurrentLinkedQueue<>();

	// Every queue by its instance's oldest queued arrival (InstanceQueue.oldestNanos),
	// then the order of queues: the members that are not hotspots by their wait are the
	// last of it.
	final TreeSet<InstanceQueue> byOldest = new TreeSet<>((x, y) -> x.oldestNanos != y.oldestNanos
			? Long.compare(x.oldestNanos, y.oldestNanos) : Long.compare(x.ordinal, y.ordinal));

	// Counts the changes of byOldest; youngMembers' last answer and what it was for.
	private long byOldestChanges;

	private long youngFor = -1;

	private long youngAtNanos;

	private int youngMost;

	private @Nullable List<InstanceState> young;

	// Which shortcuts the rules take (all but in DispatchQueuesIndexedMovesTests).
	final QueueShortcuts shortcuts;

	QueueBook(InstancePool pool, QueueSettings settings, FairnessSettings fairness) {
		this(pool, settings, fairness, QueueShortcuts.ALL);
	}

	QueueBook(InstancePool pool, QueueSettings settings, FairnessSettings fairness, QueueShortcuts shortcuts) {
		this.pool = pool;
		this.settings = settings;
		this.shortcuts = shortcuts;
		this.gate = new EngineQueueGate(settings, pool);
		this.fair = new FairShares(fairness, InstanceQueue.PRIORITY, InstanceQueue.AGED, shortcuts.orderTenantsFrom(),
				shortcuts.orderedFloor());
		this.seenRings = pool.rings();
		queueEveryMember();
		pool.watchRoom(this::roomChanged);
	}

	// ---- the queues and their indexes ----

	/**
	 * Gives every member without a queue its queue, in the pool's membership order:
	 * called when the queues are made and when they learn of a membership change
	 * ({@link Evacuation#reconcileMembership}), so every member of {@link #seenRings} has
	 * its queue and asking a member anything never makes one. Read the rings before: the
	 * members are those of these rings or later ones.
	 */
	void queueEveryMember() {
		for (InstanceState s : pool.instances()) {
			queueOf(s);
		}
	}

	/**
	 * The queue of {@code s}, made (with the next place in the order) when it has none:
	 * every member has one from the moment the queues learn it joined
	 * ({@link #queueEveryMember}); one that joined since, on another thread, gets its own
	 * when first used.
	 */
	InstanceQueue queueOf(InstanceState s) {
		InstanceQueue iq = queues.get(s);
		if (iq == null) {
			iq = new InstanceQueue(s, queueOrdinals++, lateOrder);
			queues.put(s, iq);
			byOldest.add(iq);
			byOldestChanges++;
		}
		return iq;
	}

	/** Forgets the queue of {@code s}, an instance that left, with nothing queued. */
	void dropQueue(InstanceState s) {
		InstanceQueue iq = queues.remove(s);
		if (iq != null) {
			unpark(iq);
			byOldest.remove(iq);
			byOldestChanges++;
		}
	}

	/**
	 * Queues {@code q} on {@code s}: in every order of its queue and the indexes, its
	 * uncached tokens in the instance's queued work, its tenant's backlog.
	 */
	void enqueue(RequestTicket q, InstanceState s) {
		InstanceQueue iq = queueOf(s);
		iq.byPriority.add(q);
		iq.byArrival.add(q);
		iq.byAged.add(q);
		iq.byExpiry.add(q);
		iq.byLateness.add(q);
		group(q, iq, pool.rings());
		if (iq.byArrival.size() == 1) {
			nonEmpty.add(iq);
			Pullable p = byAlternative.get(s);
			if (p != null) {
				pullers.remove(p);
			}
		}
		// Its next request may have changed.
		unpark(iq);
		q.queue = iq;
		s.addQueued(q.uncachedTokens, PrefillWork.pairs(q.cachedTokens, q.uncachedTokens));
		s.queuedRequests.incrementAndGet();
		PromptBlocks blocks = q.request().blocks();
		if (settings.countQueuedPrefixes() && blocks != null) {
			s.queuedPrefixes().add(blocks.chain());
		}
		oldest(iq, iq.byArrival.first().submittedAtNanos());
		queuedTotal++;
		queuedSlos.merge(q.request().sloTtftNanos(), 1, Integer::sum);
		fair.add(q, iq, pool.now());
		index(q, s);
	}

	/** Takes {@code q} out of its queue and everything {@link #enqueue} put it in. */
	void dequeue(RequestTicket q) {
		InstanceQueue iq = q.queue;
		if (iq == null) {
			throw new IllegalStateException("request " + q.request().id() + " is not queued");
		}
		iq.byPriority.remove(q);
		iq.byArrival.remove(q);
		iq.byAged.remove(q);
		iq.byExpiry.remove(q);
		iq.byLateness.remove(q);
		ungroup(q);
		q.queue = null;
		InstanceState s = iq.state;
		if (iq.byArrival.isEmpty()) {
			nonEmpty.remove(iq);
			Pullable p = byAlternative.get(s);
			if (p != null && !p.requests.isEmpty()) {
				pullers.add(p);
			}
		}
		unpark(iq);
		s.addQueued(-q.uncachedTokens, -PrefillWork.pairs(q.cachedTokens, q.uncachedTokens));
		s.queuedRequests.decrementAndGet();
		PromptBlocks blocks = q.request().blocks();
		if (settings.countQueuedPrefixes() && blocks != null) {
			s.queuedPrefixes().remove(blocks.chain());
		}
		oldest(iq, iq.byArrival.isEmpty() ? Long.MAX_VALUE : iq.byArrival.first().submittedAtNanos());
		queuedTotal--;
		queuedSlos.merge(q.request().sloTtftNanos(), -1, (a, b) -> a + b == 0 ? null : a + b);
		fair.remove(q, iq, pool.now());
		unindex(q);
	}

	/**
	 * Files {@code q}, queued in {@code iq}, in the group of its other candidate on
	 * {@code rings} ({@link InstanceQueue#byOther}), or with those that have no other
	 * candidate they may move to (it is not a member, or {@code q} avoids it): the
	 * hotspot moves pass over a group whose candidate had no room for any of its late
	 * requests while that room has not changed.
	 */
	void group(RequestTicket q, InstanceQueue iq, DualHashRing rings) {
		InstanceState other = rings.isEmpty() ? null : otherCandidate(q, iq.state, rings);
		InstanceQueue.MoveGroup g = other == null ? iq.withoutOther
				: iq.byOther.computeIfAbsent(other, o -> new InstanceQueue.MoveGroup(o, lateOrder));
		g.add(q);
		q.moveGroup = g;
	}

	/** Takes {@code q} out of its group ({@link #group}). */
	void ungroup(RequestTicket q) {
		InstanceQueue.MoveGroup g = q.moveGroup;
		if (g == null) {
			return;
		}
		g.remove(q);
		q.moveGroup = null;
		if (g.byLateness.isEmpty() && g.other != null && q.queue != null) {
			q.queue.byOther.remove(g.other);
		}
	}

	/** Sets the oldest queued arrival of {@code iq}'s instance, and files it so. */
	private void oldest(InstanceQueue iq, long nanos) {
		iq.state.oldestQueuedNanos(nanos);
		if (iq.oldestNanos != nanos) {
			boolean filed = byOldest.remove(iq);
			iq.oldestNanos = nanos;
			if (filed) {
				byOldest.add(iq);
			}
			byOldestChanges++;
		}
	}

	// ---- parked queues ----

	/**
	 * The release pass passes over {@code iq} until something its answer depends on
	 * changes: its pump just ended with its instance full, or without room for the
	 * request it would release next, and {@code roomChangesSeen} is the instance's
	 * {@link InstanceState#roomChanges()} when it looked. A look again gives the same
	 * answer, with nothing changed, until one of: a request joins or leaves the queue
	 * (its next request may change), the instance's room changes (a release there, which
	 * also records in its shadow index, an end of prefill, its peers' published load, its
	 * engine snapshot, a peer's release recorded there, its health), the membership
	 * changes, or, at {@code wakeAtNanos}, aging makes another request its next. The
	 * caller parks a queue only where its next request depends on nothing else (one
	 * tenant waiting there, or no fair shares) and the engine's queue holds no releases
	 * (that hold ends with the snapshot's age).
	 */
	void park(InstanceQueue iq, long wakeAtNanos, long roomChangesSeen) {
		if (!shortcuts.parkQueues()) {
			return;
		}
		unparked.remove(iq);
		if (iq.parked) {
			byWake.remove(iq);
		}
		iq.parked = true;
		iq.wakeAtNanos = wakeAtNanos;
		if (wakeAtNanos != Long.MAX_VALUE) {
			byWake.add(iq);
		}
		InstanceState s = iq.state;
		parkedStates.add(s);
		// A change on another thread since the look: it may not have seen the queue
		// parked.
		if (s.roomChanges() != roomChangesSeen) {
			unpark(iq);
		}
	}

	/**
	 * Whether the next release pass passes over {@code iq}: it is parked, and neither a
	 * change of its instance's room nor aging has woken it since.
	 */
	boolean passesOver(InstanceQueue iq) {
		return iq.parked && parkedStates.contains(iq.state) && iq.wakeAtNanos > pool.now();
	}

	/** {@code iq} is looked at again by the release pass (when it has requests). */
	void unpark(InstanceQueue iq) {
		if (iq.parked) {
			iq.parked = false;
			parkedStates.remove(iq.state);
			if (iq.wakeAtNanos != Long.MAX_VALUE) {
				byWake.remove(iq);
				iq.wakeAtNanos = Long.MAX_VALUE;
			}
		}
		if (iq.byArrival.isEmpty()) {
			unparked.remove(iq);
		}
		else {
			unparked.add(iq);
		}
	}

	/** Every queue is looked at again (the membership changed). */
	void unparkAll() {
		for (InstanceQueue iq : queues.values()) {
			unpark(iq);
		}
	}

	/**
	 * The room of {@code s} may have grown (any thread): its queue, when parked, is
	 * looked at again.
	 */
	private void roomChanged(InstanceState s) {
		if (!parkedStates.isEmpty() && parkedStates.remove(s)) {
			woken.add(s);
		}
	}

	/**
	 * Unparks the queues whose instance's room changed and those aging wakes by
	 * {@code nowNanos}.
	 */
	private void wake(long nowNanos) {
		for (InstanceState s = woken.poll(); s != null; s = woken.poll()) {
			InstanceQueue iq = queues.get(s);
			if (iq != null && iq.parked) {
				unpark(iq);
			}
		}
		while (!byWake.isEmpty() && byWake.first().wakeAtNanos <= nowNanos) {
			unpark(byWake.first());
		}
	}

	/**
	 * As {@link #nextNonEmpty}, over the queues that are not parked, after unparking
	 * those woken since: a release pass that passes over the parked queues. A queue woken
	 * during the pass (a rescue released or queued a request there) is found when the
	 * pass reaches it, as the plain pass would.
	 */
	@Nullable InstanceQueue nextUnparked(@Nullable InstanceQueue after, long end) {
		wake(pool.now());
		return nextBelow(unparked, after, end, QUEUE_ORDINAL);
	}

	/**
	 * The members that are not hotspots by their wait (nothing queued, or the oldest
	 * queued request waited no longer than the hotspot bound), when every member has its
	 * queue and there are at most {@code most} of them; else {@code null}. Every other
	 * member is a hotspot ({@link InstancePool#isHotspot}), so it takes no move. The list
	 * may also name members that aged since it was made: callers ask each whether it is a
	 * hotspot.
	 */
	@Nullable List<InstanceState> youngMembers(int most) {
		// Every member with nothing queued is young: with more of them than most, no
		// need to look.
		if (pool.rings() != seenRings || queues.size() != pool.size() || queues.size() - nonEmpty.size() > most) {
			return null;
		}
		long now = pool.now();
		// The moves ask once per request they look at: while no queue's oldest request
		// changed, the last answer holds every member that is young now (time only ages
		// them), and the callers ask each one it names whether it is a hotspot.
		if (youngFor == byOldestChanges && now >= youngAtNanos && youngMost == most) {
			return young;
		}
		youngFor = byOldestChanges;
		youngAtNanos = now;
		youngMost = most;
		young = youngMembers(most, now);
		return young;
	}

	private @Nullable List<InstanceState> youngMembers(int most, long now) {
		long maxWait = pool.settings().hotspotMaxWaitNanos();
		List<InstanceState> found = new ArrayList<>();
		for (InstanceQueue iq : byOldest.descendingSet()) {
			long oldest = iq.oldestNanos;
			if (oldest != Long.MAX_VALUE && now - oldest > maxWait) {
				break;
			}
			if (found.size() == most) {
				return null;
			}
			found.add(iq.state);
		}
		return found;
	}

	/**
	 * Files {@code q}, queued on {@code s}, under the candidate of its key that is not
	 * {@code s} (the first candidate when it waits on neither, as after a move to a
	 * neighbour), so an idle instance finds what it may pull without scanning every
	 * queue.
	 */
	void index(RequestTicket q, InstanceState s) {
		DualHashRing rings = pool.rings();
		if (q.pinned || !settings.idlePull() || settings.mode() != DispatchMode.QUEUE || rings.members().size() < 2) {
			return;
		}
		InstanceState alt = otherCandidate(q, s, rings);
		if (alt == null) {
			return;
		}
		q.alternative = alt;
		Pullable p = byAlternative.computeIfAbsent(alt, k -> new Pullable(k, pullableOrdinals++));
		if (p.requests.add(q) && p.requests.size() == 1 && nothingQueued(alt)) {
			pullers.add(p);
		}
	}

	/**
	 * The candidate of {@code q}'s key on {@code rings} that is not {@code s} (the first
	 * when it waits on neither, as after a move to a neighbour), when that is a member
	 * other than {@code s} and {@code q} does not avoid it; else {@code null}.
	 */
	@Nullable InstanceState otherCandidate(RequestTicket q, InstanceState s, DualHashRing rings) {
		Candidates c = candidatesOf(q, rings);
		InstanceState other = pool.instance(c.first().equals(s.id()) ? c.second() : c.first());
		return other == null || other == s || q.avoid.contains(other.id()) ? null : other;
	}

	/** Takes {@code q} out of the idle pull's index. */
	void unindex(RequestTicket q) {
		InstanceState alt = q.alternative;
		if (alt == null) {
			return;
		}
		q.alternative = null;
		Pullable p = byAlternative.get(alt);
		if (p != null && p.requests.remove(q) && p.requests.isEmpty()) {
			pullers.remove(p);
			emptied.add(p);
		}
	}

	/**
	 * The queue with requests after {@code after} (the first for {@code null}) among
	 * those of ordinal below {@code end}. A pass over the queues that existed when it
	 * began, in their order, that may fill or empty queues as it goes, steps with this
	 * from {@code null} until null: exactly the queues a pass over all of them would find
	 * with requests when it reaches them.
	 */
	@Nullable InstanceQueue nextNonEmpty(@Nullable InstanceQueue after, long end) {
		return nextBelow(nonEmpty, after, end, QUEUE_ORDINAL);
	}

	/** As {@link #nextNonEmpty}, over the entries of byAlternative with requests. */
	@Nullable Pullable nextPuller(@Nullable Pullable after, long end) {
		return nextBelow(pullers, after, end, PULLABLE_ORDINAL);
	}

	/**
	 * The element of {@code set} after {@code after} (its first for {@code null}) when
	 * its ordinal is below {@code end}, else {@code null}.
	 */
	static <T> @Nullable T nextBelow(TreeSet<T> set, @Nullable T after, long end, ToLongFunction<T> ordinal) {
		T next = after != null ? set.higher(after) : set.isEmpty() ? null : set.first();
		return next != null && ordinal.applyAsLong(next) < end ? next : null;
	}

	/** Drops the entries of byAlternative without requests. */
	void dropEmptyPullables() {
		for (Pullable p : emptied) {
			if (p.requests.isEmpty() && byAlternative.get(p.idle) == p) {
				byAlternative.remove(p.idle);
			}
		}
		emptied.clear();
	}

	/** Whether {@code s} has no request queued (or no queue). */
	boolean nothingQueued(InstanceState s) {
		InstanceQueue iq = queues.get(s);
		return iq == null || iq.byArrival.isEmpty();
	}

	// ---- what the rules ask of a request and an instance ----

	/** {@code request}'s TTFT objective: its own, else the pool's default. */
	long sloOf(RoutingRequest request) {
		return request.sloTtftNanos() > 0 ? request.sloTtftNanos() : pool.settings().defaultSloNanos();
	}

	/**
	 * Whether {@code q} would miss its SLO where it waits: its wait so far plus
	 * {@code estimateHereNanos} exceeds {@code sloNanos}. With
	 * {@link QueueSettings#moveLateOnly()} only such requests move: one that makes its
	 * SLO where it waits keeps its cached prefix, which at capacity is worth more to the
	 * pool than the earlier start a move would give it. With
	 * {@link QueueSettings#shedHopeless()} such a request is not released either
	 * ({@link ReleasePass#hopeless}).
	 */
	boolean late(RequestTicket q, long estimateHereNanos, long sloNanos) {
		return pool.now() - q.submittedAtNanos() + estimateHereNanos > sloNanos;
	}

	/** Whether rebalancing may still move {@code q} (or an idle instance pull it). */
	boolean movable(RequestTicket q) {
		return !q.pinned && q.migrations < settings.maxMigrations();
	}

	/**
	 * Whether {@code s} may start a request of {@code uncached} tokens now
	 * ({@link EngineQueueGate}): the release limits over this gateway's prefill there
	 * (and its peers' under replica sync), held while the engine queues requests this
	 * gateway did not send ({@link QueueSettings#holdOnEngineQueue()}).
	 */
	boolean hasRoom(InstanceState s, int uncached) {
		return gate.hasRoom(s, uncached);
	}

	/** {@code q}'s two candidates on {@code rings}, worked out once per membership. */
	static Candidates candidatesOf(RequestTicket q, DualHashRing rings) {
		if (q.candidateRings != rings) {
			q.candidates = rings.candidates(q.key());
			q.candidateRings = rings;
			q.moveWalkStart = -1;
		}
		return q.candidates;
	}

	/**
	 * Estimated cached prefix of {@code q} on {@code s}, from its shadow index. The
	 * release pass and the moves ask again for the same request and instance on many
	 * events: the last answer is kept with the index's {@link ShadowKvIndex#version()}
	 * and given again while the index holds the same blocks.
	 */
	int cachedTokens(RequestTicket q, InstanceState s) {
		PromptBlocks blocks = q.request().blocks();
		if (blocks == null) {
			return 0;
		}
		ShadowKvIndex shadow = s.shadow();
		if (!shortcuts.reuseCachedPrefix()) {
			return blocks.tokensFor(shadow.peekMatchedBlocks(blocks.chain()));
		}
		// Read before the look: a record meanwhile leaves a version that is already old.
		long version = shadow.version();
		if (q.peekedShadow == shadow && q.peekedVersion == version) {
			return q.peekedTokens;
		}
		int tokens = blocks.tokensFor(shadow.peekMatchedBlocks(blocks.chain()));
		q.peekedShadow = shadow;
		q.peekedVersion = version;
		q.peekedTokens = tokens;
		return tokens;
	}

	// ---- a rejection ----

	/** Rejects {@code q} without naming an instance; see the other {@code reject}. */
	void reject(RequestTicket q, int status, String message, long retryAfterSeconds, List<Runnable> out) {
		reject(q, status, message, null, retryAfterSeconds, out);
	}

	/**
	 * Turns {@code q} away with {@code status} (429 or 503) and a Retry-After, counts it,
	 * and hands the rejection to its listener outside the lock.
	 */
	void reject(RequestTicket q, int status, String message, @Nullable String instanceId, long retryAfterSeconds,
			List<Runnable> out) {
		q.state = RequestTicket.State.REJECTED;
		stats.recordRejection();
		Rejection r = new Rejection(status, message, retryAfterSeconds, instanceId);
		out.add(() -> {
			try {
				q.listener.rejected(q, r);
			}
			catch (RuntimeException ex) {
				LOG.log(System.Logger.Level.WARNING, "listener failed on rejection of " + q.request().id(), ex);
			}
		});
	}

	/**
	 * Seconds until an instance with this estimated backlog drains, within [1, maxWait].
	 */
	long retryAfter(long backlogNanos) {
		long maxSeconds = Math.max(1, settings.maxWaitNanos() / 1_000_000_000L);
		long seconds = (backlogNanos + 999_999_999L) / 1_000_000_000L;
		return Math.max(1, Math.min(maxSeconds, seconds));
	}

}

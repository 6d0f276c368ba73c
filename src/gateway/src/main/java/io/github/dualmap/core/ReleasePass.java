package io.github.dualmap.core;

import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * The release gate and pass of {@link DispatchQueues}: which queued request an instance
 * takes next (with fair shares, the next of the tenant whose turn it is; else an aged
 * request, then the longest cached prefix), whether the instance has prefill capacity for
 * it now ({@link EngineQueueGate}), and the release itself. A request whose wait plus its
 * estimate there already misses its SLO is not sent but rescued or answered 503
 * ({@link QueueSettings#shedHopeless()}). Also ends the estimated prefill of
 * non-streaming requests, whose first byte comes only at the end of generation.
 */
final class ReleasePass {

	private static final System.Logger LOG = System.getLogger(DispatchQueues.class.getName());

	// Estimated ends of prefill come in this order.
	private static final Comparator<RequestTicket> PREFILL_DEADLINE = (x, y) -> InstanceQueue
		.bySequenceAfter(x.prefillDeadlineNanos, y.prefillDeadlineNanos, x, y);

	private final QueueBook book;

	private final InstancePool pool;

	private final QueueSettings settings;

	private final EngineQueueGate gate;

	private final FairShares fair;

	private final QueueStatistics stats;

	private final RoutingPolicy policy;

	// Called outside the lock when a listener fails on a release: nobody else will
	// report that request's end.
	private final Consumer<RequestTicket> finishOnFailure;

	// Told, outside the lock, of an estimated end of prefill that is the earliest.
	private final LongConsumer earlierDeadline;

	// Set once by the coordinator: where hopeless requests get their last chance.
	private Rescue rescue;

	private final TreeSet<RequestTicket> prefillEstimates = new TreeSet<>(PREFILL_DEADLINE);

	ReleasePass(QueueBook book, RoutingPolicy policy, Consumer<RequestTicket> finishOnFailure,
			LongConsumer earlierDeadline) {
		this.book = book;
		this.pool = book.pool;
		this.settings = book.settings;
		this.gate = book.gate;
		this.fair = book.fair;
		this.stats = book.stats;
		this.policy = policy;
		this.finishOnFailure = finishOnFailure;
		this.earlierDeadline = earlierDeadline;
	}

	/** Where a request found hopeless at its release gets its last chance. */
	void rescueHopelessWith(Rescue rescue) {
		this.rescue = rescue;
	}

	/** The released {@code q}'s prefill ended: its estimate no longer needs ending. */
	void prefillEnded(RequestTicket q) {
		prefillEstimates.remove(q);
	}

	/** When the earliest estimated prefill ends; {@code Long.MAX_VALUE} when none. */
	long nextPrefillDeadlineNanos() {
		return prefillEstimates.isEmpty() ? Long.MAX_VALUE : prefillEstimates.first().prefillDeadlineNanos;
	}

	/** Releases queued requests of every instance while they have prefill capacity. */
	void pumpAll(List<Runnable> out) {
		long end = book.queueOrdinals;
		if (!book.shortcuts.parkQueues()) {
			for (InstanceQueue iq = book.nextNonEmpty(null, end); iq != null; iq = book.nextNonEmpty(iq, end)) {
				pump(iq, out);
			}
			return;
		}
		// A parked queue would release nothing and change nothing (QueueBook.park).
		for (InstanceQueue iq = book.nextUnparked(null, end); iq != null; iq = book.nextUnparked(iq, end)) {
			pump(iq, out);
		}
	}

	/**
	 * Releases the requests of {@code iq}, next first, while its instance has prefill
	 * capacity for the next one.
	 */
	void pump(InstanceQueue iq, List<Runnable> out) {
		InstanceState s = iq.state;
		long now = pool.now();
		while (!iq.byArrival.isEmpty()) {
			long roomChanges = s.roomChanges();
			// A full instance takes no request, whichever is next: no need to find it.
			if (gate.full(s)) {
				book.park(iq, Long.MAX_VALUE, roomChanges);
				return;
			}
			RequestTicket next = nextOf(iq, now);
			Split split = splitOn(next, s);
			int cached = split.cached();
			int uncached = split.uncached();
			if (!book.hasRoom(s, uncached)) {
				parkWithoutRoom(iq, now, roomChanges);
				return;
			}
			PrefillWork ahead = pool.prefillWork(s);
			// Judged with another sender's prompt in prefill ahead of it; the release
			// records ahead alone, which the TTFT model is fitted against.
			long foreign = foreignPrefill(s);
			long estimate = pool.estimateTtft(s, pool.plusForeign(ahead, foreign), cached, uncached);
			if (hopeless(next, s, estimate, foreign)) {
				// Before it leaves the queue: whether anything else of this gateway's
				// waits.
				boolean forOthers = book.queuedTotal <= 1;
				long waitedMs = (now - next.submittedAtNanos()) / 1_000_000;
				long estimateMs = estimate / 1_000_000;
				book.dequeue(next);
				if (!rescue.tryRescue(next, iq, out)) {
					stats.recordHopelessShed(forOthers);
					book.reject(next, Rejection.SERVICE_UNAVAILABLE,
							"request waited " + waitedMs + " ms for its instance in pool '" + pool.name()
									+ "' and would need about " + estimateMs
									+ " ms more for its first token there: past its TTFT objective of "
									+ book.sloOf(next.request()) / 1_000_000 + " ms",
							s.id(), book.retryAfter(pool.estimateTtft(s, 0, 0)), out);
				}
				continue;
			}
			book.dequeue(next);
			next.cachedTokens = cached;
			next.uncachedTokens = uncached;
			release(next, s, ahead, out);
		}
	}

	/**
	 * Sends {@code q}, just admitted to {@code s}, there at once when nothing waits in
	 * any queue of the pool and {@code s} accepts work and has room for it
	 * ({@link QueueShortcuts#releaseAtOnce()}): queued, {@code q} would be the only
	 * request the release pass that follows finds (no queue to evacuate, none to pump
	 * before or after it, and with nothing else waiting it is never hopeless), so the
	 * pass would release it as this does, after ending the estimated prefills as the pass
	 * does first, without filing it in the queue's orders and taking it out again. Where
	 * requests wait for {@code s} outside this gateway's queues (its peers', or another
	 * sender's behind a prompt in prefill) a request alone may be hopeless, so the pass
	 * decides.
	 * @return whether it was sent; if not, it is to be queued
	 */
	boolean releaseAtOnce(RequestTicket q, InstanceState s, List<Runnable> out) {
		if (!book.shortcuts.releaseAtOnce() || book.queuedTotal != 0 || !s.acceptsNewWork()) {
			return false;
		}
		long now = pool.now();
		endEstimatedPrefills(now);
		if (gate.full(s) || (shedsHopeless() && othersWaitOutside(s, foreignPrefill(s)))) {
			return false;
		}
		Split split = splitOn(q, s);
		if (!book.hasRoom(s, split.uncached())) {
			return false;
		}
		fair.passThrough(q, now);
		q.cachedTokens = split.cached();
		q.uncachedTokens = split.uncached();
		stats.recordReleasedAtOnce();
		release(q, s, pool.prefillWork(s), out);
		return true;
	}

	/**
	 * The prompt of {@code q} on {@code s}, cached and uncached tokens, as it would be
	 * released there now: requests released before it may have put more of its prefix in
	 * the cache (a request without blocks keeps its placement's split).
	 */
	private Split splitOn(RequestTicket q, InstanceState s) {
		if (q.request().blocks() == null) {
			return new Split(q.cachedTokens, q.uncachedTokens);
		}
		int cached = book.cachedTokens(q, s);
		return new Split(cached, Math.max(0, q.request().promptTokens() - cached));
	}

	private record Split(int cached, int uncached) {
	}

	/**
	 * Parks {@code iq}, whose instance has no room for its next request
	 * ({@link QueueBook#park}), when that request depends only on the queue's requests
	 * and the time (no fair shares, or one tenant waiting there) and the engine's queue
	 * holds nothing back (a hold ends with the snapshot's age, which no event marks).
	 * Aging wakes it when its oldest-aging request becomes the next.
	 */
	private void parkWithoutRoom(InstanceQueue iq, long now, long roomChanges) {
		if ((fair.enabled() && fair.tenantsWaiting(iq) != 1) || gate.holding(iq.state)) {
			return;
		}
		RequestTicket aged = iq.byAged.first();
		book.park(iq, now >= aged.agedAtNanos ? Long.MAX_VALUE : aged.agedAtNanos, roomChanges);
	}

	/**
	 * The request {@code iq} releases next: with fair shares, the next of the tenant
	 * {@link FairShares#next} picks; else an aged request first, then the longest cached
	 * prefix.
	 */
	private RequestTicket nextOf(InstanceQueue iq, long now) {
		if (fair.enabled()) {
			return fair.next(iq, now);
		}
		RequestTicket aged = iq.byAged.first();
		return now >= aged.agedAtNanos ? aged : iq.byPriority.first();
	}

	/**
	 * Whether {@code q}, about to be released to {@code s} with a TTFT estimate of
	 * {@code estimateNanos} there (the prefill ahead of it in the engine, with
	 * {@code foreign} tokens of another sender's prompt, and its own uncached tokens), is
	 * not to be sent ({@link QueueSettings#shedHopeless()}): its wait so far plus that
	 * estimate exceeds its SLO, and other requests wait: in this router's queues, or, as
	 * its peers published (replica sync), in theirs for {@code s}, or, without their
	 * load, behind another sender's prompt in prefill on {@code s}
	 * ({@link EngineQueueGate#foreignPrefill}: that sender's next requests queue behind
	 * this one), or, with or without their load, where another sender's requests run at
	 * all ({@link EngineQueueGate#otherSenders}). Alone it is sent: late, it still delays
	 * no one.
	 */
	private boolean hopeless(RequestTicket q, InstanceState s, long estimateNanos, long foreign) {
		return shedsHopeless() && (book.queuedTotal > 1 || othersWaitOutside(s, foreign))
				&& book.late(q, estimateNanos, book.sloOf(q.request()));
	}

	/**
	 * Uncached tokens of another sender's prompt in prefill on {@code s} as its engine
	 * shows it ({@link EngineQueueGate#foreignPrefill}), where
	 * {@link QueueSettings#shedBehindForeignPrefill()} judges requests behind it; else 0.
	 */
	private long foreignPrefill(InstanceState s) {
		return settings.shedBehindForeignPrefill() ? gate.foreignPrefill(s) : 0;
	}

	private boolean shedsHopeless() {
		return settings.shedHopeless() && settings.expiry() == QueueSettings.Expiry.REJECT;
	}

	/**
	 * Whether requests wait for {@code s} outside this gateway's queues, which a late
	 * request sent there would hold up: its peers' queued tokens there as they published
	 * them, or the next requests of another sender with {@code foreign} tokens of its
	 * prompt in prefill there ({@link #foreignPrefill}), or, with
	 * {@link QueueSettings#shedWhereOthersSend()}, of another sender whose requests the
	 * engine ran or queued at its last scrape ({@link EngineQueueGate#otherSenders}).
	 */
	private boolean othersWaitOutside(InstanceState s, long foreign) {
		return s.peerQueuedTokens() > 0 || foreign > 0 || (settings.shedWhereOthersSend() && gate.otherSenders(s));
	}

	/**
	 * Sends {@code q} to {@code s} behind {@code ahead} (the prefill there before it),
	 * charges its tenant, and hands the release to its listener outside the lock.
	 */
	void release(RequestTicket q, InstanceState s, PrefillWork ahead, List<Runnable> out) {
		Decision prior = q.decision;
		Decision d = new Decision(s.id(), prior == null ? Reason.FALLBACK : prior.reason(), q.cachedTokens,
				q.uncachedTokens, prior == null ? -1 : prior.ttftEstimateNanos());
		InstancePool.InFlight dispatch = pool.dispatch(q.request(), d, s, ahead);
		q.decision = d;
		q.dispatch = dispatch;
		q.state = RequestTicket.State.RELEASED;
		stats.recordRelease();
		fair.charge(q, pool.now());
		if (!q.streaming()) {
			q.prefillDeadlineNanos = dispatch.sentAtNanos()
					+ pool.estimateTtft(s, ahead, q.cachedTokens, q.uncachedTokens);
			prefillEstimates.add(q);
			if (prefillEstimates.first() == q) {
				long at = q.prefillDeadlineNanos;
				out.add(() -> {
					try {
						earlierDeadline.accept(at);
					}
					catch (RuntimeException ex) {
						// The callbacks after it hand out other requests' outcomes.
						LOG.log(System.Logger.Level.WARNING, "deadline listener failed", ex);
					}
				});
			}
		}
		out.add(() -> {
			pool.recordReleased(s, q.request());
			policy.onDispatched(q.request(), d, pool);
			try {
				q.listener.released(q, d, dispatch);
			}
			catch (RuntimeException ex) {
				// Nobody will report this request's end: finish it so counters do not
				// leak.
				LOG.log(System.Logger.Level.WARNING, "listener failed on release of " + q.request().id(), ex);
				finishOnFailure.accept(q);
			}
		});
	}

	/**
	 * Ends the prefill of the released non-streaming requests whose estimated end is at
	 * or before {@code nowNanos}.
	 */
	void endEstimatedPrefills(long nowNanos) {
		while (!prefillEstimates.isEmpty() && prefillEstimates.first().prefillDeadlineNanos <= nowNanos) {
			RequestTicket q = prefillEstimates.pollFirst();
			InstancePool.InFlight d = q.dispatch;
			if (d != null) {
				d.endPrefill(false);
			}
		}
	}

}

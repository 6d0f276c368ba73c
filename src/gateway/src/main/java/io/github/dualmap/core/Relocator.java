package io.github.dualmap.core;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Where a request the queues already hold goes when it must leave the instance it was
 * placed on (its instance left, drains, refuses it, or its queue is full), and the step
 * every move of a queued request takes: its prefix split and decision for the new
 * instance, and its requeueing there. Shared by {@link QueueAdmission},
 * {@link Evacuation}, {@link Rescue}, {@link Rebalancer} and {@link IdlePull}, which
 * decide when a request moves; this class decides only where a displaced one goes.
 * Guarded by the queues' lock.
 */
final class Relocator {

	private final QueueBook book;

	private final InstancePool pool;

	Relocator(QueueBook book) {
		this.book = book;
		this.pool = book.pool;
	}

	/** Whether {@code s} accepts work and is not an instance {@code q} must avoid. */
	static boolean mayTake(RequestTicket q, InstanceState s) {
		return s.acceptsNewWork() && !q.avoid.contains(s.id());
	}

	/**
	 * Where a request goes whose instance is gone or will not take it: of its current
	 * candidates that accept work, the longer cached prefix, then the lower TTFT
	 * estimate; else the first instance on ring 1 that accepts work. The per-instance
	 * bound is not applied: the request was already admitted.
	 */
	@Nullable InstanceState place(RequestTicket q, @Nullable InstanceState exclude) {
		DualHashRing rings = pool.rings();
		if (rings.isEmpty()) {
			return null;
		}
		Candidates c = QueueBook.candidatesOf(q, rings);
		InstanceState best = null;
		int bestCached = -1;
		long bestEst = Long.MAX_VALUE;
		for (String id : List.of(c.first(), c.second())) {
			InstanceState s = pool.instance(id);
			if (s == null || s == exclude || !mayTake(q, s)) {
				continue;
			}
			int cached = book.cachedTokens(q, s);
			long est = pool.warmthScaled(s,
					pool.estimateTtft(s, cached, Math.max(0, q.request().promptTokens() - cached)));
			if (cached > bestCached || (cached == bestCached && est < bestEst)) {
				best = s;
				bestCached = cached;
				bestEst = est;
			}
		}
		if (best != null) {
			return best;
		}
		String id = rings.walk(0, q.key(), i -> {
			InstanceState s = pool.instance(i);
			return s != null && s != exclude && mayTake(q, s);
		});
		return id == null ? null : pool.instance(id);
	}

	/**
	 * Moves the queued {@code q} to {@code target}'s queue with its prefix split there
	 * and a decision for {@code reason} with {@code estimateNanos}.
	 */
	void move(RequestTicket q, InstanceState target, Reason reason, long estimateNanos) {
		book.dequeue(q);
		int cached = book.cachedTokens(q, target);
		q.cachedTokens = cached;
		q.uncachedTokens = Math.max(0, q.request().promptTokens() - cached);
		q.decision = new Decision(target.id(), reason, q.cachedTokens, q.uncachedTokens, estimateNanos);
		book.enqueue(q, target);
	}

	/**
	 * Sets {@code q}'s prefix split for {@code s}; its decision with the TTFT estimate
	 * there.
	 */
	Decision decisionOn(RequestTicket q, InstanceState s, Reason reason) {
		int cached = book.cachedTokens(q, s);
		return decisionOn(q, s, reason, cached,
				pool.estimateTtft(s, cached, Math.max(0, q.request().promptTokens() - cached)));
	}

	/**
	 * Sets {@code q}'s prefix split for {@code s} ({@code cached} tokens cached there);
	 * its decision with that estimate.
	 */
	static Decision decisionOn(RequestTicket q, InstanceState s, Reason reason, int cached, long estimateNanos) {
		q.cachedTokens = cached;
		q.uncachedTokens = Math.max(0, q.request().promptTokens() - cached);
		return new Decision(s.id(), reason, q.cachedTokens, q.uncachedTokens, estimateNanos);
	}

}

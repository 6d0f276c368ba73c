package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.List;

/**
 * Requests whose instance will not take them in {@link DispatchQueues}: when the
 * membership changes, every member that joined gets its queue, every queued request's
 * candidates are worked out again and the queue of an instance that left is placed anew
 * (or rejected with 503 when no instance accepts work); the queues of draining or
 * unhealthy instances move to their best alternative before each release pass.
 */
final class Evacuation {

	private final QueueBook book;

	private final InstancePool pool;

	private final QueueSettings settings;

	private final QueueStatistics stats;

	private final Relocator relocator;

	Evacuation(QueueBook book, Relocator relocator) {
		this.book = book;
		this.relocator = relocator;
		this.pool = book.pool;
		this.settings = book.settings;
		this.stats = book.stats;
	}

	/**
	 * When the rings changed since the last look: gives every member that joined its
	 * queue, works out every queued request's candidates again and places the queue of
	 * each instance that left anew.
	 */
	void reconcileMembership(List<Runnable> out) {
		DualHashRing rings = pool.rings();
		if (rings == book.seenRings) {
			return;
		}
		book.seenRings = rings;
		book.unparkAll();
		// A member that joined has its queue from now, before anything is placed there:
		// its place in the order of queues is its place in the membership's.
		book.queueEveryMember();
		// Candidates follow the rings: every queued request's alternative is recomputed.
		for (InstanceQueue iq : book.queues.values()) {
			for (RequestTicket q : iq.byArrival) {
				book.unindex(q);
				book.index(q, iq.state);
				book.ungroup(q);
				book.group(q, iq, rings);
			}
		}
		book.dropEmptyPullables();
		for (InstanceQueue iq : List.copyOf(book.queues.values())) {
			if (pool.instance(iq.state.id()) == iq.state) {
				continue;
			}
			// The instance left (or left and came back as a new object): its queue goes.
			List<RequestTicket> orphans = new ArrayList<>(iq.byArrival);
			for (RequestTicket q : orphans) {
				book.dequeue(q);
			}
			book.dropQueue(iq.state);
			for (RequestTicket q : orphans) {
				InstanceState target = relocator.place(q, null);
				if (target == null) {
					book.reject(q, Rejection.SERVICE_UNAVAILABLE,
							"its instance left pool '" + pool.name() + "' and no other accepts requests", iq.state.id(),
							settings.unavailableRetryAfterSeconds(), out);
				}
				else {
					q.decision = relocator.decisionOn(q, target, Reason.FALLBACK);
					book.enqueue(q, target);
					stats.recordRerouted();
				}
			}
		}
	}

	/**
	 * Moves the queued work of draining or unhealthy instances to its best alternative,
	 * when there is one (else it waits and is still released there). The release pass
	 * that follows sends what fits.
	 */
	void evacuate() {
		// Every member accepts work (reconcileMembership dropped the queues of those
		// that left): nothing to evacuate, without a look at each queue.
		if (pool.size() < 2
				|| (book.shortcuts.skipEvacuationWhileAllAccept() && pool.acceptingCount() == pool.size())) {
			return;
		}
		long end = book.queueOrdinals;
		for (InstanceQueue iq = book.nextNonEmpty(null, end); iq != null; iq = book.nextNonEmpty(iq, end)) {
			if (iq.byArrival.isEmpty() || iq.state.acceptsNewWork()) {
				continue;
			}
			for (RequestTicket q : new ArrayList<>(iq.byArrival)) {
				InstanceState target = relocator.place(q, iq.state);
				if (target != null) {
					int cached = book.cachedTokens(q, target);
					relocator.move(q, target, Reason.FALLBACK,
							pool.estimateTtft(target, cached, Math.max(0, q.request().promptTokens() - cached)));
					stats.recordRerouted();
				}
			}
		}
	}

}

package io.github.dualmap.core;

import java.util.Comparator;
import java.util.TreeSet;

/**
 * The requests waiting for one instance in {@link DispatchQueues}, the same elements in
 * each order a queue rule reads them in: by cached prefix for the release pass, by
 * arrival for the moves and shedding, by aging time, by expiry, and by when they become
 * late for the moves. Keeping every order indexed lets each rule take its first element
 * instead of scanning the queue.
 */
final class InstanceQueue {

	// Longest estimated cached prefix first, then arrival (submission) order.
	static final Comparator<QueuedRequest> PRIORITY = Comparator.comparingInt((QueuedRequest q) -> -q.cachedTokens)
		.thenComparingLong(QueuedRequest::sequence);

	static final Comparator<QueuedRequest> ARRIVAL = Comparator.comparingLong(QueuedRequest::submittedAtNanos)
		.thenComparingLong(QueuedRequest::sequence);

	// Expiry order: arrival order when every request has the queues' wait bound.
	static final Comparator<QueuedRequest> EXPIRY = Comparator.comparingLong((QueuedRequest q) -> q.expiresAtNanos)
		.thenComparingLong(QueuedRequest::sequence);

	// Aged requests go first, earliest aging time first: arrival order among requests of
	// one SLO, a tighter SLO ahead of a looser one.
	static final Comparator<QueuedRequest> AGED = Comparator.comparingLong((QueuedRequest q) -> q.agedAtNanos)
		.thenComparingLong(QueuedRequest::sequence);

	final InstanceState state;

	final TreeSet<QueuedRequest> byPriority = new TreeSet<>(PRIORITY);

	final TreeSet<QueuedRequest> byArrival = new TreeSet<>(ARRIVAL);

	final TreeSet<QueuedRequest> byAged = new TreeSet<>(AGED);

	final TreeSet<QueuedRequest> byExpiry = new TreeSet<>(EXPIRY);

	// The same requests by when they become late ({@code lateOrder}): the moves look
	// at a prefix of it.
	final TreeSet<QueuedRequest> byLateness;

	// Its place in the order of the queues: creation order.
	final long ordinal;

	InstanceQueue(InstanceState state, long ordinal, Comparator<QueuedRequest> lateOrder) {
		this.state = state;
		this.ordinal = ordinal;
		this.byLateness = new TreeSet<>(lateOrder);
	}

}

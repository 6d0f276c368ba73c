package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

/**
 * The requests waiting for one instance in {@link DispatchQueues}, the same elements in
 * each order a queue rule reads them in: by cached prefix for the release pass, by
 * arrival for the moves and shedding, by aging time, by expiry, and by when they become
 * late for the moves. Keeping every order indexed lets each rule take its first element
 * instead of scanning the queue.
 */
final class InstanceQueue {

	// The orders are written out rather than composed with Comparator.comparingLong:
	// every queue event compares in several of them, and the composed form calls a key
	// extractor the JIT cannot inline where one lambda class serves many keys.

	// Longest estimated cached prefix first, then arrival (submission) order.
	static final Comparator<RequestTicket> PRIORITY = (x, y) -> {
		int c = Integer.compare(-x.cachedTokens, -y.cachedTokens);
		return c != 0 ? c : Long.compare(x.sequence(), y.sequence());
	};

	static final Comparator<RequestTicket> ARRIVAL = (x, y) -> bySequenceAfter(x.submittedAtNanos(),
			y.submittedAtNanos(), x, y);

	// Expiry order: arrival order when every request has the queues' wait bound.
	static final Comparator<RequestTicket> EXPIRY = (x, y) -> bySequenceAfter(x.expiresAtNanos, y.expiresAtNanos, x, y);

	// Aged requests go first, earliest aging time first: arrival order among requests of
	// one SLO, a tighter SLO ahead of a looser one.
	static final Comparator<RequestTicket> AGED = (x, y) -> bySequenceAfter(x.agedAtNanos, y.agedAtNanos, x, y);

	/** Orders by {@code kx} against {@code ky}, then by sequence (submission order). */
	static int bySequenceAfter(long kx, long ky, RequestTicket x, RequestTicket y) {
		int c = Long.compare(kx, ky);
		return c != 0 ? c : Long.compare(x.sequence(), y.sequence());
	}

	final InstanceState state;

	final TreeSet<RequestTicket> byPriority = new TreeSet<>(PRIORITY);

	final TreeSet<RequestTicket> byArrival = new TreeSet<>(ARRIVAL);

	final TreeSet<RequestTicket> byAged = new TreeSet<>(AGED);

	final TreeSet<RequestTicket> byExpiry = new TreeSet<>(EXPIRY);

	// The same requests by when they become late ({@code lateOrder}): the moves look
	// at a prefix of it.
	final TreeSet<RequestTicket> byLateness;

	// The same requests by their other candidate, when they may move there
	// (QueueBook.group), each group in lateness order; those that may not are in
	// withoutOther. Insertion order keeps simulations reproducible.
	final Map<InstanceState, MoveGroup> byOther = new LinkedHashMap<>();

	final MoveGroup withoutOther;

	// Its place in the order of the queues: creation order.
	final long ordinal;

	// Its instance's oldest queued arrival as QueueBook.byOldest has it filed
	// (Long.MAX_VALUE when empty); changed only while out of that set.
	long oldestNanos = Long.MAX_VALUE;

	// Whether the release pass passes over it (QueueBook.park), and when aging makes
	// another request its next (Long.MAX_VALUE: no such moment).
	boolean parked;

	long wakeAtNanos = Long.MAX_VALUE;

	// Whether its instance takes moves off a hotspot, as one look for a move answered it
	// (Rebalancer.takesMoves), and which look: valid while that look lasts.
	long takesMovesLook;

	boolean takesMoves;

	// The estimate every request queued here has where it waits
	// (MoveGain.estimateOfEveryQueued, NOT_SHARED when theirs may differ), as the idle
	// pull's pass IdlePull.pullEstimates last took it (IdlePull.estimateHere).
	long pullEstimatesAt = -1;

	long pullEstimate;

	InstanceQueue(InstanceState state, long ordinal, Comparator<RequestTicket> lateOrder) {
		this.state = state;
		this.ordinal = ordinal;
		this.byLateness = new TreeSet<>(lateOrder);
		this.withoutOther = new MoveGroup(null, lateOrder);
	}

	/**
	 * The requests of one queue whose other candidate is {@code other} and that may move
	 * there ({@code null}: those without such a candidate), in lateness order, with what
	 * the hotspot moves last learned of them: every one up to {@code lookedUpTo} in that
	 * order, but those in {@code withRoom}, either may not move or found {@code other}
	 * without prefill room for it while that instance's
	 * {@link InstanceState#roomChanges()} stood at {@code noRoomAt}
	 * ({@code Rebalancer.bestLateMove}).
	 */
	static final class MoveGroup {

		final @Nullable InstanceState other;

		final TreeSet<RequestTicket> byLateness;

		// The first of byLateness (null when empty), kept at hand: the moves ask every
		// group of a hotspot for it on every look.
		@Nullable RequestTicket first;

		@Nullable RequestTicket lookedUpTo;

		// May name requests that left the group since; the moves drop those as they
		// pass.
		final List<RequestTicket> withRoom = new ArrayList<>();

		long noRoomAt = -1;

		MoveGroup(@Nullable InstanceState other, Comparator<RequestTicket> lateOrder) {
			this.other = other;
			this.byLateness = new TreeSet<>(lateOrder);
		}

		void add(RequestTicket q) {
			byLateness.add(q);
			if (first == null || byLateness.comparator().compare(q, first) < 0) {
				first = q;
			}
			// A request filed before the last one looked at never was looked at: what
			// was learned no longer covers every request up to there.
			if (lookedUpTo != null && byLateness.comparator().compare(q, lookedUpTo) < 0) {
				forget();
			}
		}

		/** Takes {@code q} out of the group. */
		void remove(RequestTicket q) {
			if (byLateness.remove(q) && q == first) {
				first = byLateness.isEmpty() ? null : byLateness.first();
			}
		}

		/** Forgets what the moves learned of these requests. */
		void forget() {
			lookedUpTo = null;
			withRoom.clear();
			noRoomAt = -1;
		}

	}

}

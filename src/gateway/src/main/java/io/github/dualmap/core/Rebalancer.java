package io.github.dualmap.core;

import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * Hotspot rebalancing in {@link DispatchQueues}: while an instance is a hotspot, its
 * queued request with the best {@link MoveGain net gain} moves to its other candidate (or
 * the next instance on the second ring that takes it), at most
 * {@link QueueSettings#maxMovesPerTrigger()} moves per event; with
 * {@link QueueSettings#moveLateOnly()} only requests that would miss their SLO where they
 * wait move. The instances that took requests then release what fits. With
 * {@link QueueSettings#maxMoveChecksPerTrigger()} set a pass weighs at most that many
 * requests, and the next one starts after the hotspot where it stopped.
 */
final class Rebalancer {

	// Most members a move's target is looked for among (QueueBook.youngMembers) before
	// the walk of the ring is cheaper.
	static final int YOUNG_TARGETS = 32;

	private final QueueBook book;

	private final InstancePool pool;

	private final QueueSettings settings;

	private final EngineQueueGate gate;

	private final QueueStatistics stats;

	private final ReleasePass releasePass;

	private final MoveGain moveGain;

	private final Relocator relocator;

	// Set within a rebalance pass when a walk for a request that avoids nothing found no
	// member that takes a move: every member is a hotspot, full or not accepting work.
	// Nothing changes until a move, and a request that avoids some instances has fewer
	// targets, so the pass stops there.
	private boolean noMoveTarget;

	// The current look for a move (bestMove): each instance's answer to whether it takes
	// moves is kept for the look's length (InstanceQueue.takesMovesLook). 0 before any.
	private long look;

	// Requests the current pass may still weigh (QueueSettings.moveChecksPerPass).
	private int checksLeft;

	// Set when the pass has weighed as many as it may: it ends with its best move so
	// far.
	private boolean outOfChecks;

	// The passes over the queues with requests: one that runs out of checks stops at its
	// queue and the next starts after it, so a hotspot whose late requests take every
	// check does not keep the others from their turn.
	private final ResumingPass<InstanceQueue> pass;

	Rebalancer(QueueBook book, Relocator relocator, ReleasePass releasePass, MoveGain moveGain) {
		this.book = book;
		this.relocator = relocator;
		this.pool = book.pool;
		this.settings = book.settings;
		this.gate = book.gate;
		this.stats = book.stats;
		this.releasePass = releasePass;
		this.moveGain = moveGain;
		this.pass = new ResumingPass<>(book.nonEmpty, QueueBook.QUEUE_ORDINAL);
	}

	/**
	 * Moves queued requests off every hotspot, best net gain first, at most
	 * {@link QueueSettings#maxMovesPerTrigger()} per call; the instances that took
	 * requests then release what fits. The pass starts after the queue where the last one
	 * ran out of {@link QueueSettings#maxMoveChecksPerTrigger() checks} and wraps around.
	 */
	void rebalance(List<Runnable> out) {
		if (pool.size() < 2 || noTargetAnywhere()) {
			return;
		}
		checksLeft = settings.moveChecksPerPass();
		outOfChecks = false;
		// Insertion order: identity hashes would make the pump order differ between runs.
		// Made on the first move: most calls move nothing.
		Set<InstanceQueue> touched = null;
		int budget = settings.maxMovesPerTrigger();
		noMoveTarget = false;
		for (InstanceQueue iq = pass.begin(book.queueOrdinals); iq != null && !noMoveTarget; iq = pass.next(iq)) {
			while (budget > 0 && !iq.byArrival.isEmpty() && pool.isHotspot(iq.state)) {
				Move m = bestMove(iq);
				if (m == null) {
					break;
				}
				relocator.move(m.request(), m.target(), Reason.HOTSPOT, m.estimateThereNanos());
				m.request().migrations++;
				stats.recordMigration();
				budget--;
				if (touched == null) {
					touched = new LinkedHashSet<>();
				}
				touched.add(book.queueOf(m.target()));
			}
			if (outOfChecks) {
				pass.stopAt(iq);
				break;
			}
		}
		noMoveTarget = false;
		if (touched != null) {
			for (InstanceQueue iq : touched) {
				releasePass.pump(iq, out);
			}
		}
	}

	/**
	 * The queued request of hotspot {@code iq} with the best {@link MoveGain#netGain net
	 * gain} from moving, when that beats the hysteresis margin; {@code null} when no move
	 * helps.
	 */
	private @Nullable Move bestMove(InstanceQueue iq) {
		look++;
		InstanceState here = iq.state;
		PrefillWork pendingHere = pool.pendingWork(here);
		boolean lateOnly = settings.moveLateOnly();
		// On the rings the queues last saw every member has its queue, so a look for a
		// target changes nothing (a member that joined since, on another thread, may get
		// its queue from the look, in the order of the looks).
		if (lateOnly && book.shortcuts.lateRequestsOnly() && pool.rings() == book.seenRings) {
			long estHere = moveGain.estimateOfEveryQueued(here, pendingHere);
			if (estHere != MoveGain.NOT_SHARED) {
				return bestLateMove(iq, estHere);
			}
		}
		Move best = null;
		long bestGain = 0;
		for (RequestTicket q : iq.byArrival) {
			if (!book.movable(q)) {
				continue;
			}
			long slo = book.sloOf(q.request());
			long estHere = moveGain.estimateWhereQueued(q, here, pendingHere);
			// Whether it is late first: that needs no look for a target.
			if (lateOnly && !book.late(q, estHere, slo)) {
				continue;
			}
			if (!check()) {
				break;
			}
			InstanceState there = migrationTarget(q, here);
			if (there == null) {
				if (noMoveTarget) {
					// No instance takes any request: nor did one take those before it.
					return null;
				}
				continue;
			}
			long gain = moveGain.gainOf(book, q, here, estHere, there, lateOnly);
			if (MoveGain.beatsMargin(settings, gain, slo) && gain > bestGain) {
				best = new Move(q, there, moveGain.lastEstimateThere());
				bestGain = gain;
			}
		}
		return best;
	}

	/**
	 * {@link #bestMove} when only late requests move, looking at the late requests alone.
	 * Every request queued on {@code iq}'s instance has the same estimate there,
	 * {@code estHere} ({@link MoveGain#estimateOfEveryQueued}). A request is late when
	 * its arrival plus its SLO is before now plus that estimate: the late ones are the
	 * first of {@link InstanceQueue#byLateness}, and the scan stops at the first that is
	 * not. Among equal gains the earliest in arrival order wins, as in
	 * {@link #bestMove}'s scan in arrival order, so the move is the same.
	 */
	private @Nullable Move bestLateMove(InstanceQueue iq, long estHere) {
		InstanceState here = iq.state;
		// The call's own: one small object, next to the iterators its scans make anyway.
		LateBest best = new LateBest();
		boolean found;
		if (!book.shortcuts.skipTargetsWithoutRoom() || pool.rings() != book.seenRings) {
			found = scanLate(iq.byLateness, here, estHere, null, best);
		}
		else {
			// By other candidate: a group whose candidate had no room for its late
			// requests is passed over as far as that still holds.
			found = scanGroup(iq.withoutOther, here, estHere, best);
			for (Iterator<InstanceQueue.MoveGroup> it = iq.byOther.values().iterator(); found && it.hasNext();) {
				found = scanGroup(it.next(), here, estHere, best);
			}
		}
		return found || outOfChecks ? best.move : null;
	}

	/**
	 * Takes one of the pass's checks for weighing a request; false, and the pass out of
	 * checks, when none is left.
	 */
	private boolean check() {
		if (checksLeft <= 0) {
			outOfChecks = true;
			return false;
		}
		checksLeft--;
		return true;
	}

	/** The best move one {@link #bestLateMove}'s scans found so far, and its gain. */
	private static final class LateBest {

		@Nullable Move move;

		long gain;

	}

	/**
	 * Looks at the late requests of {@code g} for {@link #bestLateMove}. When the group's
	 * candidate takes moves, the requests up to
	 * {@link InstanceQueue.MoveGroup#lookedUpTo} are passed over while that instance's
	 * {@link InstanceState#roomChanges()} stand where they did, but for those that found
	 * room there ({@link InstanceQueue.MoveGroup#withRoom}): each of the others found it
	 * without prefill room for it then, or may not move, and would now (its look for a
	 * target stops at its other candidate, which takes moves; the room test reads only
	 * what those changes count, and the engine-queue hold, off when it was learned, stays
	 * off as the snapshot ages).
	 * @return false when a request found no target at all ({@link #noMoveTarget}) or the
	 * pass ran out of checks ({@link #outOfChecks})
	 */
	private boolean scanGroup(InstanceQueue.MoveGroup g, InstanceState here, long estHere, LateBest best) {
		// Most groups of a long queue have no late request: no need to ask about their
		// candidate.
		RequestTicket first = g.first;
		if (first == null || !lateHere(first, estHere)) {
			return true;
		}
		InstanceState other = g.other;
		// Its requests do not avoid it, so what it answers for the first it answers for
		// each.
		boolean direct = other != null && takesMoveOff(first, other, here);
		if (!direct) {
			g.forget();
			return scanLate(g.byLateness, here, estHere, null, best);
		}
		long changes = other.roomChanges();
		if (g.noRoomAt == changes) {
			for (Iterator<RequestTicket> it = g.withRoom.iterator(); it.hasNext();) {
				RequestTicket q = it.next();
				if (q.moveGroup != g) {
					it.remove();
				}
				else if (lateHere(q, estHere) && weigh(q, here, estHere, best) == STOP) {
					return false;
				}
			}
			return scanLate(g.lookedUpTo == null ? g.byLateness : g.byLateness.tailSet(g.lookedUpTo, false), here,
					estHere, g, best);
		}
		g.forget();
		// The hold ends with the snapshot's age alone: nothing is learned while it holds.
		if (gate.holding(other)) {
			return scanLate(g.byLateness, here, estHere, null, best);
		}
		g.noRoomAt = changes;
		return scanLate(g.byLateness, here, estHere, g, best);
	}

	/**
	 * Weighs the late requests of {@code requests} (in lateness order) for
	 * {@link #bestLateMove}, keeping the best move in {@code best}. With a
	 * {@code learning} group, each request looked at becomes its
	 * {@link InstanceQueue.MoveGroup#lookedUpTo} (and one that found room joins its
	 * {@link InstanceQueue.MoveGroup#withRoom}).
	 * @return false when a request found no target at all ({@link #noMoveTarget}) or the
	 * pass ran out of checks ({@link #outOfChecks})
	 */
	private boolean scanLate(Iterable<RequestTicket> requests, InstanceState here, long estHere,
			InstanceQueue.@Nullable MoveGroup learning, LateBest best) {
		for (RequestTicket q : requests) {
			if (!lateHere(q, estHere)) {
				break;
			}
			int outcome = weigh(q, here, estHere, best);
			if (outcome == STOP) {
				return false;
			}
			if (learning != null) {
				learning.lookedUpTo = q;
				if (outcome == ROOM) {
					learning.withRoom.add(q);
				}
			}
		}
		return true;
	}

	// What weigh found for a request.
	private static final int STOP = 0;

	private static final int NO_ROOM = 1;

	private static final int ROOM = 2;

	/**
	 * Weighs moving late request {@code q} off {@code here}, keeping it in {@code best}
	 * when it is the best so far (the largest gain beyond the margin, the earliest
	 * arrival among equals, as {@link #bestMove}'s scan in arrival order).
	 * @return {@link #STOP} when it found no target at all ({@link #noMoveTarget}) or the
	 * pass has no check left for it ({@link #outOfChecks}), {@link #ROOM} when its target
	 * had room for it, else {@link #NO_ROOM} (no target, no room there, or it may not
	 * move)
	 */
	private int weigh(RequestTicket q, InstanceState here, long estHere, LateBest best) {
		if (!book.movable(q)) {
			return NO_ROOM;
		}
		if (!check()) {
			return STOP;
		}
		InstanceState there = migrationTarget(q, here);
		if (there == null) {
			return noMoveTarget ? STOP : NO_ROOM;
		}
		long gain = moveGain.gainOf(book, q, here, estHere, there, true);
		if (gain == MoveGain.NO_ROOM) {
			return NO_ROOM;
		}
		if (MoveGain.beatsMargin(settings, gain, book.sloOf(q.request())) && (gain > best.gain || (gain == best.gain
				&& best.move != null && InstanceQueue.ARRIVAL.compare(q, best.move.request()) < 0))) {
			best.move = new Move(q, there, moveGain.lastEstimateThere());
			best.gain = gain;
		}
		return ROOM;
	}

	/** Whether {@code q} is late where it waits, its estimate there {@code estHere}. */
	private boolean lateHere(RequestTicket q, long estHere) {
		return book.late(q, estHere, book.sloOf(q.request()));
	}

	/**
	 * Its other candidate when that accepts work, is not hot and has room; else the first
	 * such instance clockwise on the second ring.
	 */
	private @Nullable InstanceState migrationTarget(RequestTicket q, InstanceState here) {
		// One reading of the rings: another thread may change the membership meanwhile.
		DualHashRing rings = pool.rings();
		if (rings.isEmpty()) {
			return null;
		}
		InstanceState other = book.otherCandidate(q, here, rings);
		if (other != null && canTakeMove(q, other)) {
			return other;
		}
		if (q.moveWalkStart < 0) {
			q.moveWalkStart = rings.walkStart(1, q.key());
		}
		List<InstanceState> young = youngTargets();
		String neighbour = young != null ? firstOnWalk(q, here, rings, young)
				: rings.walkFrom(1, q.moveWalkStart, id -> {
					InstanceState t = pool.instance(id);
					return t != null && t != here && canTakeMove(q, t);
				});
		if (neighbour == null && q.avoid.isEmpty()) {
			// The walk asked every member, and none but a hotspot (here) was left out
			// for this request's sake alone: no member takes any request off any hotspot
			// until something moves.
			noMoveTarget = true;
		}
		return neighbour == null ? null : pool.instance(neighbour);
	}

	/**
	 * The walk of {@link #migrationTarget} with its answer found among {@code young}
	 * alone (every other member is a hotspot, {@link QueueBook#youngMembers}): of those
	 * that take {@code q}, the one the walk meets first. Every member has its queue, so
	 * asking one whether it takes the move changes nothing, and the order of the asking
	 * does not matter.
	 */
	private @Nullable String firstOnWalk(RequestTicket q, InstanceState here, DualHashRing rings,
			List<InstanceState> young) {
		String first = null;
		int firstSteps = Integer.MAX_VALUE;
		for (InstanceState t : young) {
			if (!takesMoveOff(q, t, here)) {
				continue;
			}
			int steps = rings.stepsTo(1, q.moveWalkStart, t.id());
			if (steps < firstSteps) {
				first = t.id();
				firstSteps = steps;
			}
		}
		return first;
	}

	/**
	 * The members a move's target is looked for among instead of by the walk of the
	 * second ring: those not hotspots by their wait ({@link QueueBook#youngMembers}),
	 * when they are few of many ({@link QueueShortcuts#targetsAmongYoung(int, int)});
	 * else {@code null}.
	 */
	private @Nullable List<InstanceState> youngTargets() {
		List<InstanceState> young = book.shortcuts.targetsAmongYoung() ? book.youngMembers(YOUNG_TARGETS) : null;
		return young != null && book.shortcuts.targetsAmongYoung(young.size(), pool.size()) ? young : null;
	}

	/**
	 * Whether no hotspot can give any request this pass: no member both
	 * {@link #takesMoves takes moves} and, when only late requests move, has prefill room
	 * for one ({@link EngineQueueGate#full}). Then every look for a move finds none and
	 * changes nothing (every member has its queue), so the pass is skipped. Answered from
	 * the members that are not hotspots by their wait, when few of many are; else false.
	 */
	private boolean noTargetAnywhere() {
		List<InstanceState> young = youngTargets();
		// With many young members some takes moves: no need to ask.
		if (young == null) {
			return false;
		}
		for (InstanceState t : young) {
			if (pool.instance(t.id()) == t && takesMoves(book.queueOf(t))
					&& !(settings.moveLateOnly() && gate.full(t))) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Whether {@code t}, an instance known from before the call, may take {@code q} off
	 * hotspot {@code here}: it is not {@code here}, is still the member of its id and
	 * {@link #canTakeMove can take the move}.
	 */
	private boolean takesMoveOff(RequestTicket q, InstanceState t, InstanceState here) {
		return t != here && pool.instance(t.id()) == t && canTakeMove(q, t);
	}

	/**
	 * Whether {@code s} may take {@code q} off a hotspot: it is not an instance {@code q}
	 * must avoid and it {@link #takesMoves takes moves} (so {@link Relocator#mayTake}
	 * holds).
	 */
	private boolean canTakeMove(RequestTicket q, InstanceState s) {
		return !q.avoid.contains(s.id()) && takesMovesInLook(s);
	}

	/**
	 * {@link #takesMoves} within one look for a move ({@link #bestMove}), each instance
	 * asked once: nothing a look reads changes while it lasts but the clock (a look takes
	 * microseconds), and past capacity the walks of the second ring for many late
	 * requests meet the same hotspots again.
	 */
	private boolean takesMovesInLook(InstanceState s) {
		InstanceQueue q = book.queueOf(s);
		if (q.takesMovesLook != look) {
			q.takesMoves = takesMoves(q);
			q.takesMovesLook = look;
		}
		return q.takesMoves;
	}

	/**
	 * Whether the instance of queue {@code q} takes a move off a hotspot of a request
	 * that avoids nothing: it accepts work, is not a hotspot itself and {@code q} has
	 * room. Nothing changes while a move is looked for, so asking each target when it
	 * comes up answers as a set of the hotspots made beforehand would, without a look at
	 * every instance.
	 */
	private boolean takesMoves(InstanceQueue q) {
		InstanceState s = q.state;
		return s.acceptsNewWork() && !pool.isHotspot(s) && q.byArrival.size() < settings.maxQueuedPerInstance();
	}

}

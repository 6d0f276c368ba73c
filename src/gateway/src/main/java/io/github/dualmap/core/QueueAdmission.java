package io.github.dualmap.core;

import java.util.Comparator;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Admission to {@link DispatchQueues}: where a placed request queues (its other candidate
 * when its instance will not take it or its queue is full), the bounds on queued requests
 * per instance and per pool, and whom a full queue turns away: the arrival with 429, or a
 * queued request that yields to it (a lower priority band, a tenant holding more of the
 * queues for its weight, a looser SLO). Also how long a request may be passed over for
 * longer cached prefixes (its aging bound).
 */
final class QueueAdmission {

	// The first to shed under overload is the last in this order: loosest SLO, newest.
	private static final Comparator<RequestTicket> SHED_LAST = Comparator
		.comparingLong((RequestTicket q) -> q.request().sloTtftNanos())
		.thenComparingLong(RequestTicket::sequence);

	private final QueueBook book;

	private final InstancePool pool;

	private final QueueSettings settings;

	private final FairShares fair;

	private final QueueStatistics stats;

	private final Relocator relocator;

	private final ReleasePass releasePass;

	QueueAdmission(QueueBook book, Relocator relocator, ReleasePass releasePass) {
		this.book = book;
		this.relocator = relocator;
		this.releasePass = releasePass;
		this.pool = book.pool;
		this.settings = book.settings;
		this.fair = book.fair;
		this.stats = book.stats;
	}

	/**
	 * Queues {@code q}, placed on {@code chosen}, there or on its best alternative (or
	 * sends it there at once when nothing waits in the pool and it has room:
	 * {@link ReleasePass#releaseAtOnce}), or turns it (or a queued request that yields to
	 * it) away with 429 when the queues are full.
	 */
	void admit(RequestTicket q, InstanceState chosen, List<Runnable> out) {
		InstanceState target = chosen;
		if (!chosen.acceptsNewWork() || q.avoid.contains(chosen.id())) {
			// Draining or unhealthy since the policy looked, or one the request must
			// avoid: take its best alternative.
			InstanceState alt = relocator.place(q, chosen);
			if (alt != null) {
				target = alt;
				q.decision = relocator.decisionOn(q, alt, Reason.FALLBACK);
			}
		}
		if (book.queuedTotal >= settings.maxQueuedPerPool()) {
			String full = "pool '" + pool.name() + "' has " + book.queuedTotal + " queued requests, the limit";
			long retry = book.retryAfter(pool.estimator().estimate((long) pool.meanPendingTokens(), 0));
			if (!shedLooser(q, null, full, retry, out)) {
				book.reject(q, Rejection.TOO_MANY_REQUESTS, full, null, retry, out);
				return;
			}
		}
		if (book.queueOf(target).byArrival.size() >= settings.maxQueuedPerInstance()) {
			// A pinned request has nowhere else to go.
			InstanceState alt = q.pinned ? null : otherWithRoom(q, target);
			if (alt != null) {
				target = alt;
				q.decision = relocator.decisionOn(q, alt, Reason.FALLBACK);
			}
			else {
				String full = "its instance in pool '" + pool.name() + "' has " + settings.maxQueuedPerInstance()
						+ " queued requests, the limit";
				long retry = book.retryAfter(pool.estimateTtft(target, 0, 0));
				if (!shedLooser(q, target, full, retry, out)) {
					book.reject(q, Rejection.TOO_MANY_REQUESTS, full, target.id(), retry, out);
					return;
				}
			}
		}
		if (!releasePass.releaseAtOnce(q, target, out)) {
			book.enqueue(q, target);
		}
	}

	/**
	 * Makes room for {@code q} in full queues by turning away a queued request that
	 * yields to it: with fair shares, one in a lower priority band, or of another tenant
	 * of its band holding more of the queues for its weight than {@code q}'s tenant would
	 * with {@code q}; else, in its band, one with a looser SLO than {@code q}'s. The
	 * lowest band goes first, then the tenant with the largest backlog for its weight,
	 * then the loosest SLO, then the newest: under overload an interactive request
	 * displaces a batch one, and a quiet tenant's request one of a tenant that fills the
	 * queues, instead of being refused behind them. With one tenant and one SLO for all
	 * nothing is ever shed.
	 * @param within the full instance queue to shed from; {@code null}: any queue of the
	 * pool
	 * @return whether a request was shed
	 */
	private boolean shedLooser(RequestTicket q, @Nullable InstanceState within, String full, long retryAfterSeconds,
			List<Runnable> out) {
		boolean bySlo = settings.sloAware() && !book.queuedSlos.isEmpty()
				&& book.queuedSlos.lastKey() > q.request().sloTtftNanos();
		if (!bySlo && !fair.mayDisplace(q)) {
			return false;
		}
		// The arrival's band and backlog, the same against every queued request.
		int band = fair.enabled() ? fair.priority(q) : 0;
		double backlog = fair.enabled() ? fair.backlog(q) : 0;
		RequestTicket victim = null;
		for (InstanceQueue iq : within == null ? book.nonEmpty : List.of(book.queueOf(within))) {
			for (RequestTicket c : iq.byArrival) {
				if (yields(c, q, band, backlog, bySlo) && (victim == null || shedsBefore(c, victim))) {
					victim = c;
				}
			}
		}
		if (victim == null) {
			return false;
		}
		String why = fair.enabled() && fair.priority(victim) < fair.priority(q)
				? "shed for a request with a higher priority"
				: bySlo && victim.request().sloTtftNanos() > q.request().sloTtftNanos()
						? "shed for a request with a tighter TTFT SLO"
						: "shed for a request of a tenant holding less of the queues for its weight";
		book.dequeue(victim);
		stats.recordShed();
		book.reject(victim, Rejection.TOO_MANY_REQUESTS, full + "; " + why, within == null ? null : within.id(),
				retryAfterSeconds, out);
		return true;
	}

	/**
	 * Whether queued {@code c} may be shed for the arrival {@code q}, whose band and
	 * backlog (with fair shares) are given.
	 */
	private boolean yields(RequestTicket c, RequestTicket q, int band, double backlog, boolean bySlo) {
		if (fair.enabled()) {
			int pc = fair.priority(c);
			if (pc != band) {
				return pc < band;
			}
		}
		if (bySlo && c.request().sloTtftNanos() > q.request().sloTtftNanos()) {
			return true;
		}
		return fair.enabled() && !fair.sameTenant(q, c) && fair.backlog(c) > backlog;
	}

	/** Whether {@code c} is shed before {@code victim}. */
	private boolean shedsBefore(RequestTicket c, RequestTicket victim) {
		if (fair.enabled()) {
			int pc = fair.priority(c);
			int pv = fair.priority(victim);
			if (pc != pv) {
				return pc < pv;
			}
			double bc = fair.backlog(c);
			double bv = fair.backlog(victim);
			if (bc != bv) {
				return bc > bv;
			}
		}
		return SHED_LAST.compare(c, victim) > 0;
	}

	/**
	 * The other candidate of {@code q} (not {@code full}) that may take it and whose
	 * queue has room; {@code null} when none.
	 */
	private @Nullable InstanceState otherWithRoom(RequestTicket q, InstanceState full) {
		DualHashRing rings = pool.rings();
		if (rings.isEmpty()) {
			return null;
		}
		Candidates c = QueueBook.candidatesOf(q, rings);
		for (String id : List.of(c.first(), c.second())) {
			InstanceState s = pool.instance(id);
			if (s != null && s != full && Relocator.mayTake(q, s)
					&& book.queueOf(s).byArrival.size() < settings.maxQueuedPerInstance()) {
				return s;
			}
		}
		return null;
	}

	/**
	 * How long a request may be passed over for requests with longer cached prefixes: the
	 * aging bound for a request with the pool's default SLO, in proportion for others (a
	 * 2 s request ages in 0.8 s where the bound is 2 s at a 5 s default, a 60 s batch
	 * request in 24 s), so a tight class is not served after a loose one merely because
	 * the loose one came first.
	 */
	long agingOf(RoutingRequest request) {
		long aging = settings.agingNanos();
		long defaultSlo = pool.settings().defaultSloNanos();
		if (!settings.sloAware() || request.sloTtftNanos() == defaultSlo) {
			return aging;
		}
		double scaled = aging * ((double) request.sloTtftNanos() / defaultSlo);
		return (long) Math.max(1, Math.min(scaled, Long.MAX_VALUE / 4.0));
	}

}

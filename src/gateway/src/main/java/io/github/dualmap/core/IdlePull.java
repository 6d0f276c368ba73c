package io.github.dualmap.core;

import java.util.List;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

/**
 * Work stealing between a request's two candidates in {@link DispatchQueues}: an instance
 * with nothing queued and prefill capacity left takes over queued requests whose other
 * candidate it is, when the {@link MoveGain net gain} beats the migration margin
 * ({@link QueueSettings#idlePull()}). It reads the queues' index of requests by their
 * other candidate, so an idle instance finds what it may pull without a scan.
 */
final class IdlePull {

	/** Requests one idle instance looks at per pull, oldest first. */
	static final int PULL_SCAN = 32;

	private final QueueBook book;

	private final InstancePool pool;

	private final QueueSettings settings;

	private final QueueStatistics stats;

	private final ReleasePass releasePass;

	private final MoveGain moveGain;

	private final Relocator relocator;

	// Counts the idle pull's looks at unchanged queues: an estimate an InstanceQueue
	// holds from another count is stale (estimateHere).
	private long pullEstimates;

	// Requests the current pass may still look at (QueueSettings.pullChecksPerPass).
	private int checksLeft;

	// The passes over the idle instances' entries: one that runs out of checks stops at
	// its entry and the next starts after it.
	private final ResumingPass<Pullable> pass;

	IdlePull(QueueBook book, Relocator relocator, ReleasePass releasePass, MoveGain moveGain) {
		this.book = book;
		this.relocator = relocator;
		this.pool = book.pool;
		this.settings = book.settings;
		this.stats = book.stats;
		this.releasePass = releasePass;
		this.moveGain = moveGain;
		this.pass = new ResumingPass<>(book.pullers, QueueBook.PULLABLE_ORDINAL);
	}

	/**
	 * Work stealing between the two candidates: every instance that accepts work and
	 * still has prefill capacity after the release pass (so its own queue is empty) takes
	 * over queued requests whose other candidate it is, best gain first, while the gain
	 * beats the migration margin. At most {@link QueueSettings#maxMovesPerTrigger()}
	 * pulls per call, each looking at no more than {@value #PULL_SCAN} requests; no more
	 * than {@link QueueSettings#maxPullChecksPerTrigger()} requests looked at per call
	 * (when set), and the next call starts after the idle instance where this one ran out
	 * and wraps around.
	 */
	void pullToIdle(List<Runnable> out) {
		if (pool.size() < 2 || book.byAlternative.isEmpty()) {
			return;
		}
		int budget = settings.maxMovesPerTrigger();
		pullEstimates++;
		checksLeft = settings.pullChecksPerPass();
		// The entries of byAlternative there were when the pass began, in its order, that
		// have requests while their instance has none when the pass reaches them: the
		// others would pull nothing.
		for (Pullable p = pass.begin(book.pullableOrdinals); p != null && budget > 0; p = pass.next(p)) {
			InstanceState idle = p.idle;
			if (pool.instance(idle.id()) != idle || !idle.acceptsNewWork()) {
				continue;
			}
			while (budget > 0 && !p.requests.isEmpty() && book.queueOf(idle).byArrival.isEmpty()) {
				Move m = bestPull(idle, p.requests);
				if (m == null) {
					break;
				}
				relocator.move(m.request(), idle, Reason.IDLE_PULL, m.estimateThereNanos());
				m.request().migrations++;
				stats.recordPull();
				budget--;
				releasePass.pump(book.queueOf(idle), out);
				// The pull and the releases after it changed what the estimates read.
				pullEstimates++;
			}
			if (checksLeft <= 0) {
				pass.stopAt(p);
				break;
			}
		}
		book.dropEmptyPullables();
	}

	/**
	 * Of the first {@value #PULL_SCAN} requests {@code idle} may pull, the one with the
	 * best {@link MoveGain#netGain net gain} from moving (its estimate where it waits
	 * minus its estimate on {@code idle} with the prefix {@code idle} has cached for it,
	 * less the cached prefix it gives up), when that beats the migration margin and
	 * {@code idle} has prefill capacity for it. It looks at no more requests than the
	 * pass has checks left, and takes the best among those it looked at.
	 */
	private @Nullable Move bestPull(InstanceState idle, TreeSet<RequestTicket> pullable) {
		int inPrefill = idle.sharedPrefillRequests();
		if (inPrefill >= settings.maxPrefillRequests() || idle.sharedPrefillTokens() >= settings.maxPrefillTokens()) {
			return null;
		}
		Move best = null;
		long bestGain = 0;
		int scanned = 0;
		for (RequestTicket q : pullable) {
			if (scanned++ >= PULL_SCAN || checksLeft <= 0) {
				break;
			}
			// Each request looked at is a check: past capacity most are not late, and a
			// pass meets many idle instances.
			checksLeft--;
			InstanceQueue from = q.queue;
			if (from == null || !book.movable(q)) {
				continue;
			}
			long estHere = estimateHere(q, from);
			long slo = book.sloOf(q.request());
			// Whether it is late first: that needs no look at the idle instance's cache.
			if (settings.moveLateOnly() && !book.late(q, estHere, slo)) {
				continue;
			}
			long gain = moveGain.gainOf(book, q, from.state, estHere, idle, true);
			if (MoveGain.beatsMargin(settings, gain, slo) && gain > bestGain) {
				best = new Move(q, idle, moveGain.lastEstimateThere());
				bestGain = gain;
			}
		}
		return best;
	}

	/**
	 * {@code q}'s estimate where it waits, on {@code from}'s instance. With
	 * {@link QueueShortcuts#estimateOncePerQueue()} the estimate every request queued
	 * there shares ({@link MoveGain#estimateOfEveryQueued}) is taken once per queue in a
	 * pass until a pull: nothing it reads changes between pulls. In a long queue's pass
	 * many idle instances look at requests of the same few queues.
	 */
	private long estimateHere(RequestTicket q, InstanceQueue from) {
		if (book.shortcuts.estimateOncePerQueue()) {
			if (from.pullEstimatesAt != pullEstimates) {
				from.pullEstimatesAt = pullEstimates;
				from.pullEstimate = moveGain.estimateOfEveryQueued(from.state, pool.pendingWork(from.state));
			}
			if (from.pullEstimate != MoveGain.NOT_SHARED) {
				return from.pullEstimate;
			}
		}
		return moveGain.estimateWhereQueued(q, from.state, pool.pendingWork(from.state));
	}

}

package io.github.dualmap.core;

import java.util.List;

/**
 * What happens to a request at its wait bound in {@link DispatchQueues}: it is sent
 * anyway ({@link QueueSettings.Expiry#DISPATCH}), rescued to another instance that can
 * still make its SLO ({@link QueueSettings#rescue()}), or rejected with 503. The release
 * pass gives a hopeless request the same last chance.
 */
final class Rescue {

	private final QueueBook book;

	private final InstancePool pool;

	private final QueueSettings settings;

	private final QueueStatistics stats;

	private final ReleasePass releasePass;

	Rescue(QueueBook book, ReleasePass releasePass) {
		this.book = book;
		this.pool = book.pool;
		this.settings = book.settings;
		this.stats = book.stats;
		this.releasePass = releasePass;
	}

	/**
	 * {@code q}, queued on {@code iq}, reached its wait bound: sent there anyway with
	 * {@link QueueSettings.Expiry#DISPATCH}, else rescued or rejected with 503.
	 */
	void expire(RequestTicket q, InstanceQueue iq, List<Runnable> out) {
		book.dequeue(q);
		if (settings.expiry() == QueueSettings.Expiry.DISPATCH) {
			PrefillWork inPrefill = pool.prefillWork(iq.state);
			PrefillWork sent = pool.pendingWork(iq.state)
				.minus(new PrefillWork(iq.state.queuedTokens(), iq.state.queuedPairs()));
			releasePass.release(q, iq.state, sent.tokens() > inPrefill.tokens() ? sent : inPrefill, out);
		}
		else if (!tryRescue(q, iq, out)) {
			book.reject(q, Rejection.SERVICE_UNAVAILABLE,
					"request waited " + ((q.expiresAtNanos - q.submittedAtNanos()) / 1_000_000)
							+ " ms for its instance in pool '" + pool.name() + "'",
					iq.state.id(), book.retryAfter(pool.estimateTtft(iq.state, 0, 0)), out);
		}
	}

	/**
	 * The last chance of a request at its wait bound: the instance, other than the one it
	 * waited for, with the lowest TTFT estimate among those that accept work and have
	 * prefill capacity for it now. It goes there ahead of that instance's own queue
	 * (whose head did not fit the room left, or it would have been released) when the
	 * estimate fits what is left of its SLO. Failing that, with
	 * {@link QueueSettings#rescueToQueue()}, it joins the queue of the instance with the
	 * lowest estimate of all when that estimate fits, until the last moment its prefill
	 * could start there in time (a request is rescued once). Below capacity this saves
	 * most of what the wait bound would turn away; at capacity no estimate fits, and the
	 * request is rejected. Nothing of this without {@link QueueSettings#rescue()}.
	 * Neither goes to an instance whose engine's KV cache is fuller than
	 * {@link QueueSettings#rescueMaxKvUsage()} ({@link InstanceState#kvUsedAbove}) when
	 * that instance holds less of the prompt than {@code from} (the prompt would be
	 * computed and held a second time in a full cache) or when another sender's requests
	 * run there and no peer publishes its load ({@link InstanceState#unseenSendersAt}):
	 * this gateway's room there is not the engine's, the other senders' queues for it
	 * wait out of its sight, and a rescue that goes ahead of them makes theirs expire and
	 * be rescued in turn, until every queue waits at its bound and the prompts run on
	 * more instances than their candidates, held there again in caches that are full.
	 * @return whether the request was sent or queued again
	 */
	boolean tryRescue(RequestTicket q, InstanceQueue from, List<Runnable> out) {
		// A pinned request belongs where its stored response is; a final placement is no
		// migration, so the migration bound does not apply.
		if (!settings.rescue() || q.pinned || q.rescuedToQueue) {
			return false;
		}
		long nowNanos = pool.now();
		long left = book.sloOf(q.request()) - (nowNanos - q.submittedAtNanos());
		InstanceState now = null;
		long nowEstimate = Long.MAX_VALUE;
		int nowCached = 0;
		InstanceState queued = null;
		long queuedEstimate = Long.MAX_VALUE;
		int queuedCached = 0;
		long staleAfter = pool.settings().staleAfterNanos();
		// Read once, where the KV limit first applies to an instance without unseen
		// senders.
		int cachedWhereWaited = -1;
		for (InstanceState s : pool.instances()) {
			if (s == from.state || !Relocator.mayTake(q, s)) {
				continue;
			}
			boolean kvFull = s.kvUsedAbove(settings.rescueMaxKvUsage(), nowNanos, staleAfter);
			if (kvFull && s.unseenSendersAt(nowNanos, staleAfter)) {
				continue;
			}
			int cached = book.cachedTokens(q, s);
			if (kvFull) {
				if (cachedWhereWaited < 0) {
					cachedWhereWaited = book.cachedTokens(q, from.state);
				}
				if (cached < cachedWhereWaited) {
					continue;
				}
			}
			int uncached = Math.max(0, q.request().promptTokens() - cached);
			long estimate = pool.estimateTtft(s, cached, uncached);
			if (estimate < nowEstimate && book.hasRoom(s, uncached)) {
				now = s;
				nowEstimate = estimate;
				nowCached = cached;
			}
			if (estimate < queuedEstimate && book.queueOf(s).byArrival.size() < settings.maxQueuedPerInstance()) {
				queued = s;
				queuedEstimate = estimate;
				queuedCached = cached;
			}
		}
		if (now != null && nowEstimate <= left) {
			q.decision = Relocator.decisionOn(q, now, Reason.RESCUE, nowCached, nowEstimate);
			stats.recordRescue(false);
			releasePass.release(q, now, pool.prefillWork(now), out);
			return true;
		}
		if (!settings.rescueToQueue() || queued == null || queuedEstimate > left) {
			return false;
		}
		int uncachedThere = Math.max(0, q.request().promptTokens() - queuedCached);
		long lastStart = q.submittedAtNanos() + book.sloOf(q.request())
				- pool.estimateTtft(queued, PrefillWork.NONE, queuedCached, uncachedThere);
		if (lastStart <= pool.now()) {
			return false;
		}
		q.decision = Relocator.decisionOn(q, queued, Reason.RESCUE, queuedCached, queuedEstimate);
		q.rescuedToQueue = true;
		q.expiresAtNanos = lastStart;
		stats.recordRescue(true);
		book.enqueue(q, queued);
		releasePass.pump(book.queueOf(queued), out);
		return true;
	}

}

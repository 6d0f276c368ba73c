package io.github.dualmap.core;

/**
 * What moving a queued request to another instance gains, the one rule the hotspot moves
 * ({@link Rebalancer}) and the idle pull ({@link IdlePull}) both weigh a move by: its
 * estimate where it waits against its estimate there, less the cached prefix it gives up.
 * A move is made only when this beats the migration margin.
 */
final class MoveGain {

	private final InstancePool pool;

	MoveGain(InstancePool pool) {
		this.pool = pool;
	}

	/**
	 * What moving {@code q} gains: its own estimate improvement, less the prefill time of
	 * the cached prefix it gives up ({@code uncachedThere} beyond its uncached tokens
	 * where it waits). That lost hit is work the pool did not have to do, and it delays
	 * every request behind it on the target; without charging it, moves of well-cached
	 * requests win on their own estimate and cost capacity in hit rate. So requests with
	 * little cached prefix where they wait are the ones that move.
	 */
	long netGain(RequestTicket q, long estHere, long estThere, InstanceState there, int cachedThere) {
		int uncachedThere = Math.max(0, q.request().promptTokens() - cachedThere);
		long lostHit = uncachedThere <= q.uncachedTokens ? 0
				: Math.max(0, pool.prefillNanos(there, cachedThere, uncachedThere)
						- pool.prefillNanos(there, q.cachedTokens, q.uncachedTokens));
		return estHere - estThere - lostHit;
	}

	/**
	 * {@code q}'s estimate on {@code here}, where it is queued: behind the work pending
	 * there ({@code pendingHere}) without its own.
	 */
	long estimateWhereQueued(RequestTicket q, InstanceState here, PrefillWork pendingHere) {
		PrefillWork ahead = pendingHere.minus(PrefillWork.of(q.cachedTokens, q.uncachedTokens));
		return pool.estimateTtft(here, ahead, q.cachedTokens, q.uncachedTokens);
	}

}

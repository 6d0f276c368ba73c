package io.github.dualmap.core;

/**
 * What moving a queued request to another instance gains, the one rule the hotspot moves
 * ({@link Rebalancer}) and the idle pull ({@link IdlePull}) both weigh a move by: its
 * estimate where it waits against its estimate there, less the cached prefix it gives up.
 * A move is made only when this {@link #beatsMargin beats the migration margin}.
 */
final class MoveGain {

	/** What {@link #gainOf} answers for a target without room: no move beats it. */
	static final long NO_ROOM = Long.MIN_VALUE;

	/**
	 * What {@link #estimateOfEveryQueued} answers when the requests queued on an instance
	 * may have different estimates there.
	 */
	static final long NOT_SHARED = Long.MIN_VALUE;

	// Below 2^53 a long is a double exactly, so the model's sums of the work ahead and a
	// request's own work come to the pending work's, whatever the split.
	private static final long EXACT = 1L << 53;

	private final InstancePool pool;

	// The estimate at the target of the last gainOf that found room: a move's estimate
	// there, without a second look.
	private long lastEstimateThere;

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

	/**
	 * The {@link #estimateWhereQueued estimate} every request queued on {@code here},
	 * behind {@code pendingHere}, has there, or {@link #NOT_SHARED}. It takes each
	 * request's own work off the pending work and the model adds it back; while the
	 * pending tokens and pairs are below 2^53 the linear and attention models add the
	 * parts without rounding, so {@code ahead + own} is the pending work exactly and the
	 * estimate is the model's for the pending work and no request of its own.
	 */
	long estimateOfEveryQueued(InstanceState here, PrefillWork pendingHere) {
		return pendingHere.tokens() < EXACT && pendingHere.pairs() < EXACT ? pool.estimateTtft(here, pendingHere, 0, 0)
				: NOT_SHARED;
	}

	/**
	 * The {@link #netGain net gain} of moving {@code q} from {@code from}, where its
	 * estimate is {@code estHere}, to {@code there}; {@link #NO_ROOM} when
	 * {@code needRoom} and {@code there} has no prefill room for it now
	 * ({@link QueueBook#hasRoom}). Its estimate there is then
	 * {@link #lastEstimateThere()}. Guarded by the queues' lock, as every caller is.
	 */
	long gainOf(QueueBook book, RequestTicket q, InstanceState from, long estHere, InstanceState there,
			boolean needRoom) {
		// A full target has room for no request: no need for its cache.
		if (needRoom && book.gate.full(there)) {
			return NO_ROOM;
		}
		int cachedThere = book.cachedTokens(q, there);
		int uncachedThere = Math.max(0, q.request().promptTokens() - cachedThere);
		if (needRoom && !book.hasRoom(there, uncachedThere)) {
			return NO_ROOM;
		}
		lastEstimateThere = pool.estimateTtft(there, cachedThere, uncachedThere);
		return netGain(q, estHere, pool.warmthScaled(there, from, lastEstimateThere), there, cachedThere);
	}

	/**
	 * Whether a move that gains {@code gain} for a request with SLO {@code slo} is worth
	 * making: it beats the {@link QueueSettings#migrationMargin() migration margin}'s
	 * share of the SLO.
	 */
	static boolean beatsMargin(QueueSettings settings, long gain, long slo) {
		return gain > settings.migrationMargin() * slo;
	}

	/** The estimate at the target of the last {@link #gainOf} that found room. */
	long lastEstimateThere() {
		return lastEstimateThere;
	}

}

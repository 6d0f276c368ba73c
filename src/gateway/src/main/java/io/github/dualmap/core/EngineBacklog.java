package io.github.dualmap.core;

/**
 * The prefill one engine has admitted and not yet computed, in uncached tokens, estimated
 * from two of its counters ({@link SchedulerSettings#engineBacklog()}).
 * <p>
 * vLLM counts a request's prompt tokens as prefix-cache queries, and its cached ones as
 * hits, when its scheduler admits the request from the waiting queue
 * ({@code vllm:prefix_cache_queries_total}, {@code vllm:prefix_cache_hits_total}).
 * Between two scrapes, queries minus hits therefore grow by the uncached tokens that
 * every router's requests brought into prefill there. The engine computes them at its
 * prefill rate, so after a scrape the backlog is what the previous one left, drained at
 * that rate over the interval, plus what was admitted since; read between scrapes, it is
 * drained on to the reader's clock. The rate is the instance's fitted cost per uncached
 * token (the TTFT model's {@code a}) or the pool's linear rate when that is lower
 * ({@link InstancePool#backlogNanosPerToken}), so the estimate drains a little faster
 * than an engine that also decodes and attends to long contexts: it errs towards an
 * engine that is free.
 * <p>
 * It sees what no single gateway replica's own accounting does: a long prompt another
 * replica sent, in prefill there for seconds, with nothing waiting behind it yet. A first
 * snapshot, a counter that went backwards (an engine restart) or counters the engine does
 * not expose leave it at 0: unknown is never busy. vLLM counts a request again when its
 * scheduler looks at it again without admitting it (no KV room), so under KV pressure the
 * estimate runs high; the instance is then busy in any case. Thread-safe: updated under
 * its lock by the scraper, read without one.
 */
final class EngineBacklog {

	private record Sample(long tokens, long atNanos) {
	}

	private static final Sample NONE = new Sample(0, 0);

	private volatile Sample sample = NONE;

	// Guarded by this: queries minus hits at the last snapshot, NaN before one.
	private double lastUncached = Double.NaN;

	/**
	 * A snapshot arrived; {@code nanosPerToken} is the engine's prefill cost per uncached
	 * token.
	 */
	synchronized void update(EngineSnapshot snapshot, double nanosPerToken) {
		double queries = snapshot.prefixQueriesTokens();
		double hits = snapshot.prefixHitsTokens();
		if (!(queries >= 0) || !(hits >= 0) || Double.isInfinite(queries) || Double.isInfinite(hits)) {
			clear();
			return;
		}
		double uncached = queries - hits;
		long at = snapshot.sampledAtNanos();
		long tokens = 0;
		if (!Double.isNaN(this.lastUncached) && uncached >= this.lastUncached) {
			double admitted = uncached - this.lastUncached;
			tokens = (long) Math.min(Long.MAX_VALUE / 2.0, tokens(at, nanosPerToken) + admitted);
		}
		this.lastUncached = uncached;
		this.sample = new Sample(tokens, at);
	}

	/** The engine view is unknown (a failed scrape): the next snapshot starts afresh. */
	synchronized void clear() {
		this.lastUncached = Double.NaN;
		this.sample = NONE;
	}

	/**
	 * The backlog the last snapshot left, before any drain: no later reading of
	 * {@link #tokens} exceeds it.
	 */
	long undrainedTokens() {
		return Math.max(0, this.sample.tokens());
	}

	/**
	 * Uncached tokens admitted and not yet computed at {@code nowNanos}, draining at
	 * {@code nanosPerToken}.
	 */
	long tokens(long nowNanos, double nanosPerToken) {
		Sample s = this.sample;
		if (s.tokens() <= 0) {
			return 0;
		}
		long elapsed = Math.max(0, nowNanos - s.atNanos());
		double drained = nanosPerToken > 0 ? elapsed / nanosPerToken : Double.POSITIVE_INFINITY;
		return drained >= s.tokens() ? 0 : s.tokens() - (long) drained;
	}

}

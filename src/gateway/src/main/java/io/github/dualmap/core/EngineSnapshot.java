package io.github.dualmap.core;

/**
 * Engine state scraped from an instance's metrics endpoint. Unknown values are {@code -1}
 * (counts) or {@code NaN} (ratios).
 *
 * @param sampledAtNanos when it was scraped, on the scheduler's clock
 * @param waiting requests waiting in the engine's queue
 * @param running requests running (prefill or decode)
 * @param kvUsage fraction of KV cache blocks in use, 0..1
 * @param prefixQueriesTokens engine counter of prefix-cache queries in tokens (monotonic)
 * @param prefixHitsTokens engine counter of prefix-cache hits in tokens (monotonic)
 * @param kvCapacityTokens KV cache capacity in tokens
 */
public record EngineSnapshot(long sampledAtNanos, int waiting, int running, double kvUsage, double prefixQueriesTokens,
		double prefixHitsTokens, long kvCapacityTokens) {

	/** Whether the engine reported both its running and its waiting requests. */
	public boolean countsRequests() {
		return running >= 0 && waiting >= 0;
	}

	/**
	 * Engine-reported prefix cache hit rate over the instance's lifetime, NaN when
	 * unknown.
	 */
	public double prefixHitRate() {
		return prefixQueriesTokens > 0 ? prefixHitsTokens / prefixQueriesTokens : Double.NaN;
	}

	public long ageNanos(long nowNanos) {
		return nowNanos - sampledAtNanos;
	}

}

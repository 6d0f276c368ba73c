package io.github.dualmap.core;

/**
 * Running totals of one pool's pending uncached tokens over the members that accept work,
 * so the hotspot test's pool mean costs O(1) instead of a scan of every instance. Each
 * {@link InstanceState} adds its own changes: router-local tokens (W + P) as they change,
 * and the excess of its scraped queue over them when a snapshot arrives.
 */
final class PoolBacklog {

	private long localTokens;

	private long scrapedExcessTokens;

	// Written under the lock with the sums, read without it.
	private volatile int accepting;

	// What mean() answers, set with every change of the sums above.
	private volatile double mean;

	// EWMA of uncached tokens per request: turns a scraped queue length into tokens.
	private volatile double meanRequestTokens;

	// EWMAs of attention pairs and uncached tokens per request: their ratio costs
	// tokens the router knows only as a count (its peers', the scraped queue's).
	private volatile double meanRequestPairs;

	private volatile double meanPairTokens;

	PoolBacklog(double initialRequestTokens) {
		this.meanRequestTokens = initialRequestTokens;
		this.meanPairTokens = initialRequestTokens;
		this.meanRequestPairs = initialRequestTokens * initialRequestTokens / 2;
	}

	synchronized void add(long local, long scrapedExcess, int members) {
		localTokens += local;
		scrapedExcessTokens += scrapedExcess;
		accepting += members;
		mean = accepting == 0 ? 0 : (double) (localTokens + scrapedExcessTokens) / accepting;
	}

	/**
	 * Mean pending tokens per accepting member, 0 when none accepts: as of the last
	 * {@link #add}. A plain read, since the hotspot test asks it for every instance a
	 * queued request's move looks at.
	 */
	double mean() {
		return mean;
	}

	int accepting() {
		return accepting;
	}

	double meanRequestTokens() {
		return meanRequestTokens;
	}

	void observeRequestTokens(int uncached) {
		meanRequestTokens = 0.95 * meanRequestTokens + 0.05 * Math.max(1, uncached);
	}

	/** Feeds one released request's work to the pairs-per-token mean. */
	void observeRequestWork(PrefillWork work) {
		meanRequestPairs = 0.95 * meanRequestPairs + 0.05 * work.pairs();
		meanPairTokens = 0.95 * meanPairTokens + 0.05 * work.tokens();
	}

	/** Mean attention pairs per uncached token of released requests. */
	double meanPairsPerToken() {
		double t = meanPairTokens;
		return t > 0 ? meanRequestPairs / t : 0;
	}

}

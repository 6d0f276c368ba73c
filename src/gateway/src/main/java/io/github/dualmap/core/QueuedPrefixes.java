package io.github.dualmap.core;

/**
 * The prompt blocks of the requests the dispatch queues hold for one instance, counted:
 * what that instance's prefix cache will hold once they are released there. A request
 * placed while an earlier one with the same prefix still waits (the next turn of a
 * conversation arriving before the previous turn left the queue) finds that prefix here,
 * where the shadow index, which learns a prompt only at its release, does not yet have it
 * ({@link QueueSettings#countQueuedPrefixes()}). Block hashes are chained, so a block
 * stands for its whole prefix. Thread-safe.
 */
final class QueuedPrefixes {

	private final LongCounts counts = new LongCounts();

	// Read without the lock: an empty index answers 0 at no cost.
	private volatile int requests;

	/** A request with the blocks {@code chain} joined the instance's queue. */
	synchronized void add(long[] chain) {
		for (long h : chain) {
			counts.increment(h);
		}
		requests++;
	}

	/** A request with the blocks {@code chain} left the instance's queue. */
	synchronized void remove(long[] chain) {
		for (long h : chain) {
			counts.decrement(h);
		}
		requests--;
	}

	/** Leading blocks of {@code chain} that some queued request's prompt holds. */
	int matchedBlocks(long[] chain) {
		if (requests == 0) {
			return 0;
		}
		synchronized (this) {
			int n = 0;
			while (n < chain.length && counts.contains(chain[n])) {
				n++;
			}
			return n;
		}
	}

	/** Requests counted. */
	int requests() {
		return requests;
	}

}

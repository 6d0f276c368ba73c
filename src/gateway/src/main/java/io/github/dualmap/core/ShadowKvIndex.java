package io.github.dualmap.core;

/**
 * What the router believes an instance has cached: an LRU set of the block hashes it
 * routed there. The estimated hit of a prompt is its longest chain prefix present in the
 * set. A chain is touched deepest block first, so its root is the most recently used and
 * eviction takes the tail of a prefix before its head, as a prefix cache does (a missing
 * head would make every deeper block useless). Thread-safe.
 */
public final class ShadowKvIndex {

	private final LongLruMap<Boolean> blocks;

	private volatile int capacityBlocks;

	// Changes to the set of blocks held (records, resizes, clears): an answer of
	// peekMatchedBlocks stays right while this does not move.
	private volatile long version;

	public ShadowKvIndex(int capacityBlocks) {
		if (capacityBlocks <= 0) {
			throw new IllegalArgumentException("capacityBlocks must be > 0 but was " + capacityBlocks);
		}
		this.capacityBlocks = capacityBlocks;
		this.blocks = new LongLruMap<>(capacityBlocks);
	}

	/**
	 * Number of leading blocks of {@code chain} believed to be cached (touches them as
	 * used).
	 */
	public synchronized int matchedBlocks(long[] chain) {
		int n = 0;
		while (n < chain.length && blocks.containsKey(chain[n])) {
			n++;
		}
		// Touch tail first so the head ends most recent: LRU then evicts the tail of a
		// prefix before its head, as an engine frees blocks, and never strands a tail
		// behind an evicted head.
		for (int i = n - 1; i >= 0; i--) {
			blocks.touch(chain[i]);
		}
		return n;
	}

	/** Same as {@link #matchedBlocks} without touching LRU order. */
	public synchronized int peekMatchedBlocks(long[] chain) {
		int n = 0;
		while (n < chain.length && blocks.containsKey(chain[n])) {
			n++;
		}
		return n;
	}

	/** Records that the whole chain was sent to this instance. */
	public synchronized void record(long[] chain) {
		version++;
		// Tail first, so the head is the most recently used entry (see matchedBlocks).
		for (int i = chain.length - 1; i >= 0; i--) {
			blocks.put(chain[i], Boolean.TRUE);
		}
	}

	/**
	 * Resizes, e.g. once the engine's KV capacity has been scraped; evicts down to the
	 * new size.
	 */
	public synchronized void resize(int newCapacityBlocks) {
		if (newCapacityBlocks <= 0) {
			throw new IllegalArgumentException("newCapacityBlocks must be > 0 but was " + newCapacityBlocks);
		}
		if (newCapacityBlocks == capacityBlocks) {
			return;
		}
		version++;
		capacityBlocks = newCapacityBlocks;
		blocks.capacity(newCapacityBlocks);
	}

	/**
	 * Up to {@code max} block hashes, most recently used first: recording them as one
	 * chain into another index ({@link #record} touches the last first) reproduces their
	 * LRU order there.
	 */
	public synchronized long[] recent(int max) {
		return blocks.newest(max);
	}

	public synchronized int size() {
		return blocks.size();
	}

	/**
	 * A number that changes whenever the blocks held may have changed (a record, a
	 * resize, a clear; touching them in {@link #matchedBlocks} does not count):
	 * {@link #peekMatchedBlocks} answers the same for a chain while it stays.
	 */
	public long version() {
		return version;
	}

	public int capacityBlocks() {
		return capacityBlocks;
	}

	public synchronized void clear() {
		version++;
		blocks.clear();
	}

}

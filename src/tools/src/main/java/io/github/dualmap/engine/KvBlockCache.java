package io.github.dualmap.engine;

/**
 * vLLM V1's KV block pool with prefix caching: blocks hold a reference count; a full
 * prompt block is registered under its chain hash; a block whose count drops to zero
 * joins the tail of an LRU free queue but stays findable by hash until it is reused from
 * the head of the queue (eviction). Arrays indexed by block id, no per-block objects.
 */
final class KvBlockCache {

	private static final int NONE = -1;

	private final int capacity;

	private final int[] refCount;

	private final long[] hashOf;

	private final boolean[] hashed;

	// Unreferenced blocks, the next to reuse first.
	private final IntLruList freeQueue;

	private final BlockHashIndex index;

	private long evictions;

	private KvEventListener events = KvEventListener.NONE;

	KvBlockCache(int capacity) {
		this.capacity = capacity;
		this.refCount = new int[capacity];
		this.hashOf = new long[capacity];
		this.hashed = new boolean[capacity];
		this.freeQueue = new IntLruList(capacity);
		this.index = new BlockHashIndex(capacity);
		for (int b = 0; b < capacity; b++) {
			freeQueue.addLast(b);
		}
	}

	int capacity() {
		return capacity;
	}

	/** Where stored and evicted blocks are reported from now on. */
	void events(KvEventListener listener) {
		this.events = listener;
	}

	/** Blocks with no reference (free or cached-but-evictable). */
	int freeBlocks() {
		return freeQueue.size();
	}

	int usedBlocks() {
		return capacity - freeQueue.size();
	}

	long evictions() {
		return evictions;
	}

	/**
	 * Length of the longest prefix of {@code chain} (at most {@code maxBlocks}) cached
	 * here.
	 */
	int cachedPrefix(long[] chain, int maxBlocks) {
		int n = Math.min(chain.length, maxBlocks);
		for (int i = 0; i < n; i++) {
			if (index.get(chain[i]) == NONE) {
				return i;
			}
		}
		return n;
	}

	/** Of the first {@code blocks} blocks of {@code chain}, how many are unreferenced. */
	int evictableAmong(long[] chain, int blocks) {
		int n = 0;
		for (int i = 0; i < blocks; i++) {
			if (refCount[index.get(chain[i])] == 0) {
				n++;
			}
		}
		return n;
	}

	/** Takes a reference on the cached block of {@code hash} (which must be cached). */
	int touch(long hash) {
		int b = index.get(hash);
		if (refCount[b]++ == 0) {
			freeQueue.remove(b);
		}
		return b;
	}

	/** A fresh block from the head of the free queue (evicting its hash), or -1. */
	int allocate() {
		int b = freeQueue.first();
		if (b == IntLruList.NONE) {
			return NONE;
		}
		freeQueue.remove(b);
		if (hashed[b]) {
			index.remove(hashOf[b]);
			hashed[b] = false;
			evictions++;
			events.removed(hashOf[b]);
		}
		refCount[b] = 1;
		return b;
	}

	/**
	 * Registers a filled block under {@code hash}; when another block already holds the
	 * hash, this one stays anonymous (as in vLLM, the duplicate is not cached).
	 */
	void register(int block, long hash) {
		if (!hashed[block] && index.putIfAbsent(hash, block)) {
			hashOf[block] = hash;
			hashed[block] = true;
			events.stored(hash);
		}
	}

	/**
	 * Drops one reference on each of {@code blocks[0..count)}, last block first, so a
	 * request's tail blocks are evicted before its prefix.
	 */
	void release(int[] blocks, int count) {
		for (int i = count - 1; i >= 0; i--) {
			int b = blocks[i];
			if (--refCount[b] == 0) {
				freeQueue.addLast(b);
			}
		}
	}

}

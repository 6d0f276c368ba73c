package io.github.dualmap.core;

import java.util.concurrent.locks.ReentrantReadWriteLock;

import org.jspecify.annotations.Nullable;

/**
 * Where each prompt block was last sent, over the whole pool: block hash to the id of the
 * instance that most recently received a request containing it. It lets a request find
 * the instance holding its longest prefix even when that instance is neither of its two
 * ring candidates (a conversation whose earlier turn the SLO switch, a migration or an
 * idle pull placed elsewhere), in O(log L) map lookups for a chain of L blocks, not O(N)
 * over the instances.
 * <p>
 * A bounded LRU by the last record: a chain is recorded tail first, so its head is the
 * most recent entry and eviction takes the tail of a prefix before its head, as the
 * shadow index does. Lookups do not count as use. Because block hashes are chained (a
 * block's hash covers every block before it), a recorded block's whole prefix was
 * recorded after it and outlives it: the known blocks of any chain form a prefix, which
 * is what lets {@link #owner} search by bisection.
 * <p>
 * Thread-safe: lookups share a read lock; a record takes the write lock for at most
 * {@value #RECORD_CHUNK} blocks at a time, so a decision waits for a chunk, never for a
 * whole long prompt (a 1,500-block chain takes about a tenth of a millisecond). A lookup
 * between two chunks of a new chain may see its tail before its head and name the
 * instance that chain is being sent to, which is where its blocks are going anyway.
 */
public final class PrefixDirectory {

	// A record puts, which makes the block the newest, so the eldest entry is the least
	// recently recorded; lookups read without reordering, so they share the read lock.
	private final LongLruMap<String> owners;

	/** Most blocks a record writes per hold of the write lock. */
	static final int RECORD_CHUNK = 64;

	private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

	public PrefixDirectory(int capacityBlocks) {
		this.owners = new LongLruMap<>(checked(capacityBlocks));
	}

	/** Records that the whole {@code chain} was sent to {@code instanceId}. */
	public void record(long[] chain, String instanceId) {
		int i = chain.length - 1;
		while (i >= 0) {
			int end = Math.max(-1, i - RECORD_CHUNK);
			this.lock.writeLock().lock();
			try {
				for (; i > end; i--) {
					this.owners.put(chain[i], instanceId);
				}
			}
			finally {
				this.lock.writeLock().unlock();
			}
		}
	}

	/**
	 * The instance that was last sent the deepest recorded block of {@code chain} (so
	 * holds its longest recorded prefix), or {@code null} when not even its first block
	 * is known.
	 */
	public @Nullable String owner(long[] chain) {
		this.lock.readLock().lock();
		try {
			return ownerLocked(chain);
		}
		finally {
			this.lock.readLock().unlock();
		}
	}

	private @Nullable String ownerLocked(long[] chain) {
		// The known blocks of a chain are a prefix of it: find its end by bisection.
		int known = 0;
		int unknown = chain.length;
		while (known < unknown) {
			int mid = (known + unknown + 1) >>> 1;
			if (this.owners.containsKey(chain[mid - 1])) {
				known = mid;
			}
			else {
				unknown = mid - 1;
			}
		}
		return known == 0 ? null : this.owners.get(chain[known - 1]);
	}

	/** Most entries a {@link #forget} scans per hold of the write lock. */
	static final int FORGET_SLICE = 16_384;

	/**
	 * Forgets every block last sent to {@code instanceId}, which left the pool: its
	 * entries could only name an instance that is gone (or, should the same id come back,
	 * an empty one) and would hold room the live instances' entries need until they aged
	 * out. A scan of the whole directory, {@value #FORGET_SLICE} entries per hold of the
	 * write lock (a million-block directory in a few milliseconds, decisions waiting for
	 * one slice at most).
	 * <p>
	 * A chain whose head was last sent elsewhere keeps its head and loses its tail, so
	 * its known blocks stay a prefix; one whose head went to {@code instanceId} and its
	 * tail elsewhere keeps a tail without its head, which {@link #owner} may find or
	 * miss, naming at most an instance that was sent that whole prefix.
	 * @return blocks forgotten
	 */
	public long forget(String instanceId) {
		long removed = 0;
		for (int from = 0;; from += FORGET_SLICE) {
			this.lock.writeLock().lock();
			try {
				if (from >= this.owners.entrySpan()) {
					return removed;
				}
				removed += this.owners.removeValues(instanceId::equals, from, FORGET_SLICE);
			}
			finally {
				this.lock.writeLock().unlock();
			}
		}
	}

	/** Sets the bound in blocks, evicting the least recently recorded down to it. */
	public void capacity(int blocks) {
		int c = checked(blocks);
		this.lock.writeLock().lock();
		try {
			this.owners.capacity(c);
		}
		finally {
			this.lock.writeLock().unlock();
		}
	}

	public int capacity() {
		this.lock.readLock().lock();
		try {
			return this.owners.capacity();
		}
		finally {
			this.lock.readLock().unlock();
		}
	}

	/** Blocks known. */
	public int size() {
		this.lock.readLock().lock();
		try {
			return this.owners.size();
		}
		finally {
			this.lock.readLock().unlock();
		}
	}

	private static int checked(int blocks) {
		if (blocks <= 0) {
			throw new IllegalArgumentException("capacity must be > 0 blocks but was " + blocks);
		}
		return blocks;
	}

}

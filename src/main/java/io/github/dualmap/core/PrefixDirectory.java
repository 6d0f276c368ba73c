package io.github.dualmap.core;

import java.util.LinkedHashMap;
import java.util.Map;

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
 * is what lets {@link #owner} search by bisection. Thread-safe.
 */
public final class PrefixDirectory {

	// Insertion order; a record re-inserts, so the eldest entry is the least recently
	// recorded.
	private final LinkedHashMap<Long, String> owners = new LinkedHashMap<>(1024, 0.75f, false) {
		@Override
		protected boolean removeEldestEntry(Map.Entry<Long, String> eldest) {
			return size() > PrefixDirectory.this.capacityBlocks;
		}
	};

	private int capacityBlocks;

	public PrefixDirectory(int capacityBlocks) {
		this.capacityBlocks = checked(capacityBlocks);
	}

	/** Records that the whole {@code chain} was sent to {@code instanceId}. */
	public synchronized void record(long[] chain, String instanceId) {
		for (int i = chain.length - 1; i >= 0; i--) {
			this.owners.remove(chain[i]);
			this.owners.put(chain[i], instanceId);
		}
	}

	/**
	 * The instance that was last sent the deepest recorded block of {@code chain} (so
	 * holds its longest recorded prefix), or {@code null} when not even its first block
	 * is known.
	 */
	public synchronized @Nullable String owner(long[] chain) {
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

	/** Sets the bound in blocks, evicting the least recently recorded down to it. */
	public synchronized void capacity(int blocks) {
		int c = checked(blocks);
		if (c == this.capacityBlocks) {
			return;
		}
		this.capacityBlocks = c;
		var it = this.owners.entrySet().iterator();
		while (this.owners.size() > c && it.hasNext()) {
			it.next();
			it.remove();
		}
	}

	public synchronized int capacity() {
		return this.capacityBlocks;
	}

	/** Blocks known. */
	public synchronized int size() {
		return this.owners.size();
	}

	private static int checked(int blocks) {
		if (blocks <= 0) {
			throw new IllegalArgumentException("capacity must be > 0 blocks but was " + blocks);
		}
		return blocks;
	}

}

package io.github.dualmap.core;

/**
 * Counts per {@code long} key (block hashes), with no boxing: an open-addressing table
 * with linear probing and backward-shift deletion. A key whose count drops to zero leaves
 * the table. Not thread-safe: its owners lock around it.
 */
final class LongCounts {

	private long[] keys = new long[64];

	private int[] counts = new int[64];

	private int size;

	/** Adds one to {@code key}'s count. */
	void increment(long key) {
		int i = find(key);
		if (counts[i] > 0) {
			counts[i]++;
			return;
		}
		if ((size + 1) * 2 > keys.length) {
			grow();
			i = find(key);
		}
		keys[i] = key;
		counts[i] = 1;
		size++;
	}

	/** Takes one from {@code key}'s count; a key at zero leaves. */
	void decrement(long key) {
		int i = find(key);
		if (counts[i] > 1) {
			counts[i]--;
		}
		else if (counts[i] == 1) {
			delete(i);
		}
	}

	/** Drops {@code key} whatever its count. */
	void remove(long key) {
		int i = find(key);
		if (counts[i] > 0) {
			delete(i);
		}
	}

	boolean contains(long key) {
		return counts[find(key)] > 0;
	}

	/** Keys with a count. */
	int size() {
		return size;
	}

	// The slot holding key, or the empty slot where it would go.
	private int find(long key) {
		int mask = keys.length - 1;
		int i = slot(key, mask);
		while (counts[i] > 0 && keys[i] != key) {
			i = (i + 1) & mask;
		}
		return i;
	}

	private void delete(int i) {
		int mask = keys.length - 1;
		size--;
		int hole = i;
		for (int j = (hole + 1) & mask; counts[j] > 0; j = (j + 1) & mask) {
			int home = slot(keys[j], mask);
			boolean between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
			if (!between) {
				keys[hole] = keys[j];
				counts[hole] = counts[j];
				hole = j;
			}
		}
		counts[hole] = 0;
	}

	private void grow() {
		long[] oldKeys = keys;
		int[] oldCounts = counts;
		keys = new long[oldKeys.length * 2];
		counts = new int[oldKeys.length * 2];
		for (int j = 0; j < oldKeys.length; j++) {
			if (oldCounts[j] > 0) {
				int i = find(oldKeys[j]);
				keys[i] = oldKeys[j];
				counts[i] = oldCounts[j];
			}
		}
	}

	private static int slot(long key, int mask) {
		long h = key * 0x9E3779B97F4A7C15L;
		return (int) (h ^ (h >>> 32)) & mask;
	}

}

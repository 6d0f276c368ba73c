package io.github.dualmap.engine;

import java.util.Arrays;

/**
 * Open-addressing map from block hash to block id, with no boxing: the prefix cache looks
 * blocks up once per block of every admitted prompt, so this is the simulator's hot path.
 * Linear probing with backward-shift deletion (no tombstones).
 */
final class BlockHashIndex {

	private static final int EMPTY = -1;

	private final long[] keys;

	private final int[] values;

	private final int mask;

	private int size;

	BlockHashIndex(int maxEntries) {
		int cap = Integer.highestOneBit(Math.max(4, maxEntries) * 2 - 1) << 1;
		this.keys = new long[cap];
		this.values = new int[cap];
		this.mask = cap - 1;
		Arrays.fill(values, EMPTY);
	}

	private int slot(long key) {
		long h = key * 0x9E3779B97F4A7C15L;
		return (int) (h ^ (h >>> 32)) & mask;
	}

	/** Block id cached under {@code hash}, or -1. */
	int get(long hash) {
		for (int i = slot(hash);; i = (i + 1) & mask) {
			int v = values[i];
			if (v == EMPTY) {
				return EMPTY;
			}
			if (keys[i] == hash) {
				return v;
			}
		}
	}

	/** Adds {@code hash -> block} unless the hash is present; true when added. */
	boolean putIfAbsent(long hash, int block) {
		int i = slot(hash);
		while (values[i] != EMPTY) {
			if (keys[i] == hash) {
				return false;
			}
			i = (i + 1) & mask;
		}
		keys[i] = hash;
		values[i] = block;
		size++;
		return true;
	}

	void remove(long hash) {
		int i = slot(hash);
		while (values[i] != EMPTY && keys[i] != hash) {
			i = (i + 1) & mask;
		}
		if (values[i] == EMPTY) {
			return;
		}
		size--;
		// Backward-shift: move later entries of the probe run into the hole.
		int hole = i;
		for (int j = (hole + 1) & mask; values[j] != EMPTY; j = (j + 1) & mask) {
			int home = slot(keys[j]);
			boolean between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
			if (!between) {
				keys[hole] = keys[j];
				values[hole] = values[j];
				hole = j;
			}
		}
		values[hole] = EMPTY;
	}

	int size() {
		return size;
	}

}

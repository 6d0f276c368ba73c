package io.github.dualmap.core;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which KV blocks each instance's engine holds in its prefix cache, learned only from the
 * engines' KV events (block stored, block removed) by chained block hash, as NVIDIA
 * Dynamo's KV indexer and llm-d's KV-cache indexer build it from vLLM's events. Exact up
 * to the events' delivery delay; every router replica that subscribes sees the same
 * events, so one index can serve them all. Thread-safe per instance.
 */
public final class KvEventIndex {

	private final Map<String, BlockSet> byInstance = new ConcurrentHashMap<>();

	/** {@code instanceId}'s engine stored the block of chain hash {@code blockHash}. */
	public void stored(String instanceId, long blockHash) {
		byInstance.computeIfAbsent(instanceId, id -> new BlockSet()).add(blockHash);
	}

	/** {@code instanceId}'s engine evicted the block of chain hash {@code blockHash}. */
	public void removed(String instanceId, long blockHash) {
		BlockSet set = byInstance.get(instanceId);
		if (set != null) {
			set.remove(blockHash);
		}
	}

	/**
	 * Blocks of {@code chain} (a prompt's chained block hashes at the engine's block
	 * size) cached on {@code instanceId}, counted from the first until the first missing
	 * one: chained hashes make a later block useless without the ones before it.
	 */
	public int overlapBlocks(String instanceId, long[] chain) {
		BlockSet set = byInstance.get(instanceId);
		return set == null ? 0 : set.prefix(chain);
	}

	/** Blocks held for {@code instanceId}. */
	public int blocks(String instanceId) {
		BlockSet set = byInstance.get(instanceId);
		return set == null ? 0 : set.size();
	}

	/** Forgets every instance not in {@code members} (a removed engine's blocks go). */
	public void retain(Set<String> members) {
		byInstance.keySet().retainAll(members);
	}

	/**
	 * Open-addressing set of block hashes with backward-shift deletion, no boxing: the
	 * events cover every block of every prompt.
	 */
	private static final class BlockSet {

		private long[] keys = new long[1024];

		private boolean[] used = new boolean[1024];

		private int size;

		synchronized void add(long key) {
			if ((size + 1) * 2 > keys.length) {
				grow();
			}
			int mask = keys.length - 1;
			int i = slot(key, mask);
			while (used[i]) {
				if (keys[i] == key) {
					return;
				}
				i = (i + 1) & mask;
			}
			keys[i] = key;
			used[i] = true;
			size++;
		}

		synchronized void remove(long key) {
			int mask = keys.length - 1;
			int i = slot(key, mask);
			while (used[i] && keys[i] != key) {
				i = (i + 1) & mask;
			}
			if (!used[i]) {
				return;
			}
			size--;
			int hole = i;
			for (int j = (hole + 1) & mask; used[j]; j = (j + 1) & mask) {
				int home = slot(keys[j], mask);
				boolean between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
				if (!between) {
					keys[hole] = keys[j];
					hole = j;
				}
			}
			used[hole] = false;
		}

		synchronized int prefix(long[] chain) {
			for (int k = 0; k < chain.length; k++) {
				if (!contains(chain[k])) {
					return k;
				}
			}
			return chain.length;
		}

		synchronized int size() {
			return size;
		}

		private boolean contains(long key) {
			int mask = keys.length - 1;
			for (int i = slot(key, mask); used[i]; i = (i + 1) & mask) {
				if (keys[i] == key) {
					return true;
				}
			}
			return false;
		}

		private void grow() {
			long[] oldKeys = keys;
			boolean[] oldUsed = used;
			keys = new long[oldKeys.length * 2];
			used = new boolean[oldKeys.length * 2];
			int mask = keys.length - 1;
			for (int j = 0; j < oldKeys.length; j++) {
				if (oldUsed[j]) {
					int i = slot(oldKeys[j], mask);
					while (used[i]) {
						i = (i + 1) & mask;
					}
					keys[i] = oldKeys[j];
					used[i] = true;
				}
			}
		}

		private static int slot(long key, int mask) {
			long h = key * 0x9E3779B97F4A7C15L;
			return (int) (h ^ (h >>> 32)) & mask;
		}

	}

}

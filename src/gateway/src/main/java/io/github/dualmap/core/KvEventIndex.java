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

	/** The blocks of one instance: a set of hashes. */
	private static final class BlockSet {

		private final LongCounts hashes = new LongCounts();

		synchronized void add(long key) {
			if (!hashes.contains(key)) {
				hashes.increment(key);
			}
		}

		synchronized void remove(long key) {
			hashes.remove(key);
		}

		synchronized int prefix(long[] chain) {
			for (int k = 0; k < chain.length; k++) {
				if (!hashes.contains(chain[k])) {
					return k;
				}
			}
			return chain.length;
		}

		synchronized int size() {
			return hashes.size();
		}

	}

}

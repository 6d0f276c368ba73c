package io.github.dualmap.core;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The SGLang Model Gateway's approximate prefix tree: which blocks of prompts the router
 * sent to which instance, with one bound for all instances together. Upstream's tree is a
 * radix tree whose nodes carry the instances ("tenants") that inserted through them; its
 * size is the sum over tenants of the text each holds, and a background task every
 * {@code eviction_interval} removes tenants from leaf nodes, least recently used first
 * across all tenants, until the total is at or under {@code max_tree_size}
 * (smg-project/smg {@code crates/kv_index/src/string_tree.rs},
 * {@code evict_tenant_by_size}). Between passes the tree grows past the bound.
 * <p>
 * Here an entry is one (instance, chained block hash) pair in one LRU order; a prompt is
 * recorded deepest block first, so within an instance a prefix's tail goes before its
 * head, as a leaf goes before its parent upstream. The bound is enforced at the first
 * record at or after each pass's time, every {@code sweepIntervalNanos} from the first
 * record. Thread-safe.
 */
public final class SharedPrefixTree implements ApproximateTrees {

	private static final int UNBOUNDED = Integer.MAX_VALUE;

	// (instance, block) -> the instance's id (the tenant whose entry it is).
	private final LongLruMap<String> entries = new LongLruMap<>(UNBOUNDED);

	private final Map<String, Long> salts = new HashMap<>();

	private final Map<String, Integer> sizes = new HashMap<>();

	private final int maxBlocks;

	private final long sweepIntervalNanos;

	private boolean started;

	private long nextSweepNanos;

	/**
	 * @param maxBlocks blocks over all instances a pass trims the tree down to, > 0
	 * @param sweepIntervalNanos time between passes, > 0
	 */
	public SharedPrefixTree(int maxBlocks, long sweepIntervalNanos) {
		if (maxBlocks <= 0) {
			throw new IllegalArgumentException("maxBlocks must be > 0 but was " + maxBlocks);
		}
		if (sweepIntervalNanos <= 0) {
			throw new IllegalArgumentException("sweepIntervalNanos must be > 0 but was " + sweepIntervalNanos);
		}
		this.maxBlocks = maxBlocks;
		this.sweepIntervalNanos = sweepIntervalNanos;
	}

	/** Leading blocks of {@code chain} recorded for {@code instanceId}; no LRU change. */
	@Override
	public synchronized int matchedBlocks(String instanceId, long[] chain) {
		Long salt = salts.get(instanceId);
		if (salt == null) {
			return 0;
		}
		int n = 0;
		while (n < chain.length && entries.containsKey(key(salt, chain[n]))) {
			n++;
		}
		return n;
	}

	/**
	 * {@code chain} was sent to {@code instanceId} at {@code nowNanos}: its blocks become
	 * that instance's most recently used, the head last. A pass due by {@code nowNanos}
	 * runs first.
	 */
	@Override
	public synchronized void record(String instanceId, long[] chain, long nowNanos) {
		sweepIfDue(nowNanos);
		long salt = salts.computeIfAbsent(instanceId, SharedPrefixTree::salt);
		int added = 0;
		for (int i = chain.length - 1; i >= 0; i--) {
			long k = key(salt, chain[i]);
			if (!entries.containsKey(k)) {
				added++;
			}
			entries.put(k, instanceId);
		}
		if (added > 0) {
			sizes.merge(instanceId, added, Integer::sum);
		}
	}

	/** Forgets every instance not in {@code members}, as upstream removes a tenant. */
	@Override
	public synchronized void retain(Set<String> members) {
		if (members.containsAll(salts.keySet())) {
			return;
		}
		entries.removeValues(id -> !members.contains(id), 0, entries.entrySpan());
		salts.keySet().retainAll(members);
		sizes.keySet().retainAll(members);
	}

	/** Blocks held for {@code instanceId}. */
	@Override
	public synchronized int blocks(String instanceId) {
		return sizes.getOrDefault(instanceId, 0);
	}

	/** Blocks held over all instances. */
	public synchronized int size() {
		return entries.size();
	}

	private void sweepIfDue(long nowNanos) {
		if (!started) {
			started = true;
			nextSweepNanos = nowNanos + sweepIntervalNanos;
			return;
		}
		if (nowNanos < nextSweepNanos) {
			return;
		}
		long behind = (nowNanos - nextSweepNanos) / sweepIntervalNanos;
		nextSweepNanos += (behind + 1) * sweepIntervalNanos;
		// Evict the least recently used entries down to the bound, counting per tenant.
		while (entries.size() > maxBlocks) {
			String victim = entries.eldestValue();
			if (victim == null) {
				break;
			}
			entries.removeEldest();
			sizes.merge(victim, -1, (a, b) -> a + b == 0 ? null : a + b);
		}
	}

	private static long key(long salt, long block) {
		return (block ^ salt) * 0x9E3779B97F4A7C15L + salt;
	}

	private static long salt(String instanceId) {
		// FNV-1a over the id, then a finalising mix: distinct ids give unrelated salts.
		long h = 0xcbf29ce484222325L;
		for (int i = 0; i < instanceId.length(); i++) {
			h ^= instanceId.charAt(i);
			h *= 0x100000001b3L;
		}
		h ^= h >>> 33;
		h *= 0xff51afd7ed558ccdL;
		h ^= h >>> 33;
		return h;
	}

}

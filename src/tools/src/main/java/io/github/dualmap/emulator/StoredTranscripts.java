package io.github.dualmap.emulator;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.function.ToLongFunction;

import org.jspecify.annotations.Nullable;

/**
 * A map bounded by the total weight of its values that forgets the least recently used
 * first, as the emulator's documentation says of its stored responses. (Caffeine's bound
 * admits a new entry only when it was used more often than the one it would evict: a
 * store of responses, each written once and continued about once, kept its oldest and
 * dropped the new ones.) A value heavier than the bound is not kept. Thread-safe: one
 * lock per operation.
 *
 * @param <V> the values
 */
final class StoredTranscripts<V> {

	private final long maxWeight;

	private final ToLongFunction<V> weigher;

	// Least recently used first; guarded by this.
	private final LinkedHashMap<String, V> entries = new LinkedHashMap<>(16, 0.75f, true);

	private long weight;

	StoredTranscripts(long maxWeight, ToLongFunction<V> weigher) {
		this.maxWeight = maxWeight;
		this.weigher = weigher;
	}

	synchronized @Nullable V get(String key) {
		return this.entries.get(key);
	}

	synchronized @Nullable V remove(String key) {
		V v = this.entries.remove(key);
		if (v != null) {
			this.weight -= this.weigher.applyAsLong(v);
		}
		return v;
	}

	synchronized void put(String key, V value) {
		remove(key);
		long w = this.weigher.applyAsLong(value);
		if (w > this.maxWeight) {
			return;
		}
		this.entries.put(key, value);
		this.weight += w;
		Iterator<V> leastRecentFirst = this.entries.values().iterator();
		while (this.weight > this.maxWeight) {
			this.weight -= this.weigher.applyAsLong(leastRecentFirst.next());
			leastRecentFirst.remove();
		}
	}

	synchronized int size() {
		return this.entries.size();
	}

}

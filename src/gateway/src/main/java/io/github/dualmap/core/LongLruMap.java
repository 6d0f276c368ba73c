package io.github.dualmap.core;

import java.util.Arrays;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * A bounded map from {@code long} keys to values that keeps its entries in order of last
 * use and drops the least recently used one when a new key would exceed the bound: the
 * {@code LinkedHashMap} with {@code removeEldestEntry} that the shadow indexes and the
 * prefix directory were built on, without a boxed key and an entry object per block.
 * Those structures take a whole prompt's chain of block hashes on every release (hundreds
 * to thousands of blocks for a long prompt), so their cost was allocation.
 * <p>
 * The entries live in two arrays indexed by entry number, in a doubly linked list from
 * eldest to newest: one of longs holding each entry's key next to its links (previous and
 * next entry numbers in one long), so a lookup that finds the key has the links in the
 * same cache line, and one of values; an open-addressing table of entry numbers finds a
 * key (linear probing, backward-shift deletion, no tombstones). The arrays grow by
 * doubling up to the bound and are reused as entries are evicted, so a full map allocates
 * nothing.
 * <p>
 * Semantics match {@code LinkedHashMap}: {@link #put} of a new key appends it as the
 * newest and then, if the map holds more than its bound, evicts the eldest (of a
 * non-empty map bounded above zero that is never the new key); {@link #put} of a present
 * key replaces its value and makes it the newest without evicting; {@link #get} and
 * {@link #containsKey} do not change the order; {@link #touch} makes a present key the
 * newest. Not thread-safe: its owners lock around it.
 *
 * @param <V> the value type; {@code null} values are not allowed
 */
final class LongLruMap<V> {

	private static final int NONE = -1;

	private static final int INITIAL_ENTRIES = 16;

	// Entry arrays never grow past this; tables of twice as many slots stay int-indexed.
	private static final int MAX_ENTRIES = 1 << 29;

	private int capacity;

	// Entry e's key at 2e, its links at 2e + 1: the previous entry number in the high
	// half, the next in the low half (NONE: -1).
	private long[] entries;

	private Object[] values;

	// Slot -> entry number, NONE when empty. Its length is a power of two at least twice
	// the entry arrays', so the load factor stays at or under one half.
	private int[] table;

	private int mask;

	private int size;

	// Entry numbers below this have been handed out; freed ones chain through their next
	// link.
	private int allocated;

	private int free = NONE;

	private int eldest = NONE;

	private int newest = NONE;

	LongLruMap(int capacity) {
		this.capacity = checked(capacity);
		allocate(Math.min(INITIAL_ENTRIES, capacity));
	}

	private void allocate(int entries) {
		this.entries = new long[2 * entries];
		this.values = new Object[entries];
		this.table = new int[tableLength(entries)];
		Arrays.fill(this.table, NONE);
		this.mask = this.table.length - 1;
		this.size = 0;
		this.allocated = 0;
		this.free = NONE;
		this.eldest = NONE;
		this.newest = NONE;
	}

	private static int tableLength(int entries) {
		return Integer.highestOneBit(Math.max(2, entries) - 1) << 2;
	}

	private int home(long key) {
		long h = key * 0x9E3779B97F4A7C15L;
		return (int) (h ^ (h >>> 32)) & this.mask;
	}

	// The slot holding key's entry, or the empty slot where it would go.
	private int slot(long key) {
		int i = home(key);
		for (int e = this.table[i]; e != NONE && key(e) != key; e = this.table[i]) {
			i = (i + 1) & this.mask;
		}
		return i;
	}

	private int entry(long key) {
		return this.table[slot(key)];
	}

	boolean containsKey(long key) {
		return entry(key) != NONE;
	}

	/** The value of {@code key}, or {@code null}; does not change the order. */
	@SuppressWarnings("unchecked")
	@Nullable V get(long key) {
		int e = entry(key);
		return e == NONE ? null : (V) this.values[e];
	}

	/** Makes {@code key} the most recently used entry; false when it is absent. */
	boolean touch(long key) {
		int e = entry(key);
		if (e == NONE) {
			return false;
		}
		moveToNewest(e);
		return true;
	}

	/**
	 * Maps {@code key} to {@code value} as the most recently used entry, evicting the
	 * least recently used one when a new key takes the map past its bound.
	 */
	void put(long key, V value) {
		if (value == null) {
			throw new IllegalArgumentException("value must not be null");
		}
		int i = slot(key);
		int e = this.table[i];
		if (e != NONE) {
			this.values[e] = value;
			moveToNewest(e);
			return;
		}
		if (this.free == NONE && this.allocated == this.values.length) {
			if (this.size < this.capacity && this.values.length < MAX_ENTRIES) {
				grow();
			}
			else {
				// Full at the bound: the eldest entry goes before the new one comes,
				// which
				// leaves the same entries as adding first and evicting after.
				removeEntry(this.eldest);
			}
			i = slot(key);
		}
		e = takeEntry();
		this.entries[e << 1] = key;
		this.values[e] = value;
		this.table[i] = e;
		this.size++;
		linkNewest(e);
		if (this.size > this.capacity) {
			removeEntry(this.eldest);
		}
	}

	/** Sets the bound, evicting the least recently used entries down to it. */
	void capacity(int newCapacity) {
		this.capacity = checked(newCapacity);
		while (this.size > this.capacity) {
			removeEntry(this.eldest);
		}
	}

	int capacity() {
		return this.capacity;
	}

	int size() {
		return this.size;
	}

	/** The value of the least recently used entry, or {@code null} when empty. */
	@SuppressWarnings("unchecked")
	@Nullable V eldestValue() {
		return this.eldest == NONE ? null : (V) this.values[this.eldest];
	}

	/** Removes the least recently used entry, if any. */
	void removeEldest() {
		if (this.eldest != NONE) {
			removeEntry(this.eldest);
		}
	}

	/** Up to {@code max} keys, the most recently used first. */
	long[] newest(int max) {
		int n = Math.max(0, Math.min(max, this.size));
		long[] out = new long[n];
		int e = this.newest;
		for (int i = 0; i < n; i++) {
			out[i] = key(e);
			e = prev(e);
		}
		return out;
	}

	/**
	 * Entry numbers handed out so far: {@link #removeValues} scans {@code [0, span)}. An
	 * entry keeps its number while it is present, whatever else is put or removed.
	 */
	int entrySpan() {
		return this.allocated;
	}

	/**
	 * Removes the present entries numbered {@code [from, from + count)} whose value
	 * matches; the others keep their place in the order of use.
	 * @return how many were removed
	 */
	int removeValues(Predicate<? super V> matches, int from, int count) {
		int end = (int) Math.min(this.allocated, Math.max(0L, (long) from + Math.max(0, count)));
		int removed = 0;
		for (int e = Math.max(0, from); e < end; e++) {
			@SuppressWarnings("unchecked")
			V v = (V) this.values[e];
			// A free entry has no value.
			if (v != null && matches.test(v)) {
				removeEntry(e);
				removed++;
			}
		}
		return removed;
	}

	/** Removes every entry and gives the grown arrays back. */
	void clear() {
		allocate(Math.min(INITIAL_ENTRIES, this.capacity));
	}

	private void grow() {
		int length = (int) Math.min(MAX_ENTRIES, Math.min(2L * this.values.length, Math.max(this.capacity, 1)));
		this.entries = Arrays.copyOf(this.entries, 2 * length);
		this.values = Arrays.copyOf(this.values, length);
		this.table = new int[tableLength(length)];
		Arrays.fill(this.table, NONE);
		this.mask = this.table.length - 1;
		for (int e = this.eldest; e != NONE; e = next(e)) {
			this.table[slot(key(e))] = e;
		}
	}

	private int takeEntry() {
		if (this.free != NONE) {
			int e = this.free;
			this.free = next(e);
			return e;
		}
		return this.allocated++;
	}

	private void removeEntry(int e) {
		unlink(e);
		deleteSlot(slot(key(e)));
		this.values[e] = null;
		setNext(e, this.free);
		this.free = e;
		this.size--;
	}

	// Backward-shift deletion: later entries of the probe run move into the hole when
	// their home slot does not lie between the hole and where they sit.
	private void deleteSlot(int hole) {
		this.table[hole] = NONE;
		for (int j = (hole + 1) & this.mask; this.table[j] != NONE; j = (j + 1) & this.mask) {
			int h = home(key(this.table[j]));
			boolean between = (hole <= j) ? (h > hole && h <= j) : (h > hole || h <= j);
			if (!between) {
				this.table[hole] = this.table[j];
				this.table[j] = NONE;
				hole = j;
			}
		}
	}

	private void moveToNewest(int e) {
		if (e != this.newest) {
			unlink(e);
			linkNewest(e);
		}
	}

	private void unlink(int e) {
		long links = this.entries[(e << 1) + 1];
		int p = (int) (links >> 32);
		int n = (int) links;
		if (p == NONE) {
			this.eldest = n;
		}
		else {
			setNext(p, n);
		}
		if (n == NONE) {
			this.newest = p;
		}
		else {
			setPrev(n, p);
		}
	}

	private void linkNewest(int e) {
		this.entries[(e << 1) + 1] = links(this.newest, NONE);
		if (this.newest == NONE) {
			this.eldest = e;
		}
		else {
			setNext(this.newest, e);
		}
		this.newest = e;
	}

	private long key(int e) {
		return this.entries[e << 1];
	}

	private int prev(int e) {
		return (int) (this.entries[(e << 1) + 1] >> 32);
	}

	private int next(int e) {
		return (int) this.entries[(e << 1) + 1];
	}

	private void setPrev(int e, int p) {
		int i = (e << 1) + 1;
		this.entries[i] = links(p, (int) this.entries[i]);
	}

	private void setNext(int e, int n) {
		int i = (e << 1) + 1;
		this.entries[i] = links((int) (this.entries[i] >> 32), n);
	}

	private static long links(int prev, int next) {
		return ((long) prev << 32) | (next & 0xFFFFFFFFL);
	}

	private static int checked(int capacity) {
		if (capacity <= 0) {
			throw new IllegalArgumentException("capacity must be > 0 but was " + capacity);
		}
		return capacity;
	}

}

package io.github.dualmap.engine;

import java.util.Arrays;

/**
 * Dense int ids (KV blocks) in least recently added order: a doubly linked list over
 * arrays indexed by id, no per-entry objects, growing as larger ids arrive. Adding,
 * removing and taking the first id are O(1). Not thread-safe.
 */
public final class IntLruList {

	/** What {@link #first()} answers for an empty list. */
	public static final int NONE = -1;

	private int[] prev;

	private int[] next;

	private boolean[] listed;

	private int head = NONE;

	private int tail = NONE;

	private int size;

	/** An empty list with room for ids below {@code capacity} before it grows. */
	public IntLruList(int capacity) {
		int length = Math.max(1, capacity);
		this.prev = new int[length];
		this.next = new int[length];
		this.listed = new boolean[length];
	}

	/** Whether {@code id} is in the list. */
	public boolean contains(int id) {
		return id >= 0 && id < this.listed.length && this.listed[id];
	}

	/** The least recently added id, or {@link #NONE}. */
	public int first() {
		return this.head;
	}

	public int size() {
		return this.size;
	}

	/**
	 * Adds {@code id}, which must not be in the list, as the most recently added.
	 * @throws IllegalArgumentException when it is negative or already listed
	 */
	public void addLast(int id) {
		if (id < 0 || contains(id)) {
			throw new IllegalArgumentException("id " + id + " is negative or already listed");
		}
		if (id >= this.listed.length) {
			int length = Math.max(id + 1, this.listed.length * 2);
			this.prev = Arrays.copyOf(this.prev, length);
			this.next = Arrays.copyOf(this.next, length);
			this.listed = Arrays.copyOf(this.listed, length);
		}
		this.prev[id] = this.tail;
		this.next[id] = NONE;
		if (this.tail == NONE) {
			this.head = id;
		}
		else {
			this.next[this.tail] = id;
		}
		this.tail = id;
		this.listed[id] = true;
		this.size++;
	}

	/**
	 * Takes {@code id}, which must be in the list, out of it.
	 * @throws IllegalArgumentException when it is not listed
	 */
	public void remove(int id) {
		if (!contains(id)) {
			throw new IllegalArgumentException("id " + id + " is not listed");
		}
		int p = this.prev[id];
		int n = this.next[id];
		if (p == NONE) {
			this.head = n;
		}
		else {
			this.next[p] = n;
		}
		if (n == NONE) {
			this.tail = p;
		}
		else {
			this.prev[n] = p;
		}
		this.listed[id] = false;
		this.size--;
	}

}

package io.github.dualmap.sim;

import java.util.Arrays;

import io.github.dualmap.engine.KvEventListener;

/** One engine's KV events of the step being run, in order. */
final class KvStepEvents implements KvEventListener {

	private long[] hashes = new long[256];

	private boolean[] stored = new boolean[256];

	private int size;

	@Override
	public void stored(long blockHash) {
		add(blockHash, true);
	}

	@Override
	public void removed(long blockHash) {
		add(blockHash, false);
	}

	private void add(long hash, boolean isStored) {
		if (this.size == this.hashes.length) {
			this.hashes = Arrays.copyOf(this.hashes, this.size * 2);
			this.stored = Arrays.copyOf(this.stored, this.size * 2);
		}
		this.hashes[this.size] = hash;
		this.stored[this.size++] = isStored;
	}

	int size() {
		return this.size;
	}

	/** The events collected so far, in order; collecting starts over. */
	Batch drain() {
		Batch batch = new Batch(Arrays.copyOf(this.hashes, this.size), Arrays.copyOf(this.stored, this.size));
		this.size = 0;
		return batch;
	}

	/** One step's events: block hashes, each stored or else removed. */
	record Batch(long[] hashes, boolean[] stored) {
	}

}

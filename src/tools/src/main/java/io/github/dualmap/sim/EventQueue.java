package io.github.dualmap.sim;

import java.util.PriorityQueue;

/**
 * A simulation's virtual clock and its pending events, earliest first. Events due at the
 * same instant come out in the order they were scheduled, so a run is a pure function of
 * its inputs.
 */
final class EventQueue {

	private final PriorityQueue<Entry> entries = new PriorityQueue<>();

	private long sequence;

	private long now;

	/** The virtual time, in nanoseconds: that of the last event taken. */
	long now() {
		return this.now;
	}

	void schedule(long time, SimEvent event) {
		this.entries.add(new Entry(time, this.sequence++, event));
	}

	boolean isEmpty() {
		return this.entries.isEmpty();
	}

	/** Takes the earliest event and moves the clock to its time. */
	SimEvent next() {
		Entry e = this.entries.poll();
		this.now = e.time();
		return e.event();
	}

	private record Entry(long time, long seq, SimEvent event) implements Comparable<Entry> {

		@Override
		public int compareTo(Entry o) {
			int c = Long.compare(this.time, o.time);
			return c != 0 ? c : Long.compare(this.seq, o.seq);
		}

	}

}

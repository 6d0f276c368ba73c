package io.github.dualmap.core;

import java.util.TreeSet;

/**
 * The queued requests the instance {@code idle} may pull when it runs out of work (it is
 * their other candidate), oldest first: the index the idle pull reads instead of scanning
 * every queue.
 */
final class Pullable {

	final InstanceState idle;

	// Its place in the order of the idle pull's index: creation order.
	final long ordinal;

	final TreeSet<RequestTicket> requests = new TreeSet<>(InstanceQueue.ARRIVAL);

	Pullable(InstanceState idle, long ordinal) {
		this.idle = idle;
		this.ordinal = ordinal;
	}

}

package io.github.dualmap.core;

/**
 * What {@link DispatchQueues} did since it was made: requests released, rejected, shed,
 * rescued, moved and pulled. Kept apart from the rules that count them, as a circuit
 * breaker keeps its metrics apart from its states, so each rule's class says what it
 * decides and this one what the counters mean. Guarded by the queues' lock: the
 * coordinator reads it under the lock.
 */
final class QueueStatistics {

	private long shed;

	private long migrations;

	private long rerouted;

	private long rescues;

	private long rescuesQueued;

	private long hopelessShed;

	private long hopelessShedForOthers;

	private long rejections;

	private long releases;

	private long pulls;

	private long releasedAtOnce;

	/** A queued request was turned away to make room for a request it yields to. */
	void recordShed() {
		shed++;
	}

	/** A queued request moved off a hotspot. */
	void recordMigration() {
		migrations++;
	}

	/**
	 * A queued request was taken over by its idle other candidate: a pull, and a
	 * migration.
	 */
	void recordPull() {
		migrations++;
		pulls++;
	}

	/** A queued request moved because its instance left, drains or is unhealthy. */
	void recordRerouted() {
		rerouted++;
	}

	/**
	 * A request at its wait bound was placed on another instance that could still make
	 * its SLO; {@code queued}: it joined that instance's queue rather than being sent.
	 */
	void recordRescue(boolean queued) {
		rescues++;
		if (queued) {
			rescuesQueued++;
		}
	}

	/**
	 * A request about to be released was answered 503 as past its SLO there;
	 * {@code forOthers}: nothing else waited in this gateway's queues, only outside them
	 * (its peers' published queues, or another sender the engine showed).
	 */
	void recordHopelessShed(boolean forOthers) {
		hopelessShed++;
		if (forOthers) {
			hopelessShedForOthers++;
		}
	}

	/** A request was rejected (429 or 503). */
	void recordRejection() {
		rejections++;
	}

	/** A request was sent to an instance. */
	void recordRelease() {
		releases++;
	}

	/**
	 * A request was sent as it arrived, never queued ({@link ReleasePass#releaseAtOnce});
	 * it counts as a release too.
	 */
	void recordReleasedAtOnce() {
		releasedAtOnce++;
	}

	long shed() {
		return shed;
	}

	long migrations() {
		return migrations;
	}

	long rerouted() {
		return rerouted;
	}

	long rescues() {
		return rescues;
	}

	long rescuesQueued() {
		return rescuesQueued;
	}

	long hopelessShed() {
		return hopelessShed;
	}

	long hopelessShedForOthers() {
		return hopelessShedForOthers;
	}

	long rejections() {
		return rejections;
	}

	long releases() {
		return releases;
	}

	long pulls() {
		return pulls;
	}

	long releasedAtOnce() {
		return releasedAtOnce;
	}

}

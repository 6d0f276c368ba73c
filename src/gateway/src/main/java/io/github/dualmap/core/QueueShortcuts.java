package io.github.dualmap.core;

/**
 * The shortcuts the queue rules of {@link DispatchQueues} take so that an event costs
 * what it changes, not the pool's size. Each one answers exactly as the plain form of its
 * rule would (the same releases, moves and rejections at the same moments): it only
 * leaves out looks whose answer is already known. The queues take all of them;
 * {@code DispatchQueuesIndexedMovesTests} runs a subclass that takes none beside them and
 * checks that every decision is the same.
 */
class QueueShortcuts {

	/** Every shortcut: what the queues run. */
	static final QueueShortcuts ALL = new QueueShortcuts();

	/**
	 * A request's cached prefix on an instance is kept while that instance's shadow index
	 * holds the same blocks ({@link QueueBook#cachedTokens}).
	 */
	boolean reuseCachedPrefix() {
		return true;
	}

	/**
	 * With only late requests moving, a hotspot's move looks at its late requests alone
	 * ({@code Rebalancer.bestLateMove}).
	 */
	boolean lateRequestsOnly() {
		return true;
	}

	/**
	 * With {@link #lateRequestsOnly()}, a hotspot's move passes over the late requests
	 * whose other candidate takes moves but had no prefill room for any of them, while
	 * that instance's room has not changed ({@code Rebalancer.bestLateMove}).
	 */
	boolean skipTargetsWithoutRoom() {
		return true;
	}

	/**
	 * A request that arrives while nothing waits in the pool's queues and finds room on
	 * its instance is released without being filed in that instance's queue and taken out
	 * again ({@link ReleasePass#releaseAtOnce}).
	 */
	boolean releaseAtOnce() {
		return true;
	}

	/**
	 * In a pass of the idle pull, a request's estimate where it waits is taken once per
	 * queue until a pull changes something: every request queued on one instance has the
	 * same estimate there ({@code IdlePull.estimateHere}).
	 */
	boolean estimateOncePerQueue() {
		return true;
	}

	/**
	 * With fair shares, from how many tenants waiting in one queue it keeps them in the
	 * order of service (band, counter, longest waiting head; until fewer than half as
	 * many wait), so that the tenant it serves next is the first rather than found by a
	 * pass over them all ({@code FairShares.next}). Keeping the order costs each change
	 * of a tenant's counter a step in every such queue the tenant waits in, so a queue
	 * where few wait is passed over instead.
	 */
	int orderTenantsFrom() {
		return 16;
	}

	/**
	 * With fair shares, a tenant that starts waiting is lifted to the smallest counter of
	 * its band's waiting tenants, which are kept in order of their counters
	 * ({@code FairShares.floor}), rather than found by a pass over every waiting tenant.
	 */
	boolean orderedFloor() {
		return true;
	}

	/** The evacuation is skipped while every member accepts work. */
	boolean skipEvacuationWhileAllAccept() {
		return true;
	}

	/**
	 * The release pass passes over a parked queue: its last look ended with its instance
	 * full or without room for its next request, and nothing that answer depends on has
	 * changed since ({@link QueueBook#park}).
	 */
	boolean parkQueues() {
		return true;
	}

	/**
	 * The hotspot moves look for a target among the members whose oldest queued request
	 * has not waited past the hotspot bound (every other member is a hotspot), when they
	 * are few ({@link QueueBook#youngMembers}).
	 */
	boolean targetsAmongYoung() {
		return true;
	}

	/**
	 * With {@link #targetsAmongYoung()}, whether a move's target is found among the
	 * {@code young} such members of {@code members} rather than by the walk: when few of
	 * many are young the walk would pass many hotspots; else it soon meets a member that
	 * takes the move.
	 */
	boolean targetsAmongYoung(int young, int members) {
		return young * 4 <= members;
	}

}

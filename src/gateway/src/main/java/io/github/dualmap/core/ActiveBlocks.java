package io.github.dualmap.core;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The KV blocks of the requests a router has active on each instance, from dispatch to
 * finish, reference-counted as in the engine's paged KV cache (requests sharing a prefix
 * share its blocks): the decode load of NVIDIA Dynamo's router cost. Thread-safe.
 */
final class ActiveBlocks {

	private final PerInstance<Blocks> byInstance = new PerInstance<>(Blocks::new);

	private final Map<String, Active> byRequest = new ConcurrentHashMap<>();

	/**
	 * Request {@code requestId} became active on {@code instanceId} with the blocks of
	 * {@code chain}; a retry of the same request ends its earlier attempt.
	 */
	void dispatched(String requestId, String instanceId, long[] chain) {
		Active previous = byRequest.put(requestId, new Active(instanceId, chain));
		if (previous != null) {
			release(previous);
		}
		byInstance.get(instanceId).add(chain);
	}

	/** Request {@code requestId} finished: its blocks are no longer active. */
	void finished(String requestId) {
		Active finished = byRequest.remove(requestId);
		if (finished != null) {
			release(finished);
		}
	}

	/** Forgets the instances that left {@code pool} and their requests. */
	Set<String> retainMembers(InstancePool pool) {
		Set<String> members = byInstance.retainMembers(pool);
		byRequest.values().removeIf(r -> !members.contains(r.instanceId()));
		return members;
	}

	/** Distinct blocks of the requests active on {@code instanceId}. */
	int distinct(String instanceId) {
		Blocks b = byInstance.find(instanceId);
		return b == null ? 0 : b.distinct();
	}

	/**
	 * Blocks of {@code chain} not active on {@code instanceId}. Every active request
	 * holds a whole chain from its first block, and a chained hash fixes every block
	 * before it, so the active blocks of a chain are a prefix of it.
	 */
	int missing(String instanceId, long[] chain) {
		Blocks b = byInstance.find(instanceId);
		return b == null ? chain.length : b.missing(chain);
	}

	private void release(Active r) {
		Blocks b = byInstance.find(r.instanceId());
		if (b != null) {
			b.remove(r.chain());
		}
	}

	private record Active(String instanceId, long[] chain) {
	}

	/** Reference-counted blocks of one instance's active requests. */
	private static final class Blocks {

		private final LongCounts refs = new LongCounts();

		synchronized void add(long[] chain) {
			for (long h : chain) {
				refs.increment(h);
			}
		}

		synchronized void remove(long[] chain) {
			for (long h : chain) {
				refs.decrement(h);
			}
		}

		synchronized int distinct() {
			return refs.size();
		}

		/** Binary search for the end of the active prefix of {@code chain}. */
		synchronized int missing(long[] chain) {
			int lo = 0;
			int hi = chain.length;
			while (lo < hi) {
				int mid = (lo + hi + 1) >>> 1;
				if (refs.contains(chain[mid - 1])) {
					lo = mid;
				}
				else {
					hi = mid - 1;
				}
			}
			return chain.length - lo;
		}

	}

}

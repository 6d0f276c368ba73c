package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * Baseline: each request to the next accepting instance in ring (id) order, the way the
 * stock load balancer spreads requests. The cursor counts requests, so instances that
 * stop accepting work do not hand their share to a single neighbour.
 */
public final class RoundRobinPolicy implements RoutingPolicy {

	/** The name it is registered under. */
	public static final String NAME = "round-robin";

	private final AtomicLong cursor = new AtomicLong();

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		List<InstanceState> accepting = new ArrayList<>(pool.size());
		for (InstanceState s : pool.instances()) {
			if (s.acceptsNewWork()) {
				accepting.add(s);
			}
		}
		if (accepting.isEmpty()) {
			return null;
		}
		InstanceState s = accepting.get((int) Math.floorMod(cursor.getAndIncrement(), (long) accepting.size()));
		return CandidateCost.of(pool, s, request.blocks()).decideWithoutModel(Reason.LOAD);
	}

	@Override
	public String toString() {
		return "RoundRobinPolicy";
	}

}

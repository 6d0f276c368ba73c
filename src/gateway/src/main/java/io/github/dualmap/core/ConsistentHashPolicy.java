package io.github.dualmap.core;

import org.jspecify.annotations.Nullable;

/**
 * Baseline: plain consistent hashing of the same adaptive routing key DualMap uses, on
 * ring 0 only. The key's home gets the request (affinity); when the home does not accept
 * work, the walk goes clockwise to the first instance that does (fallback). One home per
 * key means no load balancing beyond what the hash spreads.
 */
public final class ConsistentHashPolicy implements RoutingPolicy {

	/** Turns among equally loaded instances for requests routed by load alone. */
	private final TieBreaker loadTies = new TieBreaker();

	/** The name it is registered under. */
	public static final String NAME = "consistent-hash";

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		DualHashRing rings = pool.rings();
		PromptBlocks blocks = request.blocks();
		if (rings.isEmpty()) {
			return null;
		}
		if (blocks == null) {
			return LeastLoadedPolicy.leastPending(pool, request, this.loadTies);
		}
		long key = pool.routingKey(blocks);
		String home = rings.candidates(key).first();
		String id = rings.walk(0, key, candidate -> {
			InstanceState s = pool.instance(candidate);
			return s != null && s.acceptsNewWork();
		});
		InstanceState s = id == null ? null : pool.instance(id);
		if (s == null) {
			return null;
		}
		return CandidateCost.of(pool, s, blocks)
			.decideWithoutModel(id.equals(home) ? Reason.AFFINITY : Reason.FALLBACK);
	}

	@Override
	public String toString() {
		return "ConsistentHashPolicy";
	}

}

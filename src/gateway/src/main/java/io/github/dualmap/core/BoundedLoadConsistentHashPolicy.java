package io.github.dualmap.core;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Consistent hashing with bounded loads (Mirrokni, Thorup and Zadimoghaddam, SODA 2018):
 * the routing key walks ring 0 clockwise and takes the first instance whose in-flight
 * requests are below its capacity {@code ceil(c x (total + 1) x weight / sum of
 * weights)}, the mean load including this request scaled by the balance factor {@code c}.
 * The key is the adaptive prefix key DualMap uses, so the two differ only in how they
 * spill.
 */
public final class BoundedLoadConsistentHashPolicy implements RoutingPolicy {

	/** The registry name. */
	public static final String NAME = "bounded-load-ch";

	/**
	 * Default balance factor: no instance takes more than 25 % above the mean in-flight
	 * load.
	 */
	public static final double DEFAULT_BALANCE_FACTOR = 1.25;

	private final double balanceFactor;

	private final TieBreaker ties = new TieBreaker();

	public BoundedLoadConsistentHashPolicy() {
		this(DEFAULT_BALANCE_FACTOR);
	}

	/**
	 * @param balanceFactor c, at least 1: each instance may carry up to c times the mean
	 * load
	 */
	public BoundedLoadConsistentHashPolicy(double balanceFactor) {
		if (!(balanceFactor >= 1) || Double.isInfinite(balanceFactor)) {
			throw new IllegalArgumentException("balanceFactor must be >= 1 and finite but was " + balanceFactor);
		}
		this.balanceFactor = balanceFactor;
	}

	@Override
	public String name() {
		return NAME;
	}

	public double balanceFactor() {
		return balanceFactor;
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		List<InstanceState> accepting = pool.acceptingInstances();
		if (accepting.isEmpty()) {
			return null;
		}
		PromptBlocks blocks = request.blocks();
		if (blocks == null) {
			InstanceState least = ties.lowest(accepting, s -> s.inFlight() / s.weight());
			return Decision.of(least.id(), Reason.LOAD, request);
		}
		long total = 0;
		double weights = 0;
		Map<String, InstanceState> byId = new HashMap<>();
		for (InstanceState s : accepting) {
			total += s.inFlight();
			weights += s.weight();
			byId.put(s.id(), s);
		}
		double perWeight = balanceFactor * (total + 1) / weights;
		long key = pool.routingKey(blocks);
		DualHashRing rings = pool.rings();
		String home = rings.walk(0, key, byId::containsKey);
		String chosen = rings.walk(0, key, id -> {
			InstanceState s = byId.get(id);
			return s != null && s.inFlight() < Math.ceil(perWeight * s.weight());
		});
		if (chosen == null) {
			// Unreachable while capacities sum above the total load; guards a racing
			// membership change between the instance list and the rings.
			chosen = ties.lowest(accepting, s -> s.inFlight() / s.weight()).id();
		}
		InstanceState target = byId.get(chosen);
		// Reported, not used for the choice: the pool's own estimate of what is cached.
		int cached = target == null ? 0 : blocks.tokensFor(target.shadow().peekMatchedBlocks(blocks.chain()));
		Reason reason = chosen.equals(home) ? Reason.AFFINITY : Reason.LOAD;
		return new Decision(chosen, reason, cached, blocks.promptTokens() - cached, -1);
	}

}

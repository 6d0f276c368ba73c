package io.github.dualmap.core;

/**
 * One instance on the rings.
 *
 * @param id stable instance id (discovery instance id, or host:port)
 * @param weight relative capacity, above 0 and at most {@link #MAX_WEIGHT}; virtual nodes
 * scale with it
 */
public record RingMember(String id, double weight) {

	/**
	 * The largest weight. Weights are relative capacities, so a hundredfold spread
	 * between the smallest and the largest instance of a pool is already more than real
	 * hardware differs by; the bound keeps an instance's virtual nodes (weight times the
	 * virtual nodes per unit) small enough to build the rings at once.
	 */
	public static final double MAX_WEIGHT = 100;

	public RingMember {
		if (id.isEmpty()) {
			throw new IllegalArgumentException("instance id must not be empty");
		}
		if (!(weight > 0 && weight <= MAX_WEIGHT)) {
			throw new IllegalArgumentException(
					"weight of instance '" + id + "' must be > 0 and <= " + (int) MAX_WEIGHT + " but was " + weight);
		}
	}

}

package io.github.dualmap.core;

/**
 * One instance on the rings.
 *
 * @param id stable instance id (discovery instance id, or host:port)
 * @param weight relative capacity; virtual nodes scale with it
 */
public record RingMember(String id, double weight) {

	public RingMember {
		if (id.isEmpty()) {
			throw new IllegalArgumentException("instance id must not be empty");
		}
		if (!(weight > 0) || Double.isInfinite(weight)) {
			throw new IllegalArgumentException("weight of instance '" + id + "' must be > 0 but was " + weight);
		}
	}

}

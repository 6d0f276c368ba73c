package io.github.dualmap.sim;

/**
 * When each router of a run acts on its periodic schedules: its scrape of the engines'
 * metrics, and with replica sync its flush to the other replicas (released prefixes and
 * load; {@code sglang-cache-aware}'s mesh inserts too). Every gateway replica runs its
 * own scrape loops and its own flush timer, started with the replica (the scrape loops
 * shifted by a random share of the interval every time, {@code dualmap.scrape.jitter}),
 * so replicas read an engine, publish to each other and release on what they learned at
 * different moments. Only runs with several routers differ between the two.
 */
public enum RouterPhases {

	/**
	 * Router {@code r} of {@code R} acts {@code r / R} of an interval after router 0,
	 * which acts at the whole multiples of the interval: replicas whose schedules run
	 * apart, as independent replicas' schedules do.
	 */
	STAGGERED,

	/**
	 * Every router scrapes, and flushes, at the same instants, and every router then
	 * releases what it holds: a herd that independent replicas form only by chance.
	 */
	ALIGNED;

	/**
	 * How long after the whole multiples of {@code intervalNanos} router {@code router}
	 * of {@code routers} acts.
	 */
	long offsetNanos(int router, int routers, long intervalNanos) {
		if (router < 0 || router >= routers) {
			throw new IllegalArgumentException("router must be in [0, " + routers + ") but was " + router);
		}
		return this == ALIGNED ? 0 : intervalNanos * router / routers;
	}

	/**
	 * The first instant after {@code now} at which router {@code router} of
	 * {@code routers} acts on its schedule of period {@code intervalNanos}.
	 */
	long nextNanos(int router, int routers, long intervalNanos, long now) {
		long offset = offsetNanos(router, routers, intervalNanos);
		return offset + (Math.floorDiv(now - offset, intervalNanos) + 1) * intervalNanos;
	}

	/**
	 * The option value ({@code staggered}, {@code aligned}) of {@code --router-phases}.
	 */
	static RouterPhases fromCliName(String name) {
		return switch (name) {
			case "staggered" -> STAGGERED;
			case "aligned" -> ALIGNED;
			default ->
				throw new IllegalArgumentException("unknown --router-phases '" + name + "' (staggered or aligned)");
		};
	}

}

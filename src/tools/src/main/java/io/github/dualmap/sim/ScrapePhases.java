package io.github.dualmap.sim;

/**
 * When each router of a run scrapes the engines' metrics within the scrape interval.
 * Every gateway replica runs its own scrape loops, started with the replica and each
 * shifted by a random share of the interval every time ({@code dualmap.scrape.jitter}),
 * so replicas read an engine at different moments and act on what they read at different
 * moments. Only runs with several routers differ between the two.
 */
public enum ScrapePhases {

	/**
	 * Router {@code r} of {@code R} scrapes every engine {@code r / R} of an interval
	 * after router 0, which scrapes at the run's scrape ticks: replicas whose loops run
	 * apart, as independent replicas' loops do.
	 */
	STAGGERED,

	/**
	 * Every router scrapes every engine at the same instants and then releases what it
	 * holds: a herd that independent replicas form only by chance.
	 */
	ALIGNED;

	/**
	 * How long after the run's scrape ticks router {@code router} of {@code routers}
	 * scrapes, for an interval of {@code intervalNanos}.
	 */
	long offsetNanos(int router, int routers, long intervalNanos) {
		if (router < 0 || router >= routers) {
			throw new IllegalArgumentException("router must be in [0, " + routers + ") but was " + router);
		}
		return this == ALIGNED ? 0 : intervalNanos * router / routers;
	}

	/**
	 * The option value ({@code staggered}, {@code aligned}) of {@code --scrape-phases}.
	 */
	static ScrapePhases fromCliName(String name) {
		return switch (name) {
			case "staggered" -> STAGGERED;
			case "aligned" -> ALIGNED;
			default ->
				throw new IllegalArgumentException("unknown --scrape-phases '" + name + "' (staggered or aligned)");
		};
	}

}

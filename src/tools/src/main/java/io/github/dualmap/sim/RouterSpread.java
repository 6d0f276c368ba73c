package io.github.dualmap.sim;

/**
 * How the load balancer in front of a run's gateway replicas spreads the requests over
 * them. Only runs with several routers differ between the two.
 */
public enum RouterSpread {

	/**
	 * Request {@code i} to router {@code i mod R}: a round-robin (or least-request) load
	 * balancer, which sends a conversation's turns to whichever replica is next.
	 */
	REQUESTS,

	/**
	 * Every request of a conversation to one router, picked by a hash of the conversation
	 * ({@link Workload#sessions()}): a load balancer that hashes a session header the
	 * client sends (Envoy's {@code hash_policy} on a header, NGINX's
	 * {@code hash ... consistent}, ingress-nginx's {@code upstream-hash-by}).
	 */
	SESSIONS;

	/**
	 * The router each request of {@code workload} arrives at, of {@code routers}.
	 */
	int[] assign(Workload workload, int routers) {
		if (routers <= 0) {
			throw new IllegalArgumentException("routers must be > 0 but was " + routers);
		}
		int n = workload.size();
		int[] out = new int[n];
		if (this == REQUESTS || routers == 1) {
			for (int i = 0; i < n; i++) {
				out[i] = i % routers;
			}
			return out;
		}
		int[] sessions = workload.sessions();
		for (int i = 0; i < n; i++) {
			out[i] = routerOfSession(sessions[i], routers);
		}
		return out;
	}

	/**
	 * Router of the conversation whose first request is {@code session}: a fixed mix of
	 * its index (SplitMix64's finalizer), as a load balancer's hash of a session id
	 * spreads sessions evenly whatever their ids look like.
	 */
	static int routerOfSession(int session, int routers) {
		long z = session * 0x9E3779B97F4A7C15L;
		z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
		z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
		z ^= z >>> 31;
		return (int) Long.remainderUnsigned(z, routers);
	}

	/**
	 * The option value ({@code requests}, {@code sessions}) of {@code --router-spread}.
	 */
	static RouterSpread fromCliName(String name) {
		return switch (name) {
			case "requests" -> REQUESTS;
			case "sessions" -> SESSIONS;
			default ->
				throw new IllegalArgumentException("unknown --router-spread '" + name + "' (requests or sessions)");
		};
	}

}

package io.github.dualmap.core;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The registry of policies by name, as used by {@code dualmap.policy} and the simulator's
 * {@code --policies}. Each call to {@link #create} returns a new policy with its own
 * learned state.
 */
public final class RoutingPolicies {

	private static final Map<String, Function<SchedulerSettings, RoutingPolicy>> FACTORIES = new LinkedHashMap<>();

	static {
		// One line per policy; keep the DualMap family first, then baselines, then peers.
		for (DualMapPolicy.Variant v : DualMapPolicy.Variant.values()) {
			FACTORIES.put(v.policyName(), settings -> new DualMapPolicy(v, settings));
		}
		FACTORIES.put(RoundRobinPolicy.NAME, settings -> new RoundRobinPolicy());
		FACTORIES.put(LeastLoadedPolicy.NAME, settings -> new LeastLoadedPolicy());
		FACTORIES.put(ConsistentHashPolicy.NAME, settings -> new ConsistentHashPolicy());
		FACTORIES.put(BoundedLoadConsistentHashPolicy.NAME, s -> new BoundedLoadConsistentHashPolicy());
		FACTORIES.put(SglangCacheAwarePolicy.NAME, SglangCacheAwarePolicy::new);
		FACTORIES.put(SmgCacheAwarePolicy.NAME, SmgCacheAwarePolicy::new);
		FACTORIES.put(LlmdScorerPolicy.NAME, LlmdScorerPolicy::new);
		FACTORIES.put(LlmdTokenLoadPolicy.NAME, LlmdTokenLoadPolicy::new);
		FACTORIES.put(DynamoCostPolicy.NAME, s -> new DynamoCostPolicy());
		FACTORIES.put(PreblePolicy.NAME, s -> new PreblePolicy());
		FACTORIES.put(GlobalMinTtftPolicy.NAME, s -> new GlobalMinTtftPolicy());
	}

	private RoutingPolicies() {
	}

	/** Creates the policy called {@code name}. */
	public static RoutingPolicy create(String name, SchedulerSettings settings) {
		Function<SchedulerSettings, RoutingPolicy> f = FACTORIES.get(name);
		if (f == null) {
			throw new IllegalArgumentException("unknown policy '" + name + "'; known: " + String.join(", ", names()));
		}
		return f.apply(settings);
	}

	/** Every known name, in registration order. */
	public static List<String> names() {
		return List.copyOf(FACTORIES.keySet());
	}

	public static boolean exists(String name) {
		return FACTORIES.containsKey(name);
	}

	/**
	 * The dispatch queue settings a pool running {@code name} uses: {@code queue} as
	 * configured, except that a DualMap ablation without the hotspot step
	 * ({@code dualmap-no-rebalance}, {@code dualmap-cache-affinity},
	 * {@code dualmap-least-loaded}) moves nothing while it queues (no migration, so no
	 * idle pull either): the hotspot step of the policy and the queue's migration are one
	 * mechanism in the paper, rebalancing, and an ablation without one runs without the
	 * other. A policy that is not DualMap moves nothing either: the queue's moves go to a
	 * request's other candidate on DualMap's rings, which such a policy does not route
	 * by. The rescue at the wait bound is no migration and stays as configured. The
	 * gateway and the simulator apply the same rule, so a simulated row is what a pool
	 * with that policy runs.
	 */
	public static QueueSettings queueSettingsFor(String name, QueueSettings queue) {
		boolean rebalances = false;
		for (DualMapPolicy.Variant v : DualMapPolicy.Variant.values()) {
			rebalances |= v.policyName().equals(name) && v.rebalances();
		}
		return rebalances || queue.maxMigrations() == 0 ? queue : queue.toBuilder().maxMigrations(0).build();
	}

}

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
		FACTORIES.put("dualmap", DualMapPolicy::new);
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

}

package io.github.dualmap.sim;

import java.util.function.Function;

import io.github.dualmap.core.RoutingPolicies;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.SchedulerSettings;

/**
 * A policy under test: its name and how to make a fresh instance of it (every router of
 * every run gets its own, with its own learned state).
 */
public record PolicySpec(String name, Function<SchedulerSettings, RoutingPolicy> factory) {

	/** The registered policy called {@code name}. */
	public static PolicySpec named(String name) {
		if (!RoutingPolicies.exists(name)) {
			throw new IllegalArgumentException(
					"unknown policy '" + name + "'; known: " + String.join(", ", RoutingPolicies.names()));
		}
		return new PolicySpec(name, settings -> RoutingPolicies.create(name, settings));
	}

	public RoutingPolicy create(SchedulerSettings settings) {
		return factory.apply(settings);
	}

}

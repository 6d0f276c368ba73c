package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import io.github.dualmap.core.DispatchMode;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.RoutingPolicies;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.SchedulerSettings;
import org.jspecify.annotations.Nullable;

/**
 * A policy under test: its name, how to make a fresh instance of it (every router of
 * every run gets its own, with its own learned state) and how its requests reach the
 * engines.
 * <p>
 * With {@code queue} set, every router drives a
 * {@link io.github.dualmap.core.DispatchQueues} with those settings, as the gateway does
 * (late binding in {@link DispatchMode#QUEUE}, the same callbacks in
 * {@link DispatchMode#PASS_THROUGH}). Without it the request is dispatched the moment the
 * policy has chosen, which is what every peer's real counterpart does.
 *
 * @param name the row name in reports
 * @param factory makes a new policy object from the run's scheduler settings
 * @param queue dispatch queue settings, or {@code null} for immediate dispatch
 * @param tuning changes the run's scheduler settings for this row only (an ablation of a
 * setting rather than of the policy), or {@code null}
 */
public record PolicySpec(String name, Function<SchedulerSettings, RoutingPolicy> factory, @Nullable QueueSettings queue,
		@Nullable UnaryOperator<SchedulerSettings> tuning) {

	/** The row of the DualMap policy in pass-through mode. */
	public static final String DUALMAP_PASS_THROUGH = "dualmap-pass-through";

	/**
	 * The row of the DualMap policy with the routing key fixed at the minimum prefix
	 * depth: the adaptive depth of the hot-prefix table switched off.
	 */
	public static final String DUALMAP_FIXED_DEPTH = "dualmap-fixed-depth";

	/**
	 * The row of the DualMap policy behind the queue without idle pull: queued requests
	 * move only off hotspots, as before work stealing between the candidates.
	 */
	public static final String DUALMAP_NO_PULL = "dualmap-no-pull";

	/**
	 * Suffix of a peer's row behind the gateway's dispatch queue
	 * ({@code dynamo-cost+queue}), as a gateway runs it with {@code dualmap.policy} set
	 * to that peer: the peer chooses the instance, the request waits there for prefill
	 * room under the same wait bound and rescue as DualMap's, and nothing moves it
	 * ({@link RoutingPolicies#queueSettingsFor}). It measures what the queue's admission
	 * control gives a policy that is not DualMap.
	 */
	public static final String QUEUED_SUFFIX = "+queue";

	/** A policy dispatched immediately. */
	public PolicySpec(String name, Function<SchedulerSettings, RoutingPolicy> factory) {
		this(name, factory, null, null);
	}

	/** A policy with its own dispatch queue settings and the run's scheduler settings. */
	public PolicySpec(String name, Function<SchedulerSettings, RoutingPolicy> factory, @Nullable QueueSettings queue) {
		this(name, factory, queue, null);
	}

	/**
	 * The row called {@code name}: a registered policy, {@value #DUALMAP_PASS_THROUGH},
	 * {@value #DUALMAP_FIXED_DEPTH} or {@value #DUALMAP_NO_PULL}. The DualMap family runs
	 * behind the dispatch queues as the gateway default ({@code dispatch: queue});
	 * ablations that have no hotspot step run the queue without migration, so they ablate
	 * the rebalancer as a whole. Peers dispatch immediately, or behind the queue without
	 * moves when named with {@value #QUEUED_SUFFIX}.
	 */
	public static PolicySpec named(String name) {
		return named(name, QueueSettings.ofDefaults());
	}

	/**
	 * The row called {@code name}, its DualMap queue starting from {@code queue} (the
	 * gateway's {@code dualmap.dispatch.*}); each row still sets its own dispatch mode,
	 * idle pull and migration as its name says.
	 */
	public static PolicySpec named(String name, QueueSettings queue) {
		if (name.equals(DUALMAP_PASS_THROUGH)) {
			return new PolicySpec(name, settings -> RoutingPolicies.create("dualmap", settings),
					queue.toBuilder().mode(DispatchMode.PASS_THROUGH).build());
		}
		if (name.equals(DUALMAP_FIXED_DEPTH)) {
			return new PolicySpec(name, settings -> RoutingPolicies.create("dualmap", settings),
					queue.toBuilder().mode(DispatchMode.QUEUE).build(),
					settings -> settings.toBuilder().maxPrefixDepth(settings.minPrefixDepth()).build());
		}
		if (name.equals(DUALMAP_NO_PULL)) {
			return new PolicySpec(name, settings -> RoutingPolicies.create("dualmap", settings),
					queue.toBuilder().mode(DispatchMode.QUEUE).idlePull(false).build());
		}
		if (name.endsWith(QUEUED_SUFFIX)) {
			String peer = name.substring(0, name.length() - QUEUED_SUFFIX.length());
			if (!RoutingPolicies.exists(peer) || peer.startsWith("dualmap")) {
				throw new IllegalArgumentException("'" + name + "': " + QUEUED_SUFFIX
						+ " puts a peer policy behind the dispatch queue; known peers: " + String.join(", ",
								RoutingPolicies.names().stream().filter(n -> !n.startsWith("dualmap")).toList()));
			}
			return new PolicySpec(name, settings -> RoutingPolicies.create(peer, settings),
					RoutingPolicies.queueSettingsFor(peer, queue.toBuilder().mode(DispatchMode.QUEUE).build()));
		}
		if (!RoutingPolicies.exists(name)) {
			throw new IllegalArgumentException("unknown policy '" + name + "'; known: " + String.join(", ", names()));
		}
		Function<SchedulerSettings, RoutingPolicy> factory = settings -> RoutingPolicies.create(name, settings);
		if (!name.startsWith("dualmap")) {
			return new PolicySpec(name, factory);
		}
		return new PolicySpec(name, factory,
				RoutingPolicies.queueSettingsFor(name, queue.toBuilder().mode(DispatchMode.QUEUE).build()));
	}

	/**
	 * Every row name {@link #named} knows, registered policies plus the simulator's own.
	 */
	public static List<String> names() {
		List<String> names = new ArrayList<>(RoutingPolicies.names());
		names.add(names.indexOf("dualmap") + 1, DUALMAP_PASS_THROUGH);
		names.add(names.indexOf(DUALMAP_PASS_THROUGH) + 1, DUALMAP_FIXED_DEPTH);
		names.add(names.indexOf(DUALMAP_FIXED_DEPTH) + 1, DUALMAP_NO_PULL);
		return names;
	}

	public RoutingPolicy create(SchedulerSettings settings) {
		return factory.apply(settings);
	}

	/** The scheduler settings this row runs with, given the run's. */
	public SchedulerSettings settingsFor(SchedulerSettings run) {
		return tuning == null ? run : tuning.apply(run);
	}

	/** How this row's requests reach the engines, for reports. */
	public String dispatchLabel() {
		if (queue == null) {
			return "immediate";
		}
		return queue.mode() == DispatchMode.PASS_THROUGH ? "pass-through"
				: queue.maxMigrations() == 0 ? "queue, no migration" : "queue";
	}

}

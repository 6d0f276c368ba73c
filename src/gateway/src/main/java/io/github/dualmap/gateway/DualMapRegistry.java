package io.github.dualmap.gateway;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiFunction;
import java.util.function.Function;

import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.NanoClock;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.RoutingPolicies;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.SchedulerSettings;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.web.server.ServerWebExchange;

/**
 * The gateway's DualMap state: one {@link ServicePool} (pool, policy, dispatch queues,
 * breakers) per service id in {@code dualmap.services}, created at startup, and the
 * listeners that observe decisions. The actuator reads everything it shows from here and
 * drains instances through it.
 */
public final class DualMapRegistry {

	private final SchedulerSettings settings;

	private final String policyName;

	private final QueueSettings queueSettings;

	private final Map<String, ServicePool> pools;

	private final List<DualMapListener> listeners = new CopyOnWriteArrayList<>();

	/**
	 * With settings of each service's own ({@code dualmap.pools.<service>.*}), policies
	 * from {@link RoutingPolicies}.
	 * @param defaults the global settings, reported by {@link #settings()},
	 * {@link #policyName()} and {@link #queueSettings()}
	 * @param settingsOf the settings of one service's pool
	 */
	public DualMapRegistry(PoolSettings defaults, Collection<String> serviceIds,
			Function<String, PoolSettings> settingsOf, String weightMetadataKey, CircuitBreakerConfig breakerConfig,
			NanoClock clock) {
		this(defaults, serviceIds, settingsOf, weightMetadataKey, breakerConfig, clock, RoutingPolicies::create);
	}

	private DualMapRegistry(PoolSettings defaults, Collection<String> serviceIds,
			Function<String, PoolSettings> settingsOf, String weightMetadataKey, CircuitBreakerConfig breakerConfig,
			NanoClock clock, BiFunction<String, SchedulerSettings, RoutingPolicy> policies) {
		this.settings = defaults.settings();
		this.policyName = defaults.policyName();
		this.queueSettings = defaults.queueSettings();
		// In configuration order: the actuator and the ModelList filter list pools that
		// way.
		Map<String, ServicePool> pools = new LinkedHashMap<>();
		for (String id : serviceIds) {
			pools.computeIfAbsent(id, k -> {
				PoolSettings own = settingsOf.apply(id);
				InstancePool pool = new InstancePool(id, own.settings(), clock);
				return new ServicePool(id, pool, policies.apply(own.policyName(), own.settings()),
						RoutingPolicies.queueSettingsFor(own.policyName(), own.queueSettings()),
						new InstanceBreakers(pool, breakerConfig), weightMetadataKey, this.listeners);
			});
		}
		this.pools = Collections.unmodifiableMap(pools);
	}

	/**
	 * A builder whose defaults are those of an unconfigured gateway: policy
	 * {@code dualmap}, default scheduler, queue and breaker settings, weight metadata key
	 * {@code dualmap.weight}, the system clock, no services.
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * What one pool runs with: its routing policy by name, scheduler settings (the
	 * default TTFT SLO among them) and dispatch queue settings. The scheduler settings
	 * are those for the queue's dispatch mode
	 * ({@link SchedulerSettings#forDispatchMode}).
	 */
	public record PoolSettings(String policyName, SchedulerSettings settings, QueueSettings queueSettings) {

		public PoolSettings {
			settings = settings.forDispatchMode(queueSettings.mode());
		}

	}

	/**
	 * How long every pool keeps its last membership while discovery lists no instance
	 * ({@link ServicePool#emptyListGrace}).
	 */
	public void emptyListGrace(Duration grace) {
		this.pools.values().forEach(p -> p.emptyListGrace(grace));
	}

	/** The service {@code serviceId}, or {@code null} when DualMap does not route it. */
	public @Nullable ServicePool service(String serviceId) {
		return this.pools.get(serviceId);
	}

	/** Every routed service by id, in the order of {@code dualmap.services}. */
	public Map<String, ServicePool> services() {
		return this.pools;
	}

	/**
	 * The service of the route the exchange matched, when that route's URI is
	 * {@code lb://<a DualMap service>}.
	 */
	public @Nullable ServicePool serviceOf(ServerWebExchange exchange) {
		Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
		if (route == null) {
			return null;
		}
		URI uri = route.getUri();
		return "lb".equalsIgnoreCase(uri.getScheme()) && uri.getHost() != null ? this.pools.get(uri.getHost()) : null;
	}

	/**
	 * The global scheduler settings; a service's own are
	 * {@code instancePool().settings()} (they differ in the default TTFT SLO when
	 * {@code dualmap.pools.<service>.slo.ttft} is set).
	 */
	public SchedulerSettings settings() {
		return this.settings;
	}

	/**
	 * The global {@code dualmap.policy}; a pool's own is
	 * {@link ServicePool#policyName()}.
	 */
	public String policyName() {
		return this.policyName;
	}

	/**
	 * The global dispatch queue settings; a pool's own are {@code queues().settings()}.
	 */
	public QueueSettings queueSettings() {
		return this.queueSettings;
	}

	/**
	 * Drains {@code instanceId} in every pool it is a member of (see
	 * {@link ServicePool#drain}).
	 * @return whether any pool has it
	 */
	public boolean drain(String instanceId) {
		boolean found = false;
		for (ServicePool p : this.pools.values()) {
			found |= p.drain(instanceId);
		}
		return found;
	}

	/**
	 * Lets {@code instanceId} take new requests again in every pool it is a member of.
	 * @return whether any pool has it
	 */
	public boolean undrain(String instanceId) {
		boolean found = false;
		for (ServicePool p : this.pools.values()) {
			found |= p.undrain(instanceId);
		}
		return found;
	}

	/**
	 * Whether {@code instanceId} has nothing queued and nothing in flight in any pool
	 * (true for an unknown instance).
	 */
	public boolean isIdle(String instanceId) {
		return this.pools.values().stream().allMatch(p -> p.isIdle(instanceId));
	}

	/** Adds a listener of decisions, TTFTs, endings, membership and scrape failures. */
	public void addListener(DualMapListener listener) {
		this.listeners.add(listener);
	}

	public void removeListener(DualMapListener listener) {
		this.listeners.remove(listener);
	}

	/** Total scrape failures per service and instance. */
	public Map<String, Map<String, Long>> scrapeFailures() {
		return this.pools.values()
			.stream()
			.collect(
					java.util.stream.Collectors.toUnmodifiableMap(ServicePool::serviceId, ServicePool::scrapeFailures));
	}

	/**
	 * Builds a {@link DualMapRegistry}: the services to route, the settings every pool
	 * shares, each pool's own where it differs, and where policies come from.
	 */
	public static final class Builder {

		private String policyName = "dualmap";

		private SchedulerSettings settings = SchedulerSettings.ofDefaults();

		private QueueSettings queueSettings = QueueSettings.ofDefaults();

		private final Map<String, PoolSettings> poolSettings = new LinkedHashMap<>();

		private final List<String> serviceIds = new ArrayList<>();

		private String weightMetadataKey = "dualmap.weight";

		private CircuitBreakerConfig breakerConfig = CircuitBreakerConfig.ofDefaults();

		private NanoClock clock = NanoClock.SYSTEM;

		private @Nullable BiFunction<String, SchedulerSettings, RoutingPolicy> policies;

		private Builder() {
		}

		/**
		 * The services to route, one pool each, in this order (added to earlier ones).
		 */
		public Builder services(String... serviceIds) {
			return services(List.of(serviceIds));
		}

		/**
		 * The services to route, one pool each, in this order (added to earlier ones).
		 */
		public Builder services(Collection<String> serviceIds) {
			this.serviceIds.addAll(serviceIds);
			return this;
		}

		/** The routing policy of every pool without settings of its own. */
		public Builder policy(String policyName) {
			this.policyName = policyName;
			return this;
		}

		/** The scheduler settings of every pool without settings of its own. */
		public Builder settings(SchedulerSettings settings) {
			this.settings = settings;
			return this;
		}

		/** The dispatch queue settings of every pool without settings of its own. */
		public Builder queueSettings(QueueSettings queueSettings) {
			this.queueSettings = queueSettings;
			return this;
		}

		/**
		 * What the pool of {@code serviceId} runs with instead of the shared settings
		 * ({@code dualmap.pools.<service>.*}); the service must also be one of
		 * {@link #services}.
		 */
		public Builder serviceSettings(String serviceId, PoolSettings own) {
			this.poolSettings.put(serviceId, own);
			return this;
		}

		/** The instance metadata key that carries an instance's weight. */
		public Builder weightMetadataKey(String weightMetadataKey) {
			this.weightMetadataKey = weightMetadataKey;
			return this;
		}

		/** The circuit breaker settings of every instance. */
		public Builder breakers(CircuitBreakerConfig breakerConfig) {
			this.breakerConfig = breakerConfig;
			return this;
		}

		public Builder clock(NanoClock clock) {
			this.clock = clock;
			return this;
		}

		/**
		 * Where each pool's policy comes from, by policy name, instead of
		 * {@link RoutingPolicies} (a wrapped or custom policy).
		 */
		public Builder policies(Function<String, RoutingPolicy> policies) {
			this.policies = (name, s) -> policies.apply(name);
			return this;
		}

		/**
		 * The registry.
		 * @throws IllegalArgumentException when settings were given for a service that is
		 * not one of {@link #services}
		 */
		public DualMapRegistry build() {
			for (String id : this.poolSettings.keySet()) {
				if (!this.serviceIds.contains(id)) {
					throw new IllegalArgumentException(
							"settings given for service '" + id + "', which is not one of " + this.serviceIds);
				}
			}
			PoolSettings defaults = new PoolSettings(this.policyName, this.settings, this.queueSettings);
			Map<String, PoolSettings> own = Map.copyOf(this.poolSettings);
			return new DualMapRegistry(defaults, List.copyOf(this.serviceIds), id -> own.getOrDefault(id, defaults),
					this.weightMetadataKey, this.breakerConfig, this.clock,
					(this.policies != null) ? this.policies : RoutingPolicies::create);
		}

	}

}

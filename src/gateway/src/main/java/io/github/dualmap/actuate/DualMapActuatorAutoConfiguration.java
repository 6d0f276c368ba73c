package io.github.dualmap.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.autoconfigure.DualMapAutoConfiguration;
import io.github.dualmap.autoconfigure.CoreSettingsMapper;
import io.github.dualmap.autoconfigure.DualMapProperties;
import io.github.dualmap.autoconfigure.ReplicasProperties;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.HeaderReadTimeout;
import io.github.dualmap.gateway.RequestBuffers;
import io.github.dualmap.gateway.StoredResponses;
import io.github.dualmap.replica.ReplicaPublisher;
import io.github.dualmap.replica.ReplicaSync;
import io.github.dualmap.tenant.FairnessAccounts;
import io.github.dualmap.tenant.TokenBudgets;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.config.MeterFilter;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * The {@code dualmap} actuator endpoint (when it is available: access not {@code none}
 * and exposed) and the {@code dualmap.*} meters, for a context where
 * {@link DualMapAutoConfiguration} created a {@link DualMapRegistry}.
 */
@AutoConfiguration(after = DualMapAutoConfiguration.class)
@ConditionalOnBean(DualMapRegistry.class)
public class DualMapActuatorAutoConfiguration {

	/**
	 * Spring Security's web support, whose presence puts DualMap's operations behind
	 * roles.
	 */
	static final String SPRING_SECURITY_WEB = "org.springframework.security.web.server.WebFilterChainProxy";

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint
	DualMapEndpoint dualMapEndpoint(DualMapRegistry registry, ObjectProvider<ReplicaSync> replicaSync,
			ObjectProvider<ReplicaPublisher> replicaPublisher, ObjectProvider<RequestBuffers> buffers,
			ObjectProvider<TokenBudgets> budgets, ObjectProvider<FairnessAccounts> fairness) {
		return new DualMapEndpoint(registry, replicaSync.getIfAvailable(), replicaPublisher.getIfAvailable(),
				buffers.getIfAvailable(), budgets.getIfAvailable(), fairness.getIfAvailable());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint(endpoint = DualMapEndpoint.class, exposure = EndpointExposure.WEB)
	DualMapWebEndpointExtension dualMapWebEndpointExtension(DualMapEndpoint endpoint) {
		return new DualMapWebEndpointExtension(endpoint);
	}

	@Bean
	@ConditionalOnAvailableEndpoint(endpoint = DualMapEndpoint.class, exposure = EndpointExposure.WEB)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	DrainBodyErrorWebExceptionHandler dualMapDrainBodyErrorWebExceptionHandler(
			ObjectProvider<PathMappedEndpoints> endpoints) {
		EndpointId id = EndpointId.of(DualMapEndpoint.ID);
		return new DrainBodyErrorWebExceptionHandler(() -> {
			PathMappedEndpoints mapped = endpoints.getIfAvailable();
			return mapped != null ? mapped.getPath(id) : null;
		});
	}

	/**
	 * Where Spring Security's web support is present: the drain operation, and the
	 * replica-sync path when dualmap.security.replica-role is set, need a role.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = SPRING_SECURITY_WEB)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	static class Access {

		@Bean
		DualMapAccessFilter dualMapAccessFilter(DualMapProperties properties,
				ObjectProvider<PathMappedEndpoints> endpoints) {
			EndpointId id = EndpointId.of(DualMapEndpoint.ID);
			ReplicasProperties r = properties.getReplicas();
			return new DualMapAccessFilter(() -> {
				PathMappedEndpoints mapped = endpoints.getIfAvailable();
				return mapped != null ? mapped.getPath(id) : null;
			}, properties.getSecurity().getRole(), r.isEnabled() ? r.getPath() : null,
					properties.getSecurity().getReplicaRole());
		}

	}

	/**
	 * Warnings at start-up about what the client-facing port shows or lets clients do:
	 * without Spring Security's web support, the {@code dualmap} endpoint and the
	 * replica-sync path there; in every case the {@code x-dualmap-*} headers and plain
	 * http replica peers.
	 */
	@Bean
	DualMapExposureWarnings dualMapExposureWarnings(DualMapProperties properties, Environment environment,
			ObjectProvider<DualMapWebEndpointExtension> webEndpoint, ObjectProvider<EndpointAccessResolver> access) {
		boolean secured = ClassUtils.isPresent(SPRING_SECURITY_WEB, getClass().getClassLoader());
		boolean onClientPort = !secured && webEndpoint.getIfAvailable() != null
				&& ManagementPortType.get(environment) == ManagementPortType.SAME;
		EndpointAccessResolver resolver = access.getIfAvailable();
		boolean writable = resolver != null && resolver.accessFor(EndpointId.of(DualMapEndpoint.ID),
				org.springframework.boot.actuate.endpoint.Access.READ_ONLY) == org.springframework.boot.actuate.endpoint.Access.UNRESTRICTED;
		DualMapExposureWarnings.Endpoint endpoint = !onClientPort ? DualMapExposureWarnings.Endpoint.NONE
				: writable ? DualMapExposureWarnings.Endpoint.DRAIN : DualMapExposureWarnings.Endpoint.READ;
		ReplicasProperties r = properties.getReplicas();
		return new DualMapExposureWarnings(endpoint, properties.getHeaders().isEnabled(),
				r.isEnabled() && !secured ? r.getPath() : null, r.isEnabled() ? r.getPeers() : List.of());
	}

	/** Meters only where Micrometer is on the classpath. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterBinder.class)
	static class Meters {

		@Bean
		@ConditionalOnMissingBean
		DualMapMeters dualMapMeters(DualMapRegistry registry, DualMapProperties properties) {
			List<Duration> buckets = new ArrayList<>(properties.getMetrics().getLatencyBuckets());
			buckets.addAll(new CoreSettingsMapper(properties).sloTtfts());
			return new DualMapMeters(registry, properties.getSlo().getClasses().keySet(), buckets);
		}

		/**
		 * Descriptions of the meters Micrometer's observation handler makes of the
		 * {@code dualmap.dispatch} observation, which has none of its own.
		 */
		@Bean
		MeterFilter dualMapDispatchMeterDescriptions() {
			return DualMapMeters.dispatchDescriptions();
		}

		@Bean
		@ConditionalOnBean(ReplicaSync.class)
		@ConditionalOnMissingBean
		ReplicaSyncMeters dualMapReplicaSyncMeters(ReplicaSync sync, ReplicaPublisher publisher) {
			return new ReplicaSyncMeters(sync, publisher);
		}

		@Bean
		@ConditionalOnBean(StoredResponses.class)
		@ConditionalOnMissingBean
		StoredResponsesMeters dualMapStoredResponsesMeters(StoredResponses stored) {
			return new StoredResponsesMeters(stored);
		}

		@Bean
		@ConditionalOnBean(RequestBuffers.class)
		@ConditionalOnMissingBean
		RequestBuffersMeters dualMapRequestBuffersMeters(RequestBuffers buffers) {
			return new RequestBuffersMeters(buffers);
		}

		@Bean
		@ConditionalOnBean(HeaderReadTimeout.Expirations.class)
		MeterBinder dualMapHeaderReadTimeoutMeters(HeaderReadTimeout.Expirations expirations) {
			return meters -> FunctionCounter
				.builder("dualmap.server.header.read.timeouts", expirations, HeaderReadTimeout.Expirations::count)
				.description("Connections answered 408 and closed because a request head took longer than "
						+ "dualmap.server.header-read-timeout to arrive")
				.register(meters);
		}

	}

	/**
	 * The pools' health ({@code dualMap}) where Spring Boot's health support is on the
	 * classpath; off with {@code management.health.dualmap.enabled=false}. In no probe
	 * group unless the application adds it to one.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(HealthIndicator.class)
	@ConditionalOnEnabledHealthIndicator("dualmap")
	static class PoolsHealth {

		@Bean
		@ConditionalOnMissingBean(name = "dualMapHealthIndicator")
		DualMapHealthIndicator dualMapHealthIndicator(DualMapRegistry registry) {
			return new DualMapHealthIndicator(registry);
		}

	}

	/**
	 * Replica sync's health ({@code dualMapReplicas}) where Spring Boot's health support
	 * is on the classpath; off with
	 * {@code management.health.dualmap-replicas.enabled=false}.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(HealthIndicator.class)
	@ConditionalOnBean(ReplicaSync.class)
	@ConditionalOnEnabledHealthIndicator("dualmap-replicas")
	static class Health {

		@Bean
		@ConditionalOnMissingBean(name = "dualMapReplicasHealthIndicator")
		ReplicaSyncHealthIndicator dualMapReplicasHealthIndicator(ReplicaSync sync, ReplicaPublisher publisher) {
			return new ReplicaSyncHealthIndicator(sync, publisher);
		}

	}

}

package io.github.dualmap.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.dualmap.core.NanoClock;
import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.gateway.BodyLimits;
import io.github.dualmap.gateway.BodyTooLargeFilter;
import io.github.dualmap.gateway.ConnectFailoverFilter;
import io.github.dualmap.gateway.DiscoveryMembership;
import io.github.dualmap.gateway.DispatchAccountingFilter;
import io.github.dualmap.gateway.DispatchTicker;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.DualMapStartupReport;
import io.github.dualmap.gateway.EngineScraping;
import io.github.dualmap.gateway.HeaderReadTimeout;
import io.github.dualmap.gateway.Http10Responses;
import io.github.dualmap.gateway.KeepAliveReads;
import io.github.dualmap.gateway.ModelListGatewayFilterFactory;
import io.github.dualmap.gateway.ModelRoutePredicateFactory;
import io.github.dualmap.gateway.OpenAiErrorWebExceptionHandler;
import io.github.dualmap.gateway.PromptRoutingFilter;
import io.github.dualmap.gateway.RequestBuffers;
import io.github.dualmap.gateway.RequestIdFilter;
import io.github.dualmap.gateway.StoredResponses;
import io.github.dualmap.gateway.SloResolver;
import io.github.dualmap.prompt.PromptParser;
import io.github.dualmap.replica.ReplicaPeers;
import io.github.dualmap.replica.ReplicaPublisher;
import io.github.dualmap.replica.ReplicaSync;
import io.github.dualmap.replica.ReplicaSyncHandler;
import io.github.dualmap.stats.MetricsScraper;
import io.github.dualmap.stats.ScrapeSettings;
import io.github.dualmap.tenant.TenantProperties;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import javax.net.ssl.SSLException;
import reactor.netty.http.client.HttpClient;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.ConfigurationPropertiesBinding;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import org.springframework.cloud.gateway.config.GatewayAutoConfiguration;
import org.springframework.cloud.gateway.discovery.DiscoveryLocatorProperties;
import org.springframework.cloud.gateway.config.GatewayReactiveLoadBalancerClientAutoConfiguration;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.convert.converter.GenericConverter;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.WebFilter;

/**
 * Plugs DualMap into Spring Cloud Gateway: the registry of pools, the body, failover and
 * accounting filters, the dispatch queue ticker, membership followed from discovery at
 * startup, engine scraping, and a DualMap load balancer for every service id in
 * {@code dualmap.services} (registered by {@link DualMapLoadBalancerClientsRegistrar}).
 */
@AutoConfiguration(after = { GatewayAutoConfiguration.class, GatewayReactiveLoadBalancerClientAutoConfiguration.class,
		LoadBalancerAutoConfiguration.class })
@ConditionalOnClass(GlobalFilter.class)
@ConditionalOnSwitch(value = "dualmap.enabled", matchIfMissing = true)
// TenantProperties with tenants off too, so that its values are checked at startup.
@EnableConfigurationProperties({ DualMapProperties.class, TenantProperties.class })
@Import(DualMapLoadBalancerClientsRegistrar.class)
public class DualMapAutoConfiguration {

	@Bean
	@ConfigurationPropertiesBinding
	static GenericConverter dualMapEnumValues() {
		return new EnumValues();
	}

	@Bean
	static SharedPrefixBindHandlerAdvisor dualMapSharedPrefixBindHandlerAdvisor(
			ConfigurableListableBeanFactory beanFactory) {
		return new SharedPrefixBindHandlerAdvisor(beanFactory);
	}

	@Bean
	@ConditionalOnMissingBean
	DualMapRegistry dualMapRegistry(DualMapProperties properties) {
		BreakerProperties b = properties.getBreaker();
		CircuitBreakerConfig breakers = CircuitBreakerConfig.custom()
			.failureRateThreshold(b.getFailureRateThreshold())
			.slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
			.slidingWindowSize(b.getSlidingWindowSize())
			.minimumNumberOfCalls(b.getMinimumNumberOfCalls())
			.waitDurationInOpenState(b.getWaitDurationInOpenState())
			.permittedNumberOfCallsInHalfOpenState(b.getPermittedNumberOfCallsInHalfOpenState())
			.build();
		CoreSettingsMapper settings = new CoreSettingsMapper(properties);
		DualMapRegistry registry = new DualMapRegistry(
				new DualMapRegistry.PoolSettings(
						properties.getPolicy(), settings.schedulerSettings(), settings.queueSettings()),
				properties.getServices(),
				id -> new DualMapRegistry.PoolSettings(settings.policyOf(id), settings.schedulerSettings(id),
						settings.queueSettings(id)),
				properties.getRing().getWeightMetadataKey(), breakers, NanoClock.SYSTEM);
		registry.emptyListGrace(properties.getDiscovery().getEmptyListGrace());
		return registry;
	}

	@Bean
	@ConditionalOnBean(RouteLocator.class)
	DualMapStartupReport dualMapStartupReport(DualMapRegistry registry, RouteLocator routes,
			ObjectProvider<DiscoveryLocatorProperties> discoveryLocator) {
		DiscoveryLocatorProperties locator = discoveryLocator.getIfAvailable();
		return new DualMapStartupReport(registry, routes, (locator != null && locator.isEnabled())
				? DualMapStartupReport.discoveryRoutes(locator.getRouteIdPrefix()) : null);
	}

	@Bean
	@ConditionalOnMissingBean
	DispatchTicker dualMapDispatchTicker(DualMapRegistry registry, DualMapProperties properties) {
		return new DispatchTicker(registry, properties.getDispatch().getTickInterval());
	}

	@Bean
	@ConditionalOnMissingBean
	DiscoveryMembership dualMapDiscoveryMembership(DualMapRegistry registry, DualMapProperties properties,
			ObjectProvider<LoadBalancerClientFactory> clientFactory) {
		// Resolved at start, when the load balancer child contexts can be created.
		return new DiscoveryMembership(registry, serviceId -> {
			LoadBalancerClientFactory factory = clientFactory.getIfAvailable();
			return factory == null ? null : factory.getInstance(serviceId, ServiceInstanceListSupplier.class);
		}, properties.getDiscovery().getRefreshInterval());
	}

	@Bean
	@ConditionalOnMissingBean
	PromptParser dualMapPromptParser(DualMapProperties properties) {
		PromptProperties p = properties.getPrompt();
		// A mapper of our own: the application's may be tuned for its own payloads.
		return new PromptParser(new PrefixHasher(p.getBlockChars(), p.getCharsPerToken(), p.getBlockTokens()),
				JsonMapper.builder().build(), p.getMaxNestingDepth(), p.getMaxJsonTokens(),
				// A string as long as the body may be (a large image as a data URL).
				(int) properties.getMaxBodySize().toBytes());
	}

	@Bean
	@ConditionalOnMissingBean
	SloResolver dualMapSloResolver(DualMapProperties properties) {
		Map<String, Duration> classes = new LinkedHashMap<>();
		Map<String, Duration> maxWaits = new LinkedHashMap<>();
		Map<String, Integer> priorities = new LinkedHashMap<>();
		properties.getSlo().getClasses().forEach((name, c) -> {
			Duration ttft = c.getTtft();
			if (ttft != null) {
				classes.put(name, ttft);
				if (c.getMaxWait() != null) {
					maxWaits.put(name, c.getMaxWait());
				}
				if (c.getPriority() != null) {
					priorities.put(name, c.getPriority());
				}
			}
		});
		return new SloResolver(properties.getSlo().getTtft(), properties.getSlo().getClassHeader(), classes, maxWaits,
				priorities);
	}

	@Bean
	@ConditionalOnSwitch(value = "dualmap.stored-responses.enabled", matchIfMissing = true)
	StoredResponses dualMapStoredResponses(DualMapRegistry registry, DualMapProperties properties) {
		StoredResponsesProperties s = properties.getStoredResponses();
		StoredResponses stored = new StoredResponses(s.getMaxEntries(), s.getTtl());
		registry.addListener(stored);
		return stored;
	}

	@Bean
	@ConditionalOnMissingBean
	RequestBuffers dualMapRequestBuffers(DualMapProperties properties) {
		return new RequestBuffers(properties.maxBufferedBytes(Runtime.getRuntime().maxMemory()));
	}

	@Bean
	WebFilter dualMapRequestBuffersWebFilter(RequestBuffers buffers) {
		return buffers.webFilter();
	}

	@Bean
	PromptRoutingFilter dualMapPromptRoutingFilter(DualMapRegistry registry, PromptParser parser, SloResolver slos,
			DualMapProperties properties, ObjectProvider<StoredResponses> stored, RequestBuffers buffers,
			Environment environment) {
		// Token budgets (DualMapTenantsAutoConfiguration) read what the filter decodes.
		boolean tokenBudgets = environment.getProperty(TenantProperties.PREFIX + ".enabled", Boolean.class, false);
		return new PromptRoutingFilter(registry, parser, slos, bodyLimits(properties, buffers), stored.getIfAvailable(),
				tokenBudgets);
	}

	@Bean
	@ConditionalOnMissingBean
	ModelRoutePredicateFactory modelRoutePredicateFactory(PromptParser parser, DualMapProperties properties,
			RequestBuffers buffers) {
		return new ModelRoutePredicateFactory(parser, bodyLimits(properties, buffers));
	}

	private static BodyLimits bodyLimits(DualMapProperties properties, RequestBuffers buffers) {
		return new BodyLimits((int) properties.getMaxBodySize().toBytes(), buffers, properties.getBodyReadTimeout());
	}

	@Bean
	@ConditionalOnMissingBean
	ModelListGatewayFilterFactory modelListGatewayFilterFactory(DualMapRegistry registry, DualMapProperties properties,
			ObjectProvider<ReactiveDiscoveryClient> discovery) {
		ModelListProperties m = properties.getModelList();
		// A client of its own: the application's builder may be load-balanced (instances
		// are asked at their addresses) and must not get this client's settings.
		return new ModelListGatewayFilterFactory(registry, WebClient.builder(), discovery.getIfAvailable(),
				new ModelListGatewayFilterFactory.Defaults(m.getPath(), m.getTimeout(), m.getCacheTtl(),
						m.getOtherServices()));
	}

	@Bean
	OpenAiErrorWebExceptionHandler dualMapOpenAiErrorWebExceptionHandler(DualMapProperties properties) {
		RequestIdProperties ids = properties.getRequestId();
		return new OpenAiErrorWebExceptionHandler(ids.isEnabled() ? ids.getHeader() : null);
	}

	@Bean
	BodyTooLargeFilter dualMapBodyTooLargeFilter() {
		return new BodyTooLargeFilter();
	}

	@Bean
	@ConditionalOnSwitch(value = "dualmap.request-id.enabled", matchIfMissing = true)
	RequestIdFilter dualMapRequestIdFilter(DualMapRegistry registry, DualMapProperties properties) {
		return new RequestIdFilter(registry, properties.getRequestId().getHeader());
	}

	@Bean
	ConnectFailoverFilter dualMapConnectFailoverFilter(DualMapRegistry registry, DualMapProperties properties) {
		return new ConnectFailoverFilter(registry, properties.getRetry().getStatuses());
	}

	@Bean
	DispatchAccountingFilter dualMapDispatchAccountingFilter(DualMapRegistry registry, DualMapProperties properties) {
		return new DispatchAccountingFilter(registry, properties.getHeaders().isEnabled(),
				properties.getResponseIdleTimeout());
	}

	@Bean
	@ConditionalOnSwitch(value = "dualmap.scrape.enabled", matchIfMissing = true)
	EngineScraping dualMapEngineScraping(DualMapRegistry registry, DualMapProperties properties) {
		ScrapeProperties s = properties.getScrape();
		ScrapeSettings settings = new ScrapeSettings(s.getInterval(), s.getTimeout(), s.getJitter(),
				(int) Math.min(Integer.MAX_VALUE, s.getMaxBodySize().toBytes()));
		return new EngineScraping(registry, listener -> new MetricsScraper(settings, NanoClock.SYSTEM, listener),
				s::pathFor, s.getPathMetadataKey(), s.unresponsiveAfter());
	}

	/**
	 * The gateway's own HTTP server re-arms reads after each response (see
	 * {@link KeepAliveReads}), unless dualmap.server.keep-alive-reads=false.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(NettyServerCustomizer.class)
	@ConditionalOnSwitch(value = "dualmap.server.keep-alive-reads", matchIfMissing = true)
	static class KeepAliveReadsConfiguration {

		@Bean
		NettyServerCustomizer dualMapKeepAliveReads() {
			return KeepAliveReads::install;
		}

	}

	/**
	 * The gateway's own HTTP server ends a response of unknown length to an HTTP/1.0
	 * request by closing the connection, not in chunks (see {@link Http10Responses}),
	 * unless dualmap.server.http10-close-delimited=false.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(NettyServerCustomizer.class)
	@ConditionalOnSwitch(value = "dualmap.server.http10-close-delimited", matchIfMissing = true)
	static class Http10ResponsesConfiguration {

		@Bean
		NettyServerCustomizer dualMapHttp10Responses() {
			return Http10Responses::install;
		}

	}

	/**
	 * The gateway's own HTTP server closes a connection that waits for a request longer
	 * than {@link #IDLE_TIMEOUT} when Spring Boot's {@code server.netty.idle-timeout} is
	 * not set, whose own default is never: connections a client opens and leaves quiet
	 * would otherwise be held for ever (nginx closes them after its keepalive_timeout, 75
	 * s). The header and body deadlines start with the first byte; this covers the time
	 * before it.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(NettyServerCustomizer.class)
	@Conditional(IdleTimeoutConfiguration.Unset.class)
	static class IdleTimeoutConfiguration {

		/** The idle timeout when {@code server.netty.idle-timeout} is not set. */
		static final Duration IDLE_TIMEOUT = Duration.ofSeconds(75);

		@Bean
		NettyServerCustomizer dualMapIdleTimeout() {
			return server -> server.idleTimeout(IDLE_TIMEOUT);
		}

		/** {@code server.netty.idle-timeout} is not set. */
		static class Unset extends SpringBootCondition {

			static final String PROPERTY = "server.netty.idle-timeout";

			@Override
			public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
				ConditionMessage.Builder message = ConditionMessage.forCondition(PROPERTY);
				return Binder.get(context.getEnvironment()).bind(PROPERTY, Duration.class).isBound()
						? ConditionOutcome.noMatch(message.because("it is set"))
						: ConditionOutcome.match(message.because("it is not set"));
			}

		}

	}

	/**
	 * The gateway's own HTTP server answers a request head it cannot decode (431, 414,
	 * 400) with the OpenAI error body, and answers 408 and closes a connection whose
	 * request head takes longer than dualmap.server.header-read-timeout to arrive, unless
	 * it is 0 (see {@link HeaderReadTimeout}).
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(NettyServerCustomizer.class)
	static class HeaderReadTimeoutConfiguration {

		@Bean
		HeaderReadTimeout.Expirations dualMapHeaderReadTimeouts() {
			return new HeaderReadTimeout.Expirations();
		}

		@Bean
		NettyServerCustomizer dualMapHeaderReadTimeout(DualMapProperties properties,
				HeaderReadTimeout.Expirations expirations) {
			Duration timeout = properties.getServer().getHeaderReadTimeout();
			return server -> HeaderReadTimeout.install(server, timeout, expirations);
		}

	}

	/** Replica sync, when dualmap.replicas.enabled=true. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnSwitch("dualmap.replicas.enabled")
	static class ReplicaSyncConfiguration {

		@Bean
		@ConditionalOnMissingBean
		ReplicaSync dualMapReplicaSync(DualMapRegistry registry, DualMapProperties properties,
				ObjectProvider<StoredResponses> storedResponses) {
			PromptProperties p = properties.getPrompt();
			ReplicaSync sync = new ReplicaSync(registry,
					ReplicaSync.hashingFingerprint(p.getBlockChars(), p.getCharsPerToken(), p.getBlockTokens()),
					properties.getReplicas().getMaxBufferedReleases());
			storedResponses.ifAvailable(sync::shareStoredResponses);
			if (properties.getReplicas().isShareLoad()) {
				sync.shareLoad(properties.getReplicas().effectiveLoadTtl());
			}
			registry.addListener(sync);
			return sync;
		}

		@Bean
		@ConditionalOnMissingBean
		ReplicaPublisher dualMapReplicaPublisher(ReplicaSync sync, DualMapProperties properties,
				ObjectProvider<ReactiveDiscoveryClient> discovery, ObjectProvider<SslBundles> sslBundles) {
			ReplicasProperties r = properties.getReplicas();
			ReplicaPeers peers = new ReplicaPeers(r.getPeers(), r.getServiceId(),
					r.getServiceId() == null ? null : discovery.getIfAvailable());
			HttpClient http = HttpClient.create().responseTimeout(r.getTimeout());
			if (r.getSslBundle() != null && !r.getSslBundle().isBlank()) {
				SslBundles bundles = sslBundles.getIfAvailable();
				if (bundles == null) {
					throw new IllegalStateException(
							"dualmap.replicas.ssl-bundle is set but the application has no SSL bundles");
				}
				http = secure(http, bundles.getBundle(r.getSslBundle()));
			}
			WebClient client = WebClient.builder().clientConnector(new ReactorClientHttpConnector(http)).build();
			ReplicaPublisher publisher = new ReplicaPublisher(sync, peers, client, r.getPath(), r.getToken(),
					r.getFlushInterval(), r.getPeerRefreshInterval(), r.getTimeout(), r.getMaxBatchReleases(),
					r.getMaxBufferedReleases());
			return r.isBootstrap()
					? publisher.bootstrapFromPeers((int) Math.min(Integer.MAX_VALUE, r.getMaxBodySize().toBytes()))
					: publisher;
		}

		/**
		 * The client to https:// peers: their certificates verified with the bundle's
		 * trust material, and the bundle's key (if any) as this replica's certificate.
		 * Plain http:// peers stay plain.
		 */
		static HttpClient secure(HttpClient http, SslBundle bundle) {
			SslContextBuilder builder = SslContextBuilder.forClient()
				.trustManager(bundle.getManagers().getTrustManagerFactory());
			if (bundle.getStores().getKeyStore() != null) {
				builder.keyManager(bundle.getManagers().getKeyManagerFactory());
			}
			SslContext context;
			try {
				context = builder.build();
			}
			catch (SSLException ex) {
				throw new IllegalStateException("dualmap.replicas.ssl-bundle could not be used: " + ex.getMessage(),
						ex);
			}
			return http.secure(spec -> spec.sslContext(context));
		}

		@Bean
		RouterFunction<ServerResponse> dualMapReplicaSyncRoute(ReplicaSync sync, DualMapProperties properties,
				RequestBuffers buffers) {
			ReplicasProperties r = properties.getReplicas();
			ReplicaSyncHandler handler = new ReplicaSyncHandler(sync, r.getToken(),
					new BodyLimits((int) Math.min(Integer.MAX_VALUE, r.getMaxBodySize().toBytes()), buffers,
							properties.getBodyReadTimeout()));
			return RouterFunctions.route(RequestPredicates.POST(r.getPath()), handler)
				.andRoute(RequestPredicates.GET(r.getPath()), handler::snapshot)
				.andRoute(RequestPredicates.path(r.getPath()), handler::methodNotAllowed);
		}

	}

}

package io.github.dualmap.autoconfigure;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.dualmap.core.DispatchMode;
import io.github.dualmap.core.DualHashRing;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.core.TtftModel;
import io.github.dualmap.gateway.BodyLimits;
import io.github.dualmap.gateway.HeaderReadTimeout;
import io.github.dualmap.prompt.PromptParser;
import jakarta.validation.Valid;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * The {@code dualmap.*} configuration, validated at startup with messages that name the
 * bad property; {@link #toSchedulerSettings()} is the one place it maps to the core.
 */
@ConfigurationProperties(prefix = DualMapProperties.PREFIX, ignoreUnknownFields = false)
@Validated
@KnownNames
public class DualMapProperties {

	/** The prefix of every property. */
	public static final String PREFIX = "dualmap";

	/** {@code dualmap.policy}'s default. */
	public static final String DEFAULT_POLICY = "dualmap";

	/** Whether the DualMap routing is active. */
	private boolean enabled = true;

	/**
	 * Service ids routed by DualMap: routes whose URI is lb://<one of these> get the
	 * DualMap load balancer, body parsing and accounting.
	 */
	private List<String> services = new ArrayList<>();

	/**
	 * Per-service overrides, keyed by a service id of dualmap.services: the routing
	 * policy, the default TTFT SLO and the dispatch mode and prefill limits of that
	 * service's pool. What a pool does not set is the global value.
	 */
	@Valid
	private Map<String, Pool> pools = new LinkedHashMap<>();

	/**
	 * Routing policy name: dualmap (the default: DualMap's two ring candidates, cache
	 * affinity, the SLO switch and the queue's rebalancing), its variants, or a baseline
	 * registered in RoutingPolicies.
	 */
	@NotBlank(message = "dualmap.policy must not be blank")
	private String policy = DEFAULT_POLICY;

	/** Largest request body read for routing; larger bodies get 413. */
	@NotNull(message = "dualmap.max-body-size must be set")
	private DataSize maxBodySize = DataSize.ofMegabytes(32);

	/**
	 * The longest a request body may take to arrive, from the first byte asked for to the
	 * last; a slower one gets 408.
	 */
	@NotNull(message = "dualmap.body-read-timeout must be set")
	private Duration bodyReadTimeout = BodyLimits.DEFAULT_READ_TIMEOUT;

	/**
	 * Most request body bytes the gateway holds in memory at once, over all requests
	 * being read, routed, queued or sent (beyond: 503 with Retry-After). Default: a
	 * quarter of the maximum heap, and never below max-body-size.
	 */
	private @Nullable DataSize maxBufferedSize;

	/**
	 * The SLO switch fires when the affinity choice's TTFT estimate exceeds this factor
	 * times the request's TTFT SLO.
	 */
	@DecimalMin(value = "0", inclusive = false, message = "dualmap.switch-factor must be > 0")
	private double switchFactor = 0.5;

	/**
	 * The SLO switch also needs the other candidate's estimate lower by more than this
	 * factor times the prefill time of the cached prefix it gives up (0: whenever lower).
	 */
	@DecimalMin(value = "0", message = "dualmap.switch-hit-charge must be >= 0")
	@DecimalMax(value = "1000", message = "dualmap.switch-hit-charge must be <= 1000")
	private double switchHitCharge = 1.0;

	/**
	 * The SLO switch never moves a request to a candidate that holds less of its prompt
	 * while that candidate's scraped KV cache usage is above this share (1: off): a cold
	 * prompt's blocks where the cache is full preempt more than the switch gains; the
	 * queue's rescue still moves a request at its wait bound.
	 */
	@DecimalMin(value = "0", inclusive = false, message = "dualmap.switch-max-kv-usage must be in (0, 1]")
	@DecimalMax(value = "1", message = "dualmap.switch-max-kv-usage must be in (0, 1]")
	private double switchMaxKvUsage = SchedulerSettings.DEFAULT_SWITCH_MAX_KV_USAGE;

	/**
	 * When both candidates would miss the SLO, also consider a bounded third instance.
	 */
	private boolean thirdChoice = false;

	/** A new instance's share ramps up over this period (0 turns slow start off). */
	@NotNull(message = "dualmap.slow-start must be set")
	private Duration slowStart = Duration.ZERO;

	@Valid
	private final Slo slo = new Slo();

	@Valid
	private final Prompt prompt = new Prompt();

	@Valid
	private final Ring ring = new Ring();

	@Valid
	private final HotPrefix hotPrefix = new HotPrefix();

	@Valid
	private final Hotspot hotspot = new Hotspot();

	@Valid
	private final Cold cold = new Cold();

	@Valid
	private final Ttft ttft = new Ttft();

	@Valid
	private final Shadow shadow = new Shadow();

	@Valid
	private final Scrape scrape = new Scrape();

	@Valid
	private final Breaker breaker = new Breaker();

	private final Headers headers = new Headers();

	@Valid
	private final RequestId requestId = new RequestId();

	@Valid
	private final ModelList modelList = new ModelList();

	@Valid
	private final StoredResponses storedResponses = new StoredResponses();

	@Valid
	private final Retry retry = new Retry();

	@Valid
	private final Dispatch dispatch = new Dispatch();

	@Valid
	private final Discovery discovery = new Discovery();

	@Valid
	private final Replicas replicas = new Replicas();

	/** The gateway's own HTTP server. */
	@Valid
	private final Server server = new Server();

	/** The dualmap.* meters. */
	@Valid
	private final Metrics metrics = new Metrics();

	/** Who may use DualMap's write operations when Spring Security is present. */
	@Valid
	private final Security security = new Security();

	/**
	 * dualmap.demo.*, which the demo's own properties bind (DemoProperties): bound here
	 * too and never read, only so that ignoreUnknownFields = false, which Spring Boot
	 * applies to this class alone, does not refuse it. Package-private accessors: not a
	 * property of this class in the IDE metadata.
	 */
	private Map<String, Object> demo = new LinkedHashMap<>();

	/**
	 * dualmap.tenants.*, which TenantProperties binds (its fixed properties and
	 * dualmap.tenants.default.*) and TenantDirectory reads (the named tenants): bound
	 * here too and never read, only so that ignoreUnknownFields = false does not refuse
	 * it. Package-private accessors: not a property of this class in the IDE metadata.
	 */
	private Map<String, Object> tenants = new LinkedHashMap<>();

	@AssertTrue(message = "dualmap.hot-prefix.max-depth must be >= dualmap.hot-prefix.min-depth")
	private boolean isHotPrefixDepthOrdered() {
		return this.hotPrefix.maxDepth >= this.hotPrefix.minDepth;
	}

	@AssertTrue(message = "dualmap.hot-prefix.drop-ratio must be <= dualmap.hot-prefix.ratio")
	private boolean isHotPrefixRatioOrdered() {
		return this.hotPrefix.dropRatio <= this.hotPrefix.ratio;
	}

	@AssertTrue(message = "dualmap.model-list.other-services must not name a service of dualmap.services")
	private boolean isModelListOthersOutside() {
		return this.modelList.otherServices.stream().noneMatch(this.services::contains);
	}

	@AssertTrue(message = "dualmap.services must not contain blank or duplicate ids")
	private boolean isServicesDistinct() {
		return this.services.stream().noneMatch(String::isBlank)
				&& this.services.stream().distinct().count() == this.services.size();
	}

	@AssertTrue(message = "dualmap.slow-start must be >= 0")
	private boolean isSlowStartNonNegative() {
		return !this.slowStart.isNegative();
	}

	@AssertTrue(message = "dualmap.body-read-timeout must be > 0")
	private boolean isBodyReadTimeoutPositive() {
		return this.bodyReadTimeout.toNanos() > 0;
	}

	@AssertTrue(message = "dualmap.max-buffered-size must be >= dualmap.max-body-size"
			+ " (and >= dualmap.replicas.max-body-size with replica sync on)")
	private boolean isMaxBufferedSizeAtLeastOneBody() {
		return this.maxBufferedSize == null || this.maxBufferedSize.toBytes() >= largestBody();
	}

	/** The largest single body the gateway may have to hold: a client's or a peer's. */
	private long largestBody() {
		long replica = this.replicas.isEnabled() ? this.replicas.getMaxBodySize().toBytes() : 0;
		return Math.max(this.maxBodySize.toBytes(), replica);
	}

	/**
	 * {@code dualmap.max-buffered-size} in bytes: the configured value, else a quarter of
	 * {@code maxHeapBytes} but at least the largest body (a client's, or a peer's with
	 * replica sync on).
	 */
	public long maxBufferedBytes(long maxHeapBytes) {
		return this.maxBufferedSize != null ? this.maxBufferedSize.toBytes()
				: Math.max(maxHeapBytes / 4, largestBody());
	}

	@AssertTrue(message = "dualmap.max-body-size must be positive and below 2GB")
	private boolean isMaxBodySizeInRange() {
		return this.maxBodySize.toBytes() > 0 && this.maxBodySize.toBytes() < Integer.MAX_VALUE;
	}

	/** The scheduler settings these properties describe, before per-pool overrides. */
	public SchedulerSettings toSchedulerSettings() {
		return schedulerSettings(this.slo.ttft);
	}

	/**
	 * The scheduler settings of one service's pool: the global ones with its
	 * {@code dualmap.pools.<service>.slo.ttft}.
	 */
	public SchedulerSettings toSchedulerSettings(String serviceId) {
		Pool p = this.pools.get(serviceId);
		return schedulerSettings(p != null && p.slo.ttft != null ? p.slo.ttft : this.slo.ttft);
	}

	/** The routing policy of one service's pool. */
	public String policyOf(String serviceId) {
		Pool p = this.pools.get(serviceId);
		return p != null && p.policy != null ? p.policy : this.policy;
	}

	private SchedulerSettings schedulerSettings(Duration defaultSlo) {
		return SchedulerSettings.custom()
			.virtualNodes(this.ring.virtualNodes)
			.blockTokens(this.prompt.blockTokens)
			.minPrefixDepth(this.hotPrefix.minDepth)
			.maxPrefixDepth(this.hotPrefix.maxDepth)
			.hotWindow(this.hotPrefix.window)
			.hotRatio(this.hotPrefix.ratio)
			.hotDropRatio(this.hotPrefix.dropRatio)
			.hotMinSamples(this.hotPrefix.minSamples)
			.maxHotPrefixes(this.hotPrefix.maxEntries)
			.switchFactor(this.switchFactor)
			.switchHitCharge(this.switchHitCharge)
			.switchMaxKvUsage(this.switchMaxKvUsage)
			.hotspotFactor(this.hotspot.factor)
			.hotspotFloorTokens(this.hotspot.floorTokens)
			.hotspotMaxWait(this.hotspot.maxQueueWait)
			.thirdChoice(this.thirdChoice)
			.prefillNanosPerToken(this.ttft.prefillPerToken.toNanos())
			.baseTtft(this.ttft.base)
			.calibrationAlpha(this.ttft.calibrationAlpha)
			.ttftModel(this.ttft.model)
			.attentionNanosPerPair(this.ttft.attentionPerMillionPairs.toNanos() / 1e6)
			.ttftForgetting(this.ttft.forgetting)
			.defaultSlo(defaultSlo)
			.shadowCapacityTokens(this.shadow.capacityTokens)
			.staleAfter(this.scrape.staleAfter)
			.slowStart(this.slowStart)
			.coldCachedShare(this.cold.cachedShare)
			.coldCandidatesMax(this.cold.candidatesMax)
			.coldLoadStepTokens(this.cold.loadStepTokens)
			.ttftRelaxAfter(this.ttft.relaxAfter)
			.build();
	}

	/**
	 * The dispatch queue settings these properties describe; the one place
	 * {@code dualmap.dispatch.*} maps to the core.
	 */
	public QueueSettings toQueueSettings() {
		return queueSettings(null);
	}

	/**
	 * The dispatch queue settings of one service's pool: the global ones with its
	 * {@code dualmap.pools.<service>.dispatch.*}.
	 */
	public QueueSettings toQueueSettings(String serviceId) {
		return queueSettings(this.pools.get(serviceId));
	}

	private QueueSettings queueSettings(@Nullable Pool pool) {
		Dispatch d = this.dispatch;
		PoolDispatch o = pool != null ? pool.dispatch : new PoolDispatch();
		return QueueSettings.custom()
			.mode(o.mode != null ? o.mode : d.mode)
			.maxPrefillRequests(o.maxPrefillRequests != null ? o.maxPrefillRequests : d.maxPrefillRequests)
			.maxPrefillTokens(o.maxPrefillTokens != null ? o.maxPrefillTokens : d.maxPrefillTokens)
			.aging(d.aging)
			.maxQueuedPerInstance(d.maxQueuedPerInstance)
			.maxQueuedPerPool(d.maxQueuedPerPool)
			.maxWait(d.maxWait)
			.expiry(d.expiry)
			.maxMigrations(d.maxMigrations)
			.migrationMargin(d.migrationMargin)
			.maxMovesPerTrigger(d.maxMovesPerEvent)
			.unavailableRetryAfter(d.unavailableRetryAfter)
			.idlePull(d.idlePull)
			.sloAware(d.sloAware)
			.maxWaitShare(d.maxWaitShare)
			.rescue(d.rescue)
			.rescueToQueue(d.rescueToQueue)
			.moveLateOnly(d.moveLateOnly)
			.shedHopeless(d.shedHopeless)
			.holdOnEngineQueue(d.holdOnEngineQueue)
			.build();
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public List<String> getServices() {
		return this.services;
	}

	public void setServices(List<String> services) {
		this.services = services;
	}

	public Map<String, Pool> getPools() {
		return this.pools;
	}

	public void setPools(Map<String, Pool> pools) {
		this.pools = pools;
	}

	public String getPolicy() {
		return this.policy;
	}

	public void setPolicy(String policy) {
		this.policy = policy;
	}

	public Duration getBodyReadTimeout() {
		return this.bodyReadTimeout;
	}

	public void setBodyReadTimeout(Duration bodyReadTimeout) {
		this.bodyReadTimeout = bodyReadTimeout;
	}

	public @Nullable DataSize getMaxBufferedSize() {
		return this.maxBufferedSize;
	}

	public void setMaxBufferedSize(@Nullable DataSize maxBufferedSize) {
		this.maxBufferedSize = maxBufferedSize;
	}

	public DataSize getMaxBodySize() {
		return this.maxBodySize;
	}

	public void setMaxBodySize(DataSize maxBodySize) {
		this.maxBodySize = maxBodySize;
	}

	public double getSwitchFactor() {
		return this.switchFactor;
	}

	public void setSwitchFactor(double switchFactor) {
		this.switchFactor = switchFactor;
	}

	public double getSwitchHitCharge() {
		return this.switchHitCharge;
	}

	public void setSwitchHitCharge(double switchHitCharge) {
		this.switchHitCharge = switchHitCharge;
	}

	public double getSwitchMaxKvUsage() {
		return this.switchMaxKvUsage;
	}

	public void setSwitchMaxKvUsage(double switchMaxKvUsage) {
		this.switchMaxKvUsage = switchMaxKvUsage;
	}

	public boolean isThirdChoice() {
		return this.thirdChoice;
	}

	public void setThirdChoice(boolean thirdChoice) {
		this.thirdChoice = thirdChoice;
	}

	public Duration getSlowStart() {
		return this.slowStart;
	}

	public void setSlowStart(Duration slowStart) {
		this.slowStart = slowStart;
	}

	public Slo getSlo() {
		return this.slo;
	}

	public Prompt getPrompt() {
		return this.prompt;
	}

	public Ring getRing() {
		return this.ring;
	}

	public HotPrefix getHotPrefix() {
		return this.hotPrefix;
	}

	public Hotspot getHotspot() {
		return this.hotspot;
	}

	public Cold getCold() {
		return this.cold;
	}

	public Ttft getTtft() {
		return this.ttft;
	}

	public Shadow getShadow() {
		return this.shadow;
	}

	public Scrape getScrape() {
		return this.scrape;
	}

	public Breaker getBreaker() {
		return this.breaker;
	}

	public RequestId getRequestId() {
		return this.requestId;
	}

	public ModelList getModelList() {
		return this.modelList;
	}

	public Headers getHeaders() {
		return this.headers;
	}

	public StoredResponses getStoredResponses() {
		return this.storedResponses;
	}

	public Retry getRetry() {
		return this.retry;
	}

	public Dispatch getDispatch() {
		return this.dispatch;
	}

	public Discovery getDiscovery() {
		return this.discovery;
	}

	public Replicas getReplicas() {
		return this.replicas;
	}

	public Server getServer() {
		return this.server;
	}

	public Metrics getMetrics() {
		return this.metrics;
	}

	public Security getSecurity() {
		return this.security;
	}

	/**
	 * Every TTFT objective configured: {@code dualmap.slo.ttft}, each class's and each
	 * pool's.
	 */
	public List<Duration> sloTtfts() {
		List<Duration> out = new ArrayList<>();
		out.add(this.slo.getTtft());
		this.slo.getClasses().values().forEach(c -> {
			if (c.getTtft() != null) {
				out.add(c.getTtft());
			}
		});
		this.pools.values().forEach(p -> {
			if (p.getSlo().getTtft() != null) {
				out.add(p.getSlo().getTtft());
			}
		});
		return out;
	}

	/** {@code dualmap.metrics.*}. */
	public static class Metrics {

		/**
		 * Upper bounds of the buckets of the dualmap.ttft and dualmap.queue.wait
		 * histograms. Every configured TTFT objective (dualmap.slo.ttft,
		 * dualmap.slo.classes.*.ttft, dualmap.pools.*.slo.ttft) is added to them, so SLO
		 * attainment reads exactly off a bucket. At most 20 bounds.
		 */
		@NotNull(message = "dualmap.metrics.latency-buckets must be set")
		@Size(max = 20, message = "dualmap.metrics.latency-buckets has at most 20 bounds")
		private List<Duration> latencyBuckets = new ArrayList<>(List.of(Duration.ofMillis(50), Duration.ofMillis(100),
				Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2),
				Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(60)));

		@AssertTrue(message = "dualmap.metrics.latency-buckets must all be > 0")
		private boolean isLatencyBucketsPositive() {
			return this.latencyBuckets.stream().allMatch(d -> d != null && d.toNanos() > 0);
		}

		public List<Duration> getLatencyBuckets() {
			return this.latencyBuckets;
		}

		public void setLatencyBuckets(List<Duration> latencyBuckets) {
			this.latencyBuckets = latencyBuckets;
		}

	}

	/**
	 * {@code dualmap.security.*}: applied only when Spring Security is on the classpath.
	 */
	public static class Security {

		/**
		 * Role (without the ROLE_ prefix) an authenticated caller needs for the write
		 * operations of the dualmap actuator endpoint (drain, undrain).
		 */
		@NotBlank(message = "dualmap.security.role must not be blank")
		private String role = "DUALMAP_OPERATOR";

		/**
		 * Role (without the ROLE_ prefix) a caller of the replica-sync path needs besides
		 * dualmap.replicas.token, for gateways whose security chain authenticates their
		 * peers (mutual TLS, for example). Unset: the token alone.
		 */
		private @Nullable String replicaRole;

		public String getRole() {
			return this.role;
		}

		public void setRole(String role) {
			this.role = role;
		}

		public @Nullable String getReplicaRole() {
			return this.replicaRole;
		}

		public void setReplicaRole(@Nullable String replicaRole) {
			this.replicaRole = replicaRole;
		}

	}

	Map<String, Object> getDemo() {
		return this.demo;
	}

	void setDemo(Map<String, Object> demo) {
		this.demo = demo;
	}

	Map<String, Object> getTenants() {
		return this.tenants;
	}

	void setTenants(Map<String, Object> tenants) {
		this.tenants = tenants;
	}

	/** The gateway's own HTTP server (Reactor Netty). */
	public static class Server {

		/**
		 * Ask for the next read of an HTTP/1.1 connection after every response: works
		 * around reactor/reactor-netty#4361 (up to at least 1.3.7), where a keep-alive
		 * connection whose early or pipelined request was answered at once (a 404, an
		 * actuator read) stops being read and the client's next request hangs. Turn off
		 * once the Reactor Netty in use carries the fix.
		 */
		private boolean keepAliveReads = true;

		/**
		 * End a response of unknown length (a streamed completion) to an HTTP/1.0 request
		 * by closing the connection instead of chunked encoding, which HTTP/1.0 clients
		 * (nginx proxying with its default proxy_http_version 1.0) do not decode.
		 */
		private boolean http10CloseDelimited = true;

		/**
		 * The longest a request's head (request line and headers) may take to arrive,
		 * from its first byte to its last; a slower one gets 408 and its connection is
		 * closed (slowloris). Idle time between requests does not count
		 * (server.netty.idle-timeout bounds it). 0 turns it off.
		 */
		@NotNull(message = "dualmap.server.header-read-timeout must be set")
		private Duration headerReadTimeout = HeaderReadTimeout.DEFAULT_TIMEOUT;

		@AssertTrue(message = "dualmap.server.header-read-timeout must be >= 0 (0: off)")
		private boolean isHeaderReadTimeoutNonNegative() {
			return this.headerReadTimeout == null || !this.headerReadTimeout.isNegative();
		}

		public boolean isKeepAliveReads() {
			return this.keepAliveReads;
		}

		public void setKeepAliveReads(boolean keepAliveReads) {
			this.keepAliveReads = keepAliveReads;
		}

		public boolean isHttp10CloseDelimited() {
			return this.http10CloseDelimited;
		}

		public void setHttp10CloseDelimited(boolean http10CloseDelimited) {
			this.http10CloseDelimited = http10CloseDelimited;
		}

		public Duration getHeaderReadTimeout() {
			return this.headerReadTimeout;
		}

		public void setHeaderReadTimeout(Duration headerReadTimeout) {
			this.headerReadTimeout = headerReadTimeout;
		}

	}

	/**
	 * Overrides for one service's pool ({@code dualmap.pools.<service>.*}); an unset
	 * value is the global one.
	 */
	public static class Pool {

		/** Routing policy of this service (default: dualmap.policy). */
		private @Nullable String policy;

		@Valid
		private final PoolSlo slo = new PoolSlo();

		@Valid
		private final PoolDispatch dispatch = new PoolDispatch();

		public @Nullable String getPolicy() {
			return this.policy;
		}

		public void setPolicy(@Nullable String policy) {
			this.policy = policy;
		}

		public PoolSlo getSlo() {
			return this.slo;
		}

		public PoolDispatch getDispatch() {
			return this.dispatch;
		}

	}

	/** {@code dualmap.pools.<service>.slo.*}. */
	public static class PoolSlo {

		/**
		 * TTFT objective of a request to this service that names none (default:
		 * dualmap.slo.ttft).
		 */
		private @Nullable Duration ttft;

		@AssertTrue(message = "dualmap.pools.<service>.slo.ttft must be > 0")
		private boolean isTtftPositive() {
			return this.ttft == null || this.ttft.toNanos() > 0;
		}

		public @Nullable Duration getTtft() {
			return this.ttft;
		}

		public void setTtft(@Nullable Duration ttft) {
			this.ttft = ttft;
		}

	}

	/** {@code dualmap.pools.<service>.dispatch.*}. */
	public static class PoolDispatch {

		/** Dispatch mode of this service (default: dualmap.dispatch.mode). */
		private @Nullable DispatchMode mode;

		/**
		 * Prefill requests per instance of this service (default:
		 * dualmap.dispatch.max-prefill-requests).
		 */
		@Min(value = 1, message = "dualmap.pools.<service>.dispatch.max-prefill-requests must be >= 1")
		private @Nullable Integer maxPrefillRequests;

		/**
		 * Uncached prefill tokens per instance of this service (default:
		 * dualmap.dispatch.max-prefill-tokens).
		 */
		@Min(value = 1, message = "dualmap.pools.<service>.dispatch.max-prefill-tokens must be >= 1")
		private @Nullable Long maxPrefillTokens;

		public @Nullable DispatchMode getMode() {
			return this.mode;
		}

		public void setMode(@Nullable DispatchMode mode) {
			this.mode = mode;
		}

		public @Nullable Integer getMaxPrefillRequests() {
			return this.maxPrefillRequests;
		}

		public void setMaxPrefillRequests(@Nullable Integer maxPrefillRequests) {
			this.maxPrefillRequests = maxPrefillRequests;
		}

		public @Nullable Long getMaxPrefillTokens() {
			return this.maxPrefillTokens;
		}

		public void setMaxPrefillTokens(@Nullable Long maxPrefillTokens) {
			this.maxPrefillTokens = maxPrefillTokens;
		}

	}

	/** Time-to-first-token objectives. */
	public static class Slo {

		/** TTFT objective of a request that names none. */
		@NotNull(message = "dualmap.slo.ttft must be set")
		private Duration ttft = Duration.ofSeconds(5);

		/** Request header naming a class from dualmap.slo.classes. */
		@NotBlank(message = "dualmap.slo.class-header must not be blank")
		@Pattern(regexp = "[A-Za-z0-9!#$%&'*+.^_`|~-]+",
				message = "dualmap.slo.class-header must be an HTTP header name")
		private String classHeader = "x-slo-class";

		/** TTFT objective per request class; an unknown class gets dualmap.slo.ttft. */
		@Valid
		private Map<String, SloClass> classes = new LinkedHashMap<>();

		@AssertTrue(message = "dualmap.slo.ttft must be > 0")
		private boolean isTtftPositive() {
			return this.ttft.toNanos() > 0;
		}

		public Duration getTtft() {
			return this.ttft;
		}

		public void setTtft(Duration ttft) {
			this.ttft = ttft;
		}

		public String getClassHeader() {
			return this.classHeader;
		}

		public void setClassHeader(String classHeader) {
			this.classHeader = classHeader;
		}

		public Map<String, SloClass> getClasses() {
			return this.classes;
		}

		public void setClasses(Map<String, SloClass> classes) {
			this.classes = classes;
		}

	}

	/** One request class. */
	public static class SloClass {

		/** TTFT objective of requests of this class. */
		@NotNull(message = "dualmap.slo.classes.<name>.ttft must be set")
		private @Nullable Duration ttft;

		/**
		 * How long requests of this class may wait in the dispatch queues before they
		 * expire (dualmap.dispatch.expiry); unset: dualmap.dispatch.max-wait.
		 */
		private @Nullable Duration maxWait;

		/**
		 * Priority band of requests of this class, higher first: a band is served before
		 * any lower one, and under overload the lowest band is shed first; within a band
		 * the tenants share by weight. Unset: a request's band is its tenant's
		 * (dualmap.tenants.<name>.priority, 0 without tenants).
		 */
		private @Nullable Integer priority;

		@AssertTrue(message = "dualmap.slo.classes.<name>.ttft must be > 0")
		private boolean isTtftPositive() {
			return this.ttft == null || this.ttft.toNanos() > 0;
		}

		@AssertTrue(message = "dualmap.slo.classes.<name>.max-wait must be > 0")
		private boolean isMaxWaitPositive() {
			return this.maxWait == null || this.maxWait.toNanos() > 0;
		}

		public @Nullable Duration getMaxWait() {
			return this.maxWait;
		}

		public @Nullable Integer getPriority() {
			return this.priority;
		}

		public void setPriority(@Nullable Integer priority) {
			this.priority = priority;
		}

		public void setMaxWait(@Nullable Duration maxWait) {
			this.maxWait = maxWait;
		}

		public @Nullable Duration getTtft() {
			return this.ttft;
		}

		public void setTtft(@Nullable Duration ttft) {
			this.ttft = ttft;
		}

	}

	/** How prompts are cut into blocks. */
	public static class Prompt {

		/** Characters of canonical prompt text per block. */
		@Min(value = 1, message = "dualmap.prompt.block-chars must be >= 1")
		private int blockChars = 256;

		/** Characters per token, to estimate token counts from text. */
		@DecimalMin(value = "0", inclusive = false, message = "dualmap.prompt.chars-per-token must be > 0")
		private double charsPerToken = 4.0;

		/** Token ids per block when the prompt is given as token ids. */
		@Min(value = 1, message = "dualmap.prompt.block-tokens must be >= 1")
		private int blockTokens = 64;

		/**
		 * Deepest nesting of arrays and objects in a request body the gateway reads (a
		 * tool's or a structured output's JSON schema nests deepest); deeper bodies get
		 * 400.
		 */
		@Min(value = 4, message = "dualmap.prompt.max-nesting-depth must be >= 4")
		private int maxNestingDepth = PromptParser.DEFAULT_MAX_NESTING_DEPTH;

		/**
		 * Most JSON tokens (values, names, brackets) in a request body the gateway reads;
		 * more get 400. Bounds the work and memory of parsing one body.
		 */
		@Min(value = 1, message = "dualmap.prompt.max-json-tokens must be >= 1")
		private long maxJsonTokens = PromptParser.DEFAULT_MAX_TOKEN_COUNT;

		public int getBlockChars() {
			return this.blockChars;
		}

		public void setBlockChars(int blockChars) {
			this.blockChars = blockChars;
		}

		public double getCharsPerToken() {
			return this.charsPerToken;
		}

		public void setCharsPerToken(double charsPerToken) {
			this.charsPerToken = charsPerToken;
		}

		public int getBlockTokens() {
			return this.blockTokens;
		}

		public void setBlockTokens(int blockTokens) {
			this.blockTokens = blockTokens;
		}

		public int getMaxNestingDepth() {
			return this.maxNestingDepth;
		}

		public void setMaxNestingDepth(int maxNestingDepth) {
			this.maxNestingDepth = maxNestingDepth;
		}

		public long getMaxJsonTokens() {
			return this.maxJsonTokens;
		}

		public void setMaxJsonTokens(long maxJsonTokens) {
			this.maxJsonTokens = maxJsonTokens;
		}

	}

	/** The two consistent-hash rings. */
	public static class Ring {

		/** Virtual nodes per unit of instance weight on each ring. */
		@Min(value = 1, message = "dualmap.ring.virtual-nodes must be >= 1")
		@Max(value = DualHashRing.MAX_VIRTUAL_NODES, message = "dualmap.ring.virtual-nodes must be <= 10000")
		private int virtualNodes = 160;

		/** Instance metadata key holding the instance's relative weight. */
		@NotBlank(message = "dualmap.ring.weight-metadata-key must not be blank")
		private String weightMetadataKey = "dualmap.weight";

		public int getVirtualNodes() {
			return this.virtualNodes;
		}

		public void setVirtualNodes(int virtualNodes) {
			this.virtualNodes = virtualNodes;
		}

		public String getWeightMetadataKey() {
			return this.weightMetadataKey;
		}

		public void setWeightMetadataKey(String weightMetadataKey) {
			this.weightMetadataKey = weightMetadataKey;
		}

	}

	/** Adaptive prefix depth. */
	public static class HotPrefix {

		/** Blocks in the routing key of a prefix that is not hot. */
		@Min(value = 1, message = "dualmap.hot-prefix.min-depth must be >= 1")
		private int minDepth = 1;

		/** Deepest a hot prefix may be expanded. */
		@Min(value = 1, message = "dualmap.hot-prefix.max-depth must be >= 1")
		private int maxDepth = 16;

		/** Requests in the sliding window. */
		@Min(value = 1, message = "dualmap.hot-prefix.window must be >= 1")
		private int window = 200;

		/** Share of the window above which a prefix is expanded one block deeper. */
		@DecimalMin(value = "0", inclusive = false, message = "dualmap.hot-prefix.ratio must be in (0, 1)")
		@DecimalMax(value = "1", inclusive = false, message = "dualmap.hot-prefix.ratio must be in (0, 1)")
		private double ratio = 0.0612;

		/** Share below which an expansion is dropped. */
		@DecimalMin(value = "0", inclusive = false, message = "dualmap.hot-prefix.drop-ratio must be in (0, 1)")
		@DecimalMax(value = "1", inclusive = false, message = "dualmap.hot-prefix.drop-ratio must be in (0, 1)")
		private double dropRatio = 0.02;

		/** Requests the window must hold before anything is expanded. */
		@Min(value = 1, message = "dualmap.hot-prefix.min-samples must be >= 1")
		private int minSamples = 20;

		/** Bound on expanded prefixes held at once. */
		@Min(value = 1, message = "dualmap.hot-prefix.max-entries must be >= 1")
		private int maxEntries = 256;

		/** The window never holds more requests than its size: nothing would expand. */
		@AssertTrue(message = "dualmap.hot-prefix.min-samples (default 20) must be <= dualmap.hot-prefix.window")
		private boolean isMinSamplesWithinWindow() {
			return this.minSamples <= this.window;
		}

		public int getMinDepth() {
			return this.minDepth;
		}

		public void setMinDepth(int minDepth) {
			this.minDepth = minDepth;
		}

		public int getMaxDepth() {
			return this.maxDepth;
		}

		public void setMaxDepth(int maxDepth) {
			this.maxDepth = maxDepth;
		}

		public int getWindow() {
			return this.window;
		}

		public void setWindow(int window) {
			this.window = window;
		}

		public double getRatio() {
			return this.ratio;
		}

		public void setRatio(double ratio) {
			this.ratio = ratio;
		}

		public double getDropRatio() {
			return this.dropRatio;
		}

		public void setDropRatio(double dropRatio) {
			this.dropRatio = dropRatio;
		}

		public int getMinSamples() {
			return this.minSamples;
		}

		public void setMinSamples(int minSamples) {
			this.minSamples = minSamples;
		}

		public int getMaxEntries() {
			return this.maxEntries;
		}

		public void setMaxEntries(int maxEntries) {
			this.maxEntries = maxEntries;
		}

	}

	/** Hotspot detection. */
	public static class Hotspot {

		/**
		 * An instance is a hotspot above this factor times the pool's mean pending
		 * tokens.
		 */
		@DecimalMin(value = "1", message = "dualmap.hotspot.factor must be >= 1")
		private double factor = 1.5;

		/** And above this absolute number of pending uncached tokens. */
		@Min(value = 0, message = "dualmap.hotspot.floor-tokens must be >= 0")
		private long floorTokens = 16_384;

		/** Or when its oldest queued request has waited this long. */
		@NotNull(message = "dualmap.hotspot.max-queue-wait must be set")
		private Duration maxQueueWait = Duration.ofSeconds(3);

		@AssertTrue(message = "dualmap.hotspot.max-queue-wait must be > 0")
		private boolean isMaxQueueWaitPositive() {
			return this.maxQueueWait.toNanos() > 0;
		}

		public double getFactor() {
			return this.factor;
		}

		public void setFactor(double factor) {
			this.factor = factor;
		}

		public long getFloorTokens() {
			return this.floorTokens;
		}

		public void setFloorTokens(long floorTokens) {
			this.floorTokens = floorTokens;
		}

		public Duration getMaxQueueWait() {
			return this.maxQueueWait;
		}

		public void setMaxQueueWait(Duration maxQueueWait) {
			this.maxQueueWait = maxQueueWait;
		}

	}

	/**
	 * Cold requests: those none of whose first ring instances holds much of the prompt go
	 * to the least occupied of their first d ring instances.
	 */
	public static class Cold {

		/**
		 * A request is cold when none of its first candidates-max ring instances is
		 * believed (by its shadow index) to hold at least this share of the prompt; a
		 * cold request goes to the one of its first d ring instances with the fewest
		 * requests in flight and queued (the engine's scraped count when larger) among
		 * those whose TTFT estimate is within the switch budget. 0 (the default) turns
		 * the rule off: every request chooses between its two candidates; 0.3 is the
		 * share measured.
		 */
		@DecimalMin(value = "0", message = "dualmap.cold.cached-share must be in [0, 1]")
		@DecimalMax(value = "1", message = "dualmap.cold.cached-share must be in [0, 1]")
		private double cachedShare = 0;

		/**
		 * The most ring instances a cold request considers (walking both rings from its
		 * key, alternating; the two candidates first); warm requests look for their
		 * prompt on as many.
		 */
		@Min(value = 2, message = "dualmap.cold.candidates-max must be in [2, 16]")
		@Max(value = SchedulerSettings.MAX_COLD_CANDIDATES, message = "dualmap.cold.candidates-max must be in [2, 16]")
		private int candidatesMax = 4;

		/**
		 * A cold request considers two ring instances, plus one per this many pending
		 * uncached tokens on the pool's mean instance, up to candidates-max.
		 */
		@Min(value = 1, message = "dualmap.cold.load-step-tokens must be >= 1")
		private long loadStepTokens = 16_384;

		public double getCachedShare() {
			return this.cachedShare;
		}

		public void setCachedShare(double cachedShare) {
			this.cachedShare = cachedShare;
		}

		public int getCandidatesMax() {
			return this.candidatesMax;
		}

		public void setCandidatesMax(int candidatesMax) {
			this.candidatesMax = candidatesMax;
		}

		public long getLoadStepTokens() {
			return this.loadStepTokens;
		}

		public void setLoadStepTokens(long loadStepTokens) {
			this.loadStepTokens = loadStepTokens;
		}

	}

	/**
	 * The TTFT model: {@code base + a*(T + u) + c*(A + u*(k + u/2))} per instance
	 * ({@code attention}), or {@code (W + P + u) * prefill-per-token + base} for the pool
	 * ({@code linear}).
	 */
	public static class Ttft {

		/**
		 * Which model the estimates come from: attention (per instance, a cost per
		 * uncached token plus one per attention pair, the work ahead kept as cost, fitted
		 * online) or linear (one rate per token for the pool).
		 */
		@NotNull(message = "dualmap.ttft.model must be set")
		private TtftModel model = SchedulerSettings.DEFAULT_TTFT_MODEL;

		/**
		 * Initial attention cost of one million (query token x context token) pairs,
		 * fitted online per instance: about 4 x layers x hidden FLOPs per pair at the
		 * accelerator's attention throughput.
		 */
		@NotNull(message = "dualmap.ttft.attention-per-million-pairs must be set")
		private Duration attentionPerMillionPairs = Duration
			.ofNanos(Math.round(SchedulerSettings.DEFAULT_ATTENTION_NANOS_PER_PAIR * 1e6));

		/**
		 * Forgetting factor of the attention model's online fit, in (0, 1]: 1 weighs
		 * every observed TTFT alike, 0.99 halves an observation's weight after about 70
		 * more on the same instance.
		 */
		@DecimalMin(value = "0", inclusive = false, message = "dualmap.ttft.forgetting must be in (0, 1]")
		@DecimalMax(value = "1", message = "dualmap.ttft.forgetting must be in (0, 1]")
		private double forgetting = SchedulerSettings.DEFAULT_TTFT_FORGETTING;

		/** Initial prefill time per uncached token; recalibrated online. */
		@NotNull(message = "dualmap.ttft.prefill-per-token must be set")
		private Duration prefillPerToken = Duration.ofNanos(25_000);

		/** Fixed part of the time to first token. */
		@NotNull(message = "dualmap.ttft.base must be set")
		private Duration base = Duration.ofMillis(20);

		/**
		 * EWMA weight of one observed TTFT in recalibrating the linear model; 0 turns
		 * calibration off for either model.
		 */
		@DecimalMin(value = "0", message = "dualmap.ttft.calibration-alpha must be in [0, 1]")
		@DecimalMax(value = "1", message = "dualmap.ttft.calibration-alpha must be in [0, 1]")
		private double calibrationAlpha = 0.05;

		/**
		 * An instance whose attention model has seen no first token for this long is
		 * estimated with the lower of its own fit and the fit over every instance's
		 * observations, so an instance whose first answers were slow gets traffic back
		 * and relearns (0 turns it off).
		 */
		@NotNull(message = "dualmap.ttft.relax-after must be set")
		private Duration relaxAfter = Duration.ofSeconds(5);

		@AssertTrue(message = "dualmap.ttft.relax-after must be >= 0")
		private boolean isRelaxAfterNonNegative() {
			return !this.relaxAfter.isNegative();
		}

		public Duration getRelaxAfter() {
			return this.relaxAfter;
		}

		public void setRelaxAfter(Duration relaxAfter) {
			this.relaxAfter = relaxAfter;
		}

		@AssertTrue(message = "dualmap.ttft.prefill-per-token must be > 0")
		private boolean isPrefillPerTokenPositive() {
			return this.prefillPerToken.toNanos() > 0;
		}

		@AssertTrue(message = "dualmap.ttft.base must be >= 0")
		private boolean isBaseNonNegative() {
			return !this.base.isNegative();
		}

		@AssertTrue(message = "dualmap.ttft.attention-per-million-pairs must be > 0")
		private boolean isAttentionPerMillionPairsPositive() {
			return this.attentionPerMillionPairs.toNanos() > 0;
		}

		public TtftModel getModel() {
			return this.model;
		}

		public void setModel(TtftModel model) {
			this.model = model;
		}

		public Duration getAttentionPerMillionPairs() {
			return this.attentionPerMillionPairs;
		}

		public void setAttentionPerMillionPairs(Duration attentionPerMillionPairs) {
			this.attentionPerMillionPairs = attentionPerMillionPairs;
		}

		public double getForgetting() {
			return this.forgetting;
		}

		public void setForgetting(double forgetting) {
			this.forgetting = forgetting;
		}

		public Duration getPrefillPerToken() {
			return this.prefillPerToken;
		}

		public void setPrefillPerToken(Duration prefillPerToken) {
			this.prefillPerToken = prefillPerToken;
		}

		public Duration getBase() {
			return this.base;
		}

		public void setBase(Duration base) {
			this.base = base;
		}

		public double getCalibrationAlpha() {
			return this.calibrationAlpha;
		}

		public void setCalibrationAlpha(double calibrationAlpha) {
			this.calibrationAlpha = calibrationAlpha;
		}

	}

	/** The router's shadow of each instance's KV cache. */
	public static class Shadow {

		/** Assumed KV capacity of an instance in tokens until the engine reports one. */
		@Min(value = 1, message = "dualmap.shadow.capacity-tokens must be >= 1")
		private long capacityTokens = 900_000;

		public long getCapacityTokens() {
			return this.capacityTokens;
		}

		public void setCapacityTokens(long capacityTokens) {
			this.capacityTokens = capacityTokens;
		}

	}

	/** Scraping each instance's Prometheus endpoint. */
	public static class Scrape {

		/** The least default of {@code unresponsive-after}. */
		static final Duration DEFAULT_UNRESPONSIVE_AFTER = Duration.ofSeconds(10);

		/** Whether engine metrics are scraped at all. */
		private boolean enabled = true;

		/** Time between two scrapes of one instance. */
		@NotNull(message = "dualmap.scrape.interval must be set")
		private Duration interval = Duration.ofMillis(500);

		/** Timeout of one scrape. */
		@NotNull(message = "dualmap.scrape.timeout must be set")
		private Duration timeout = Duration.ofMillis(400);

		/** Random fraction of the interval each instance's schedule is shifted by. */
		@DecimalMin(value = "0", message = "dualmap.scrape.jitter must be in [0, 1)")
		@DecimalMax(value = "1", inclusive = false, message = "dualmap.scrape.jitter must be in [0, 1)")
		private double jitter = 0.2;

		/** Path of the metrics endpoint on each instance. */
		@NotBlank(message = "dualmap.scrape.path must not be blank")
		private String path = "/metrics";

		/** Scraped state older than this counts as unknown. */
		@NotNull(message = "dualmap.scrape.stale-after must be set")
		private Duration staleAfter = Duration.ofSeconds(2);

		/** Instance metadata key overriding the metrics path of one instance. */
		@NotBlank(message = "dualmap.scrape.path-metadata-key must not be blank")
		private String pathMetadataKey = "dualmap.metrics-path";

		/** Largest metrics body read; a larger one is a failed scrape. */
		@NotNull(message = "dualmap.scrape.max-body-size must be set")
		private DataSize maxBodySize = DataSize.ofMegabytes(4);

		/** Per-service overrides, by service id. */
		@Valid
		private Map<String, ScrapeService> services = new LinkedHashMap<>();

		/**
		 * An instance from which nothing has come for this long (no scrape answered, even
		 * with an error status, and no response byte) gets no new requests, and its
		 * queued ones move, until it answers again: an engine that accepts connections
		 * but hangs would otherwise keep its share of requests, each one waiting for the
		 * client or the response timeout. 0 turns it off; set, it must exceed interval +
		 * timeout. Default: 10 s, or 4 x (interval + timeout) when that is longer.
		 */
		private @Nullable Duration unresponsiveAfter;

		@AssertTrue(message = "dualmap.scrape.interval, timeout and stale-after must be > 0")
		private boolean isDurationsPositive() {
			return this.interval.toNanos() > 0 && this.timeout.toNanos() > 0 && this.staleAfter.toNanos() > 0;
		}

		/** Else each scraped state goes stale before the next scrape replaces it. */
		@AssertTrue(message = "dualmap.scrape.stale-after (default 2s) must be longer than dualmap.scrape.interval")
		private boolean isStaleAfterLongerThanInterval() {
			return this.staleAfter.compareTo(this.interval) > 0;
		}

		@AssertTrue(message = "dualmap.scrape.max-body-size must be > 0")
		private boolean isMaxBodySizePositive() {
			return this.maxBodySize.toBytes() > 0;
		}

		@AssertTrue(message = "dualmap.scrape.unresponsive-after must be 0 (off) or longer than interval + timeout")
		private boolean isUnresponsiveAfterValid() {
			return this.unresponsiveAfter == null || this.unresponsiveAfter.isZero()
					|| this.unresponsiveAfter.compareTo(this.interval.plus(this.timeout)) > 0;
		}

		public @Nullable Duration getUnresponsiveAfter() {
			return this.unresponsiveAfter;
		}

		public void setUnresponsiveAfter(@Nullable Duration unresponsiveAfter) {
			this.unresponsiveAfter = unresponsiveAfter;
		}

		/** The silence bound in force: as set, else 10 s or 4 x (interval + timeout). */
		public Duration unresponsiveAfter() {
			if (this.unresponsiveAfter != null) {
				return this.unresponsiveAfter;
			}
			Duration scaled = this.interval.plus(this.timeout).multipliedBy(4);
			return scaled.compareTo(DEFAULT_UNRESPONSIVE_AFTER) > 0 ? scaled : DEFAULT_UNRESPONSIVE_AFTER;
		}

		public DataSize getMaxBodySize() {
			return this.maxBodySize;
		}

		public void setMaxBodySize(DataSize maxBodySize) {
			this.maxBodySize = maxBodySize;
		}

		/** The metrics path of {@code serviceId}: its override, else the default path. */
		public String pathFor(String serviceId) {
			ScrapeService s = this.services.get(serviceId);
			return s != null && s.path != null ? s.path : this.path;
		}

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getInterval() {
			return this.interval;
		}

		public void setInterval(Duration interval) {
			this.interval = interval;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public double getJitter() {
			return this.jitter;
		}

		public void setJitter(double jitter) {
			this.jitter = jitter;
		}

		public String getPath() {
			return this.path;
		}

		public void setPath(String path) {
			this.path = path;
		}

		public Duration getStaleAfter() {
			return this.staleAfter;
		}

		public void setStaleAfter(Duration staleAfter) {
			this.staleAfter = staleAfter;
		}

		public String getPathMetadataKey() {
			return this.pathMetadataKey;
		}

		public void setPathMetadataKey(String pathMetadataKey) {
			this.pathMetadataKey = pathMetadataKey;
		}

		public Map<String, ScrapeService> getServices() {
			return this.services;
		}

		public void setServices(Map<String, ScrapeService> services) {
			this.services = services;
		}

	}

	/** Scrape settings of one service. */
	public static class ScrapeService {

		/** Metrics path of this service's instances, e.g. /actuator/prometheus. */
		private @Nullable String path;

		public @Nullable String getPath() {
			return this.path;
		}

		public void setPath(@Nullable String path) {
			this.path = path;
		}

	}

	/** Per-instance Resilience4j circuit breakers. */
	public static class Breaker {

		/** Failure rate in percent at which an instance's breaker opens. */
		@DecimalMin(value = "0", inclusive = false,
				message = "dualmap.breaker.failure-rate-threshold must be in (0, 100]")
		@DecimalMax(value = "100", message = "dualmap.breaker.failure-rate-threshold must be in (0, 100]")
		private float failureRateThreshold = 50;

		/** Calls in the count-based sliding window. */
		@Min(value = 1, message = "dualmap.breaker.sliding-window-size must be >= 1")
		private int slidingWindowSize = 20;

		/** Calls needed before the failure rate is evaluated. */
		@Min(value = 1, message = "dualmap.breaker.minimum-number-of-calls must be >= 1")
		private int minimumNumberOfCalls = 5;

		/** How long an open breaker keeps the instance out before probing it again. */
		@NotNull(message = "dualmap.breaker.wait-duration-in-open-state must be set")
		private Duration waitDurationInOpenState = Duration.ofSeconds(10);

		/** Probe calls let through while half open. */
		@Min(value = 1, message = "dualmap.breaker.permitted-number-of-calls-in-half-open-state must be >= 1")
		private int permittedNumberOfCallsInHalfOpenState = 2;

		@AssertTrue(message = "dualmap.breaker.wait-duration-in-open-state must be > 0")
		private boolean isWaitPositive() {
			return this.waitDurationInOpenState.toMillis() > 0;
		}

		public float getFailureRateThreshold() {
			return this.failureRateThreshold;
		}

		public void setFailureRateThreshold(float failureRateThreshold) {
			this.failureRateThreshold = failureRateThreshold;
		}

		public int getSlidingWindowSize() {
			return this.slidingWindowSize;
		}

		public void setSlidingWindowSize(int slidingWindowSize) {
			this.slidingWindowSize = slidingWindowSize;
		}

		public int getMinimumNumberOfCalls() {
			return this.minimumNumberOfCalls;
		}

		public void setMinimumNumberOfCalls(int minimumNumberOfCalls) {
			this.minimumNumberOfCalls = minimumNumberOfCalls;
		}

		public Duration getWaitDurationInOpenState() {
			return this.waitDurationInOpenState;
		}

		public void setWaitDurationInOpenState(Duration waitDurationInOpenState) {
			this.waitDurationInOpenState = waitDurationInOpenState;
		}

		public int getPermittedNumberOfCallsInHalfOpenState() {
			return this.permittedNumberOfCallsInHalfOpenState;
		}

		public void setPermittedNumberOfCallsInHalfOpenState(int permittedNumberOfCallsInHalfOpenState) {
			this.permittedNumberOfCallsInHalfOpenState = permittedNumberOfCallsInHalfOpenState;
		}

	}

	/** Response headers that explain each decision. */
	public static class Headers {

		/**
		 * Whether x-dualmap-instance, x-dualmap-reason and x-dualmap-queue-ms are added
		 * to responses.
		 */
		private boolean enabled = true;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

	}

	/**
	 * The {@code ModelList} route filter: what its routes do not set (in route
	 * configuration they set only the services to list).
	 */
	public static class ModelList {

		/** The path of the model list on an instance. */
		@NotNull(message = "dualmap.model-list.path must be set")
		@Pattern(regexp = "/.*", message = "dualmap.model-list.path must start with /")
		private String path = "/v1/models";

		/** How long to wait for one instance's list. */
		@NotNull(message = "dualmap.model-list.timeout must be set")
		private Duration timeout = Duration.ofSeconds(2);

		/**
		 * How long a merged list is served again to the same credentials (0: ask the
		 * instances every time).
		 */
		@NotNull(message = "dualmap.model-list.cache-ttl must be set")
		private Duration cacheTtl = Duration.ofSeconds(5);

		/**
		 * Services DualMap does not route (a plain lb:// pool, such as a speech model's)
		 * whose models are listed too, found through the discovery client.
		 */
		private List<String> otherServices = new ArrayList<>();

		@AssertTrue(message = "dualmap.model-list.timeout must be > 0 and cache-ttl >= 0")
		private boolean isDurationsValid() {
			return this.timeout.toNanos() > 0 && !this.cacheTtl.isNegative();
		}

		public String getPath() {
			return this.path;
		}

		public void setPath(String path) {
			this.path = path;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public Duration getCacheTtl() {
			return this.cacheTtl;
		}

		public void setCacheTtl(Duration cacheTtl) {
			this.cacheTtl = cacheTtl;
		}

		public List<String> getOtherServices() {
			return this.otherServices;
		}

		public void setOtherServices(List<String> otherServices) {
			this.otherServices = otherServices;
		}

	}

	/**
	 * The request id that follows each request on a DualMap route to the engine and back
	 * to the client.
	 */
	public static class RequestId {

		/**
		 * Whether requests get the header: the client's value kept, else a new id; also
		 * on the response.
		 */
		private boolean enabled = true;

		/** The header (vLLM reads X-Request-Id as its own request id). */
		@Pattern(regexp = "[A-Za-z0-9!#$%&'*+.^_`|~-]+",
				message = "dualmap.request-id.header must be an HTTP header name")
		private String header = "x-request-id";

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public String getHeader() {
			return this.header;
		}

		public void setHeader(String header) {
			this.header = header;
		}

	}

	/**
	 * Sending a request once more, to another instance, when the chosen one did not take
	 * it.
	 */
	public static class Retry {

		/**
		 * Response statuses of an instance that send the request once more to another
		 * instance, when they come before any response body byte (an engine that refuses
		 * work: overloaded, draining, starting). Connect failures are always retried
		 * once. Empty: only connect failures.
		 */
		@NotNull(message = "dualmap.retry.statuses must be set")
		private List<Integer> statuses = new ArrayList<>(List.of(429, 503));

		public List<Integer> getStatuses() {
			return this.statuses;
		}

		public void setStatuses(List<Integer> statuses) {
			this.statuses = statuses;
		}

		@AssertTrue(message = "dualmap.retry.statuses must be HTTP error statuses (400 to 599)")
		boolean isStatusesErrors() {
			return this.statuses == null || this.statuses.stream().allMatch(s -> s != null && s >= 400 && s <= 599);
		}

	}

	/**
	 * Responses API continuations ({@code previous_response_id}) go back to the instance
	 * that answered the response they continue (see docs/operations.md, "Stored
	 * responses").
	 */
	public static class StoredResponses {

		/** Whether the gateway remembers which instance answered which response. */
		private boolean enabled = true;

		/**
		 * Most responses remembered; beyond, the least used are forgotten (Caffeine's
		 * size eviction).
		 */
		@Min(value = 1, message = "dualmap.stored-responses.max-entries must be >= 1")
		private long maxEntries = 100_000;

		/** How long a response is remembered after it was answered. */
		@NotNull(message = "dualmap.stored-responses.ttl must be set")
		private Duration ttl = Duration.ofHours(1);

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public long getMaxEntries() {
			return this.maxEntries;
		}

		public void setMaxEntries(long maxEntries) {
			this.maxEntries = maxEntries;
		}

		public Duration getTtl() {
			return this.ttl;
		}

		public void setTtl(Duration ttl) {
			this.ttl = ttl;
		}

		@AssertTrue(message = "dualmap.stored-responses.ttl must be > 0")
		boolean isTtlPositive() {
			return this.ttl == null || this.ttl.toNanos() > 0;
		}

	}

	/**
	 * Late binding: per-instance dispatch queues in the gateway, released by prefill
	 * capacity (see docs/operations.md, "Dispatch queues").
	 */
	public static class Dispatch {

		/**
		 * queue: requests wait in the gateway until their instance has prefill capacity
		 * (and can still be moved); pass-through: sent as soon as they are chosen.
		 */
		@NotNull(message = "dualmap.dispatch.mode must be queue or pass-through")
		private DispatchMode mode = DispatchMode.QUEUE;

		/** Release while fewer requests than this are in prefill on the instance. */
		@Min(value = 1, message = "dualmap.dispatch.max-prefill-requests must be >= 1")
		private int maxPrefillRequests = QueueSettings.DEFAULT_MAX_PREFILL_REQUESTS;

		/**
		 * And while the uncached tokens in prefill plus the next request's stay within
		 * this.
		 */
		@Min(value = 1, message = "dualmap.dispatch.max-prefill-tokens must be >= 1")
		private long maxPrefillTokens = QueueSettings.DEFAULT_MAX_PREFILL_TOKENS;

		/**
		 * A request queued longer than this is served in arrival order ahead of the
		 * longest-cached-prefix-first order (no starvation).
		 */
		@NotNull(message = "dualmap.dispatch.aging must be set")
		private Duration aging = Duration.ofSeconds(2);

		/**
		 * Requests one instance may hold queued; beyond it the other candidate, then 429.
		 */
		@Min(value = 1, message = "dualmap.dispatch.max-queued-per-instance must be >= 1")
		private int maxQueuedPerInstance = 256;

		/**
		 * Requests the whole pool may hold queued (bodies stay in memory); beyond, 429.
		 */
		@Min(value = 1, message = "dualmap.dispatch.max-queued-per-pool must be >= 1")
		private int maxQueuedPerPool = 1024;

		/** A request queued this long is expired (see expiry). */
		@NotNull(message = "dualmap.dispatch.max-wait must be set")
		private Duration maxWait = Duration.ofSeconds(30);

		/** reject: 503 with Retry-After; dispatch: send it to its instance anyway. */
		@NotNull(message = "dualmap.dispatch.expiry must be reject or dispatch")
		private QueueSettings.Expiry expiry = QueueSettings.Expiry.REJECT;

		/**
		 * With expiry reject, a queued request also expires once it has waited this share
		 * of its own TTFT SLO; 0 turns it off.
		 */
		@DecimalMin(value = "0", message = "dualmap.dispatch.max-wait-share must be >= 0")
		@DecimalMax(value = "1000", message = "dualmap.dispatch.max-wait-share must be <= 1000")
		// QueueSettings.DEFAULT_MAX_WAIT_SHARE, as a literal the metadata can show.
		private double maxWaitShare = 0.5;

		public double getMaxWaitShare() {
			return this.maxWaitShare;
		}

		/**
		 * With expiry reject, an expired request first goes to another instance that can
		 * start it at once and still make its SLO, if there is one.
		 */
		private boolean rescue = true;

		public boolean isRescue() {
			return this.rescue;
		}

		public void setRescue(boolean rescue) {
			this.rescue = rescue;
		}

		/**
		 * With rescue, an expired request that no instance can start now joins the queue
		 * of the instance with the lowest TTFT estimate, when that still fits what is
		 * left of its SLO; it is rejected if it cannot start there in time.
		 */
		private boolean rescueToQueue = true;

		public boolean isRescueToQueue() {
			return this.rescueToQueue;
		}

		public void setRescueToQueue(boolean rescueToQueue) {
			this.rescueToQueue = rescueToQueue;
		}

		/**
		 * Hotspot migration and idle pull move only a queued request that would miss its
		 * SLO where it waits, and a hotspot move goes only to an instance that can start
		 * it now; false: any move whose gain beats the migration margin.
		 */
		private boolean moveLateOnly = true;

		/**
		 * With expiry reject, a request about to be released whose wait so far plus its
		 * TTFT estimate there exceeds its SLO is not sent while other requests wait: it
		 * is rescued to an instance where it can still make its SLO, or answered 503.
		 */
		private boolean shedHopeless = true;

		/**
		 * Release nothing to an instance whose engine, as last scraped (and not older
		 * than scrape.stale-after), has more requests waiting in its own queue than this
		 * gateway (with its peers, under replica sync) had in prefill there when the
		 * snapshot arrived: a backlog of other gateway replicas that do not share their
		 * load (replica sync off), or requests the engine preempted. Several replicas
		 * then keep one engine queue between them instead of filling one prefill budget
		 * each. Without a fresh scrape (scraping off, failed or stale) the release limits
		 * alone apply; false: always the release limits alone.
		 */
		private boolean holdOnEngineQueue = true;

		public boolean isHoldOnEngineQueue() {
			return this.holdOnEngineQueue;
		}

		public void setHoldOnEngineQueue(boolean holdOnEngineQueue) {
			this.holdOnEngineQueue = holdOnEngineQueue;
		}

		public boolean isShedHopeless() {
			return this.shedHopeless;
		}

		public void setShedHopeless(boolean shedHopeless) {
			this.shedHopeless = shedHopeless;
		}

		public boolean isMoveLateOnly() {
			return this.moveLateOnly;
		}

		public void setMoveLateOnly(boolean moveLateOnly) {
			this.moveLateOnly = moveLateOnly;
		}

		public void setMaxWaitShare(double maxWaitShare) {
			this.maxWaitShare = maxWaitShare;
		}

		/** Times the rebalancer may move one queued request. */
		@Min(value = 0, message = "dualmap.dispatch.max-migrations must be >= 0")
		private int maxMigrations = 2;

		/**
		 * Whether an instance with spare prefill capacity pulls queued requests whose
		 * other candidate it is.
		 */
		private boolean idlePull = true;

		public boolean isIdlePull() {
			return this.idlePull;
		}

		public void setIdlePull(boolean idlePull) {
			this.idlePull = idlePull;
		}

		/**
		 * Whether requests of other SLO classes age in proportion to their SLO and full
		 * queues shed a looser class for a tighter arrival.
		 */
		private boolean sloAware = true;

		public boolean isSloAware() {
			return this.sloAware;
		}

		public void setSloAware(boolean sloAware) {
			this.sloAware = sloAware;
		}

		/**
		 * A move must improve the request's TTFT estimate by more than this fraction of
		 * its SLO.
		 */
		@DecimalMin(value = "0", message = "dualmap.dispatch.migration-margin must be in [0, 1)")
		@DecimalMax(value = "1", inclusive = false, message = "dualmap.dispatch.migration-margin must be in [0, 1)")
		private double migrationMargin = 0.1;

		/** Bound on moves per rebalancing pass, so one event does bounded work. */
		@Min(value = 1, message = "dualmap.dispatch.max-moves-per-event must be >= 1")
		private int maxMovesPerEvent = 16;

		/** Retry-After of a 503 when no instance accepts requests. */
		@NotNull(message = "dualmap.dispatch.unavailable-retry-after must be set")
		private Duration unavailableRetryAfter = Duration.ofSeconds(5);

		/**
		 * How often queue expiry and estimated ends of non-streaming prefills are
		 * checked.
		 */
		@NotNull(message = "dualmap.dispatch.tick-interval must be set")
		private Duration tickInterval = Duration.ofMillis(50);

		@AssertTrue(message = "dualmap.dispatch.aging must be > 0")
		private boolean isAgingPositive() {
			return this.aging.toNanos() > 0;
		}

		@AssertTrue(message = "dualmap.dispatch.max-wait must be > 0")
		private boolean isMaxWaitPositive() {
			return this.maxWait.toNanos() > 0;
		}

		@AssertTrue(message = "dualmap.dispatch.unavailable-retry-after must be > 0")
		private boolean isUnavailableRetryAfterPositive() {
			return this.unavailableRetryAfter.toNanos() > 0;
		}

		@AssertTrue(message = "dualmap.dispatch.tick-interval must be >= 1ms")
		private boolean isTickIntervalPositive() {
			return this.tickInterval.toMillis() >= 1;
		}

		public DispatchMode getMode() {
			return this.mode;
		}

		public void setMode(DispatchMode mode) {
			this.mode = mode;
		}

		public int getMaxPrefillRequests() {
			return this.maxPrefillRequests;
		}

		public void setMaxPrefillRequests(int maxPrefillRequests) {
			this.maxPrefillRequests = maxPrefillRequests;
		}

		public long getMaxPrefillTokens() {
			return this.maxPrefillTokens;
		}

		public void setMaxPrefillTokens(long maxPrefillTokens) {
			this.maxPrefillTokens = maxPrefillTokens;
		}

		public Duration getAging() {
			return this.aging;
		}

		public void setAging(Duration aging) {
			this.aging = aging;
		}

		public int getMaxQueuedPerInstance() {
			return this.maxQueuedPerInstance;
		}

		public void setMaxQueuedPerInstance(int maxQueuedPerInstance) {
			this.maxQueuedPerInstance = maxQueuedPerInstance;
		}

		public int getMaxQueuedPerPool() {
			return this.maxQueuedPerPool;
		}

		public void setMaxQueuedPerPool(int maxQueuedPerPool) {
			this.maxQueuedPerPool = maxQueuedPerPool;
		}

		public Duration getMaxWait() {
			return this.maxWait;
		}

		public void setMaxWait(Duration maxWait) {
			this.maxWait = maxWait;
		}

		public QueueSettings.Expiry getExpiry() {
			return this.expiry;
		}

		public void setExpiry(QueueSettings.Expiry expiry) {
			this.expiry = expiry;
		}

		public int getMaxMigrations() {
			return this.maxMigrations;
		}

		public void setMaxMigrations(int maxMigrations) {
			this.maxMigrations = maxMigrations;
		}

		public double getMigrationMargin() {
			return this.migrationMargin;
		}

		public void setMigrationMargin(double migrationMargin) {
			this.migrationMargin = migrationMargin;
		}

		public int getMaxMovesPerEvent() {
			return this.maxMovesPerEvent;
		}

		public void setMaxMovesPerEvent(int maxMovesPerEvent) {
			this.maxMovesPerEvent = maxMovesPerEvent;
		}

		public Duration getUnavailableRetryAfter() {
			return this.unavailableRetryAfter;
		}

		public void setUnavailableRetryAfter(Duration unavailableRetryAfter) {
			this.unavailableRetryAfter = unavailableRetryAfter;
		}

		public Duration getTickInterval() {
			return this.tickInterval;
		}

		public void setTickInterval(Duration tickInterval) {
			this.tickInterval = tickInterval;
		}

	}

	/** How the gateway follows discovery. */
	public static class Discovery {

		/**
		 * How often each service's instance list is read, from startup on, so rings and
		 * scraping exist before the first request and a removed instance's queue is
		 * re-routed without waiting for traffic. The list itself may be cached by
		 * Spring's load balancer (spring.cloud.loadbalancer.cache.ttl).
		 */
		@NotNull(message = "dualmap.discovery.refresh-interval must be set")
		private Duration refreshInterval = Duration.ofSeconds(1);

		@AssertTrue(message = "dualmap.discovery.refresh-interval must be >= 1ms")
		private boolean isRefreshIntervalPositive() {
			return this.refreshInterval.toMillis() >= 1;
		}

		public Duration getRefreshInterval() {
			return this.refreshInterval;
		}

		public void setRefreshInterval(Duration refreshInterval) {
			this.refreshInterval = refreshInterval;
		}

		/**
		 * How long a pool keeps its last known instances while discovery lists none.
		 * Spring's load balancer answers a failed or timed-out discovery read with an
		 * empty list (and may cache it for spring.cloud.loadbalancer.cache.ttl, 35s by
		 * default); taken at its word, it would reject every queued request and forget
		 * drains, requests in flight and breakers. A pool really scaled to zero empties
		 * after this long. 0 applies an empty list at once.
		 */
		@NotNull(message = "dualmap.discovery.empty-list-grace must be set")
		private Duration emptyListGrace = Duration.ofSeconds(60);

		@AssertTrue(message = "dualmap.discovery.empty-list-grace must be >= 0")
		private boolean isEmptyListGraceNotNegative() {
			return !this.emptyListGrace.isNegative();
		}

		public Duration getEmptyListGrace() {
			return this.emptyListGrace;
		}

		public void setEmptyListGrace(Duration emptyListGrace) {
			this.emptyListGrace = emptyListGrace;
		}

	}

	/**
	 * Replica sync: gateway replicas tell each other which prompt blocks they sent to
	 * which instance, so every replica's shadow index knows which of a prompt's two
	 * candidates holds it, whichever replica routed it before.
	 */
	public static class Replicas {

		/** Whether this replica publishes its releases and accepts its peers'. */
		private boolean enabled = false;

		/**
		 * Shared secret: sent as a bearer token and required on the receiving endpoint.
		 * Required when enabled (the endpoint writes routing state).
		 */
		private @Nullable String token;

		/**
		 * Base URLs of the other replicas, e.g. https://gateway-1:8443. Across a network,
		 * https: the token is sent with every publication.
		 */
		private List<URI> peers = new ArrayList<>();

		/**
		 * Name of a Spring Boot SSL bundle (spring.ssl.bundle.*) whose trust store
		 * verifies the certificates of https:// peers, and whose key store, if it has
		 * one, is this replica's client certificate. Unset: the JVM's default trust
		 * store.
		 */
		private @Nullable String sslBundle;

		/**
		 * Discovery service id of the gateway itself: its instances are peers too (this
		 * replica recognises and skips itself).
		 */
		private @Nullable String serviceId;

		/** How often the peer list is read from discovery (with service-id). */
		@NotNull(message = "dualmap.replicas.peer-refresh-interval must be set")
		private Duration peerRefreshInterval = Duration.ofSeconds(10);

		/** Path of the receiving endpoint on every replica's server port. */
		@NotBlank(message = "dualmap.replicas.path must not be blank")
		@Pattern(regexp = "/[A-Za-z0-9._~/-]*",
				message = "dualmap.replicas.path must be a path starting with / of letters, digits and ._~/-")
		private String path = "/dualmap/replicas/releases";

		/** Time between two publications to the peers. */
		@NotNull(message = "dualmap.replicas.flush-interval must be set")
		private Duration flushInterval = Duration.ofMillis(50);

		/** Timeout of one publication to one peer. */
		@NotNull(message = "dualmap.replicas.timeout must be set")
		private Duration timeout = Duration.ofSeconds(1);

		/** Most releases in one publication (the rest wait for the next). */
		@Min(value = 1, message = "dualmap.replicas.max-batch-releases must be >= 1")
		private int maxBatchReleases = 2048;

		/**
		 * Most releases waiting to be published, between two flushes and in each peer's
		 * pending list while its publication is open; beyond it releases are dropped (and
		 * counted): peers learn less, nothing else is lost.
		 */
		@Min(value = 1, message = "dualmap.replicas.max-buffered-releases must be >= 1")
		private int maxBufferedReleases = 16384;

		/**
		 * Largest publication body accepted from a peer (a larger one gets 413); also the
		 * size of the snapshot a starting peer is given and accepts.
		 */
		@NotNull(message = "dualmap.replicas.max-body-size must be set")
		private DataSize maxBodySize = DataSize.ofMegabytes(16);

		/**
		 * Whether a starting replica asks its peers for what they know (their shadow
		 * indexes) before it learns from their new releases.
		 */
		private boolean bootstrap = true;

		/**
		 * Whether replicas share their load too: each publishes, with every flush, its
		 * requests and tokens in prefill and its queued tokens per instance, and counts
		 * its peers' in the dispatch queues' release limit and in its load estimates.
		 */
		private boolean shareLoad = true;

		/**
		 * How long a peer's published load counts after its last publication (a peer that
		 * stopped or cannot reach this replica stops counting then). Longer than
		 * flush-interval; unset: 4 x flush-interval, at least 1s.
		 */
		private @Nullable Duration loadTtl;

		@AssertTrue(message = "dualmap.replicas.load-ttl must be longer than dualmap.replicas.flush-interval")
		private boolean isLoadTtlBeyondFlush() {
			return this.loadTtl == null || this.loadTtl.compareTo(this.flushInterval) > 0;
		}

		/**
		 * The load TTL in effect: {@code load-ttl}, else 4 x flush-interval, at least 1
		 * s.
		 */
		public Duration effectiveLoadTtl() {
			if (this.loadTtl != null) {
				return this.loadTtl;
			}
			Duration derived = this.flushInterval.multipliedBy(4);
			return derived.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : derived;
		}

		public boolean isShareLoad() {
			return this.shareLoad;
		}

		public void setShareLoad(boolean shareLoad) {
			this.shareLoad = shareLoad;
		}

		public @Nullable Duration getLoadTtl() {
			return this.loadTtl;
		}

		public void setLoadTtl(@Nullable Duration loadTtl) {
			this.loadTtl = loadTtl;
		}

		@AssertTrue(message = "dualmap.replicas.token must be set when dualmap.replicas.enabled=true")
		private boolean isTokenSetWhenEnabled() {
			return !this.enabled || (this.token != null && !this.token.isBlank());
		}

		// \$ and \{ \}: literal text to Hibernate Validator, not an EL expression.
		@AssertTrue(message = "dualmap.replicas.token is an unresolved \\$\\{...\\} placeholder; "
				+ "set the variable it names")
		private boolean isTokenResolved() {
			return this.token == null || !this.token.contains("${");
		}

		@AssertTrue(message = "dualmap.replicas.flush-interval, timeout and peer-refresh-interval must be >= 1ms")
		private boolean isDurationsPositive() {
			return this.flushInterval.toMillis() >= 1 && this.timeout.toMillis() >= 1
					&& this.peerRefreshInterval.toMillis() >= 1;
		}

		@AssertTrue(message = "dualmap.replicas.peers must be absolute http or https URLs")
		private boolean isPeersHttp() {
			return this.peers.stream()
				.allMatch(u -> u != null && u.getHost() != null
						&& ("http".equalsIgnoreCase(u.getScheme()) || "https".equalsIgnoreCase(u.getScheme())));
		}

		@AssertTrue(message = "dualmap.replicas.max-body-size must be > 0")
		private boolean isMaxBodySizePositive() {
			return this.maxBodySize.toBytes() > 0;
		}

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public @Nullable String getToken() {
			return this.token;
		}

		public void setToken(@Nullable String token) {
			this.token = token;
		}

		public List<URI> getPeers() {
			return this.peers;
		}

		public void setPeers(List<URI> peers) {
			this.peers = peers;
		}

		public @Nullable String getServiceId() {
			return this.serviceId;
		}

		public void setServiceId(@Nullable String serviceId) {
			this.serviceId = serviceId;
		}

		public Duration getPeerRefreshInterval() {
			return this.peerRefreshInterval;
		}

		public void setPeerRefreshInterval(Duration peerRefreshInterval) {
			this.peerRefreshInterval = peerRefreshInterval;
		}

		public String getPath() {
			return this.path;
		}

		public void setPath(String path) {
			this.path = path;
		}

		public Duration getFlushInterval() {
			return this.flushInterval;
		}

		public void setFlushInterval(Duration flushInterval) {
			this.flushInterval = flushInterval;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public int getMaxBatchReleases() {
			return this.maxBatchReleases;
		}

		public void setMaxBatchReleases(int maxBatchReleases) {
			this.maxBatchReleases = maxBatchReleases;
		}

		public int getMaxBufferedReleases() {
			return this.maxBufferedReleases;
		}

		public void setMaxBufferedReleases(int maxBufferedReleases) {
			this.maxBufferedReleases = maxBufferedReleases;
		}

		public @Nullable String getSslBundle() {
			return this.sslBundle;
		}

		public void setSslBundle(@Nullable String sslBundle) {
			this.sslBundle = sslBundle;
		}

		public boolean isBootstrap() {
			return this.bootstrap;
		}

		public void setBootstrap(boolean bootstrap) {
			this.bootstrap = bootstrap;
		}

		public DataSize getMaxBodySize() {
			return this.maxBodySize;
		}

		public void setMaxBodySize(DataSize maxBodySize) {
			this.maxBodySize = maxBodySize;
		}

	}

}

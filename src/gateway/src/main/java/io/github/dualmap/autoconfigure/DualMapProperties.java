package io.github.dualmap.autoconfigure;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.core.TieBreak;
import io.github.dualmap.gateway.BodyLimits;
import io.github.dualmap.gateway.DispatchAccountingFilter;
import jakarta.validation.Valid;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * The {@code dualmap.*} configuration, validated at startup with messages that name the
 * bad property: the gateway-wide values here, each group of the rest in a class of its
 * own ({@code dualmap.dispatch.*} in {@link DispatchProperties}, ...), whose checks sit
 * beside its values. {@link CoreSettingsMapper} maps it to the core's settings.
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
	private Map<String, PoolProperties> pools = new LinkedHashMap<>();

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
	 * Longest silence of an instance's answer once its status line came: no body byte for
	 * this long (a stream's first token, or its next) ends the request, with 504 before
	 * anything reached the client and a cut stream after. 0 turns it off.
	 */
	@NotNull(message = "dualmap.response-idle-timeout must be set")
	private Duration responseIdleTimeout = DispatchAccountingFilter.DEFAULT_IDLE_TIMEOUT;

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
	private double switchFactor = SchedulerSettings.DEFAULT_SWITCH_FACTOR;

	/**
	 * The SLO switch also needs the other candidate's estimate lower by more than this
	 * factor times the prefill time of the cached prefix it gives up (0: whenever lower).
	 */
	@DecimalMin(value = "0", message = "dualmap.switch-hit-charge must be >= 0")
	@DecimalMax(value = "1000", message = "dualmap.switch-hit-charge must be <= 1000")
	private double switchHitCharge = SchedulerSettings.DEFAULT_SWITCH_HIT_CHARGE;

	/**
	 * The SLO switch never moves a request to a candidate that holds less of its prompt
	 * while that candidate's scraped KV cache usage is above this share (1: off): a cold
	 * prompt's blocks where the cache is full preempt more than the switch gains (the
	 * queue's rescue has its own limit, {@code dispatch.rescue-max-kv-usage}).
	 */
	@DecimalMin(value = "0", inclusive = false, message = "dualmap.switch-max-kv-usage must be in (0, 1]")
	@DecimalMax(value = "1", message = "dualmap.switch-max-kv-usage must be in (0, 1]")
	private double switchMaxKvUsage = SchedulerSettings.DEFAULT_SWITCH_MAX_KV_USAGE;

	/**
	 * How a request chooses between candidates that hold the same cached prefix of it
	 * (typically none): auto (ring order while either candidate's engine, as last
	 * scraped, holds requests this gateway did not send and no peer publishes its load
	 * there, such as other replicas' without replica sync; else the lower TTFT estimate),
	 * estimate, or ring-order. Replicas that cannot see each other's load agree on ring
	 * order, so a conversation whose turns reach different replicas stays on one
	 * instance.
	 */
	private TieBreak tieBreak = SchedulerSettings.DEFAULT_TIE_BREAK;

	/**
	 * When both candidates would miss the SLO, also consider a bounded third instance.
	 */
	private boolean thirdChoice = SchedulerSettings.DEFAULT_THIRD_CHOICE;

	/** A new instance's share ramps up over this period (0 turns slow start off). */
	@NotNull(message = "dualmap.slow-start must be set")
	private Duration slowStart = SchedulerSettings.DEFAULT_SLOW_START;

	@Valid
	@NestedConfigurationProperty
	private final SloProperties slo = new SloProperties();

	@Valid
	@NestedConfigurationProperty
	private final PromptProperties prompt = new PromptProperties();

	@Valid
	@NestedConfigurationProperty
	private final RingProperties ring = new RingProperties();

	@Valid
	@NestedConfigurationProperty
	private final HotPrefixProperties hotPrefix = new HotPrefixProperties();

	@Valid
	@NestedConfigurationProperty
	private final HotspotProperties hotspot = new HotspotProperties();

	@Valid
	@NestedConfigurationProperty
	private final ColdProperties cold = new ColdProperties();

	@Valid
	@NestedConfigurationProperty
	private final TtftProperties ttft = new TtftProperties();

	@Valid
	@NestedConfigurationProperty
	private final ShadowProperties shadow = new ShadowProperties();

	@Valid
	@NestedConfigurationProperty
	private final ScrapeProperties scrape = new ScrapeProperties();

	@Valid
	@NestedConfigurationProperty
	private final BreakerProperties breaker = new BreakerProperties();

	@NestedConfigurationProperty
	private final HeadersProperties headers = new HeadersProperties();

	@Valid
	@NestedConfigurationProperty
	private final RequestIdProperties requestId = new RequestIdProperties();

	@Valid
	@NestedConfigurationProperty
	private final ModelListProperties modelList = new ModelListProperties();

	@Valid
	@NestedConfigurationProperty
	private final StoredResponsesProperties storedResponses = new StoredResponsesProperties();

	@Valid
	@NestedConfigurationProperty
	private final RetryProperties retry = new RetryProperties();

	@Valid
	@NestedConfigurationProperty
	private final DispatchProperties dispatch = new DispatchProperties();

	@Valid
	@NestedConfigurationProperty
	private final DiscoveryProperties discovery = new DiscoveryProperties();

	@Valid
	@NestedConfigurationProperty
	private final ReplicasProperties replicas = new ReplicasProperties();

	/** The gateway's own HTTP server. */
	@Valid
	@NestedConfigurationProperty
	private final HttpServerProperties server = new HttpServerProperties();

	/** The dualmap.* meters. */
	@Valid
	@NestedConfigurationProperty
	private final MetricsProperties metrics = new MetricsProperties();

	/** Who may use DualMap's write operations when Spring Security is present. */
	@Valid
	@NestedConfigurationProperty
	private final SecurityRolesProperties security = new SecurityRolesProperties();

	/**
	 * dualmap.tenants.*, which TenantProperties binds (its fixed properties and
	 * dualmap.tenants.default.*) and TenantDirectory reads (the named tenants): bound
	 * here too so that {@link KnownNames} checks every key of it whether tenants are on
	 * or not (TenantProperties' binding passes over a key it does not know under one of
	 * its groups), and so that ignoreUnknownFields = false does not refuse it where
	 * SharedPrefixBindHandlerAdvisor does not see TenantProperties ({@code sim --set}).
	 * Package-private accessors: not a property of this class in the IDE metadata.
	 */
	private Map<String, Object> tenants = new LinkedHashMap<>();

	@AssertTrue(message = "dualmap.model-list.other-services must not name a service of dualmap.services")
	private boolean isModelListOthersOutside() {
		return this.modelList.getOtherServices().stream().noneMatch(this.services::contains);
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

	@AssertTrue(message = "dualmap.response-idle-timeout must be >= 0")
	private boolean isResponseIdleTimeoutNonNegative() {
		return !this.responseIdleTimeout.isNegative();
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

	/**
	 * The scheduler settings these properties describe, before per-pool overrides (for
	 * the simulator; the gateway maps each pool through {@link CoreSettingsMapper}).
	 */
	public SchedulerSettings toSchedulerSettings() {
		return new CoreSettingsMapper(this).schedulerSettings();
	}

	/**
	 * The dispatch queue settings these properties describe, before per-pool overrides
	 * (for the simulator; the gateway maps each pool through {@link CoreSettingsMapper}).
	 */
	public QueueSettings toQueueSettings() {
		return new CoreSettingsMapper(this).queueSettings();
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

	public Map<String, PoolProperties> getPools() {
		return this.pools;
	}

	public void setPools(Map<String, PoolProperties> pools) {
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

	public Duration getResponseIdleTimeout() {
		return this.responseIdleTimeout;
	}

	public void setResponseIdleTimeout(Duration responseIdleTimeout) {
		this.responseIdleTimeout = responseIdleTimeout;
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

	public TieBreak getTieBreak() {
		return this.tieBreak;
	}

	public void setTieBreak(TieBreak tieBreak) {
		this.tieBreak = tieBreak;
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

	public SloProperties getSlo() {
		return this.slo;
	}

	public PromptProperties getPrompt() {
		return this.prompt;
	}

	public RingProperties getRing() {
		return this.ring;
	}

	public HotPrefixProperties getHotPrefix() {
		return this.hotPrefix;
	}

	public HotspotProperties getHotspot() {
		return this.hotspot;
	}

	public ColdProperties getCold() {
		return this.cold;
	}

	public TtftProperties getTtft() {
		return this.ttft;
	}

	public ShadowProperties getShadow() {
		return this.shadow;
	}

	public ScrapeProperties getScrape() {
		return this.scrape;
	}

	public BreakerProperties getBreaker() {
		return this.breaker;
	}

	public RequestIdProperties getRequestId() {
		return this.requestId;
	}

	public ModelListProperties getModelList() {
		return this.modelList;
	}

	public HeadersProperties getHeaders() {
		return this.headers;
	}

	public StoredResponsesProperties getStoredResponses() {
		return this.storedResponses;
	}

	public RetryProperties getRetry() {
		return this.retry;
	}

	public DispatchProperties getDispatch() {
		return this.dispatch;
	}

	public DiscoveryProperties getDiscovery() {
		return this.discovery;
	}

	public ReplicasProperties getReplicas() {
		return this.replicas;
	}

	public HttpServerProperties getServer() {
		return this.server;
	}

	public MetricsProperties getMetrics() {
		return this.metrics;
	}

	public SecurityRolesProperties getSecurity() {
		return this.security;
	}

	Map<String, Object> getTenants() {
		return this.tenants;
	}

	void setTenants(Map<String, Object> tenants) {
		this.tenants = tenants;
	}

}

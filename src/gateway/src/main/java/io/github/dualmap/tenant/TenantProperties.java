package io.github.dualmap.tenant;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.validation.Valid;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Positive;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * The {@code dualmap.tenants.*} configuration: how a request's tenant is found, the
 * defaults of every tenant ({@code dualmap.tenants.default.*}), the cost weights, the
 * store of the budgets. The named tenants ({@code dualmap.tenants.<name>.*}) are read by
 * {@link TenantDirectory}, with the same fields as {@link Tenant}.
 */
@ConfigurationProperties(prefix = TenantProperties.PREFIX)
@Validated
public class TenantProperties {

	/** The prefix of every property. */
	public static final String PREFIX = "dualmap.tenants";

	/**
	 * Whether requests on DualMap routes are counted per tenant: tenant resolution, token
	 * budgets, rate-limit headers and the gen_ai.* meters.
	 */
	private boolean enabled = false;

	/**
	 * Request header naming the tenant (when no key resolver is set); a request without
	 * it is tenant 'default'. Only trustworthy when a proxy in front sets or checks it.
	 */
	@NotBlank(message = "dualmap.tenants.header must not be blank")
	@Pattern(regexp = "[A-Za-z0-9!#$%&'*+.^_`|~-]*", message = "dualmap.tenants.header must be an HTTP header name")
	private String header = "x-tenant-id";

	/**
	 * Name of a Spring Cloud Gateway KeyResolver bean that resolves the tenant (the
	 * contract of the RequestRateLimiter filter), in place of the header. An empty result
	 * is tenant 'default'.
	 */
	private @Nullable String keyResolver;

	/**
	 * Whether the dispatch queues share each pool between tenants (weighted fair queuing
	 * on virtual token counters, with strict priority bands): releases give every tenant
	 * waiting for a pool its weighted share of the pool's service, and a full queue sheds
	 * the lowest band first. Off: requests wait in the queues' own order whatever their
	 * tenant, and /actuator/dualmap shows no share.
	 */
	private boolean fairness = true;

	/**
	 * enforce: a request over its tenant's budget gets 429. shadow: budgets are counted,
	 * reported in headers, meters and the actuator, and never refuse.
	 */
	@NotNull(message = "dualmap.tenants.mode must be set")
	private TenantMode mode = TenantMode.ENFORCE;

	/**
	 * Where budgets are kept: local (this gateway's memory) or redis (shared by every
	 * replica through Spring Data Redis's reactive client; spring.data.redis.* configure
	 * the connection).
	 */
	@NotNull(message = "dualmap.tenants.store must be set")
	private BudgetStoreKind store = BudgetStoreKind.LOCAL;

	/**
	 * Most unlisted tenants (names clients send that are not configured) whose budgets
	 * this gateway keeps in memory, the least used evicted first (by how often and how
	 * recently they were charged); configured tenants' budgets are always kept.
	 */
	@Min(value = 1, message = "dualmap.tenants.max-tracked must be >= 1")
	private int maxTracked = 10_000;

	/**
	 * Longest tenant name accepted (letters, digits and . _ : @ -); a longer one, or one
	 * with other characters, gets 400.
	 */
	@Min(value = 1, message = "dualmap.tenants.max-name-length must be >= 1")
	@Max(value = 256, message = "dualmap.tenants.max-name-length must be <= 256")
	private int maxNameLength = 64;

	/**
	 * Completion tokens a request is admitted for when it sets neither max_tokens nor
	 * max_completion_tokens (nor max_output_tokens); its actual usage is charged when it
	 * ends.
	 */
	@Min(value = 1, message = "dualmap.tenants.default-max-tokens must be >= 1")
	private long defaultMaxTokens = 1024;

	/**
	 * Largest non-streamed response body, or single streamed event, read for its usage; a
	 * larger one is passed on unread and charged from the estimate.
	 */
	@NotNull(message = "dualmap.tenants.max-usage-body-size must be set")
	private DataSize maxUsageBodySize = DataSize.ofMegabytes(1);

	@AssertTrue(message = "dualmap.tenants.max-usage-body-size must be > 0")
	private boolean isMaxUsageBodySizePositive() {
		return this.maxUsageBodySize == null || this.maxUsageBodySize.toBytes() > 0;
	}

	/** The weight of each kind of token in a request's cost. */
	@Valid
	private final Cost cost = new Cost();

	/** The Redis store (dualmap.tenants.store=redis). */
	@Valid
	private final Redis redis = new Redis();

	/**
	 * Settings of every tenant that does not set its own: unlisted tenants, tenant
	 * 'default' and the fields a named tenant leaves out.
	 */
	@Valid
	private final Tenant defaults = new Tenant();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public boolean isFairness() {
		return this.fairness;
	}

	public void setFairness(boolean fairness) {
		this.fairness = fairness;
	}

	public String getHeader() {
		return this.header;
	}

	public void setHeader(String header) {
		this.header = header;
	}

	public @Nullable String getKeyResolver() {
		return this.keyResolver;
	}

	public void setKeyResolver(@Nullable String keyResolver) {
		this.keyResolver = keyResolver;
	}

	public TenantMode getMode() {
		return this.mode;
	}

	public void setMode(TenantMode mode) {
		this.mode = mode;
	}

	public BudgetStoreKind getStore() {
		return this.store;
	}

	public void setStore(BudgetStoreKind store) {
		this.store = store;
	}

	public int getMaxTracked() {
		return this.maxTracked;
	}

	public void setMaxTracked(int maxTracked) {
		this.maxTracked = maxTracked;
	}

	public int getMaxNameLength() {
		return this.maxNameLength;
	}

	public void setMaxNameLength(int maxNameLength) {
		this.maxNameLength = maxNameLength;
	}

	public long getDefaultMaxTokens() {
		return this.defaultMaxTokens;
	}

	public void setDefaultMaxTokens(long defaultMaxTokens) {
		this.defaultMaxTokens = defaultMaxTokens;
	}

	public DataSize getMaxUsageBodySize() {
		return this.maxUsageBodySize;
	}

	public void setMaxUsageBodySize(DataSize maxUsageBodySize) {
		this.maxUsageBodySize = maxUsageBodySize;
	}

	public Cost getCost() {
		return this.cost;
	}

	public Redis getRedis() {
		return this.redis;
	}

	/** {@code dualmap.tenants.default.*}. */
	public Tenant getDefault() {
		return this.defaults;
	}

	/** Whether refused requests get 429 or only count. */
	public enum TenantMode {

		/** Over budget: 429. */
		ENFORCE,

		/** Over budget: counted and reported, served all the same. */
		SHADOW

	}

	/** Where budgets are kept. */
	public enum BudgetStoreKind {

		/** This gateway's memory. */
		LOCAL,

		/** A Redis server shared by every gateway replica. */
		REDIS

	}

	/** What Redis failing does to admission. */
	public enum FailureMode {

		/** Admit the request unchecked (counted in dualmap.tenants.store.failures). */
		OPEN,

		/** Answer 503 until Redis answers again. */
		CLOSED

	}

	/** The weight of each kind of token in a request's cost. */
	public static class Cost {

		/** Weight of a prompt token the engine has to prefill (not served from cache). */
		@DecimalMin(value = "0.0", message = "dualmap.tenants.cost.prompt-weight must be >= 0")
		private double promptWeight = 1.0;

		/**
		 * Weight of a prompt token the engine served from its prefix cache (usage's
		 * prompt_tokens_details.cached_tokens); 1.0 counts it as any prompt token, as
		 * OpenAI's tokens-per-minute limits do.
		 */
		@DecimalMin(value = "0.0", message = "dualmap.tenants.cost.cached-prompt-weight must be >= 0")
		private double cachedPromptWeight = 1.0;

		/** Weight of a completion (output) token. */
		@DecimalMin(value = "0.0", message = "dualmap.tenants.cost.completion-weight must be >= 0")
		private double completionWeight = 1.0;

		public double getPromptWeight() {
			return this.promptWeight;
		}

		public void setPromptWeight(double promptWeight) {
			this.promptWeight = promptWeight;
		}

		public double getCachedPromptWeight() {
			return this.cachedPromptWeight;
		}

		public void setCachedPromptWeight(double cachedPromptWeight) {
			this.cachedPromptWeight = cachedPromptWeight;
		}

		public double getCompletionWeight() {
			return this.completionWeight;
		}

		public void setCompletionWeight(double completionWeight) {
			this.completionWeight = completionWeight;
		}

	}

	/** The Redis store. */
	public static class Redis {

		/** Prefix of every budget key in Redis. */
		@NotBlank(message = "dualmap.tenants.redis.key-prefix must not be blank")
		private String keyPrefix = "dualmap:tenants:";

		/**
		 * Longest wait for Redis's answer to a budget check; past it, the failure mode
		 * decides.
		 */
		@NotNull(message = "dualmap.tenants.redis.timeout must be set")
		private Duration timeout = Duration.ofMillis(250);

		/**
		 * What a request gets when Redis does not answer in time or fails: open (served
		 * unchecked) or closed (503).
		 */
		@NotNull(message = "dualmap.tenants.redis.failure-mode must be set")
		private FailureMode failureMode = FailureMode.OPEN;

		/**
		 * How often each replica adds the service its dispatch queues gave each tenant
		 * into the pool's fairness account in Redis and reads back what the other
		 * replicas gave (with dualmap.tenants.fairness on): one Redis script call per
		 * pool per interval, in the background; also the longest wait for its answer.
		 * While Redis fails, each replica releases by its own account.
		 */
		@NotNull(message = "dualmap.tenants.redis.fairness-sync-interval must be set")
		private Duration fairnessSyncInterval = Duration.ofSeconds(1);

		@AssertTrue(message = "dualmap.tenants.redis.timeout must be > 0")
		private boolean isTimeoutPositive() {
			return this.timeout == null || (!this.timeout.isNegative() && !this.timeout.isZero());
		}

		@AssertTrue(message = "dualmap.tenants.redis.fairness-sync-interval must be at least 10ms")
		private boolean isFairnessSyncIntervalValid() {
			return this.fairnessSyncInterval == null || this.fairnessSyncInterval.toMillis() >= 10;
		}

		public String getKeyPrefix() {
			return this.keyPrefix;
		}

		public void setKeyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public FailureMode getFailureMode() {
			return this.failureMode;
		}

		public Duration getFairnessSyncInterval() {
			return this.fairnessSyncInterval;
		}

		public void setFairnessSyncInterval(Duration fairnessSyncInterval) {
			this.fairnessSyncInterval = fairnessSyncInterval;
		}

		public void setFailureMode(FailureMode failureMode) {
			this.failureMode = failureMode;
		}

	}

	/**
	 * One tenant's settings; a field left unset takes {@code dualmap.tenants.default}'s,
	 * and there, its documented default.
	 */
	public static class Tenant {

		/**
		 * The tenant's weight in fair queuing between tenants waiting for the same pool
		 * (default 1): while several wait, each gets service in proportion to its weight.
		 */
		@Positive(message = "a tenant's weight must be > 0")
		private @Nullable Double weight;

		/**
		 * The tenant's priority band between tenants waiting for the same pool, higher
		 * first (default 0): a band is served before any lower one, and a full queue
		 * sheds the lowest band's requests first.
		 */
		private @Nullable Integer priority;

		/** Tokens (weighted cost) the tenant may use per minute; unset: no limit. */
		@Positive(message = "a tenant's tokens-per-minute must be > 0")
		private @Nullable Long tokensPerMinute;

		/** Tokens (weighted cost) the tenant may use per day; unset: no limit. */
		@Positive(message = "a tenant's tokens-per-day must be > 0")
		private @Nullable Long tokensPerDay;

		/**
		 * Budgets per requested model (keyed by the request's model), checked besides the
		 * tenant's own.
		 */
		@Valid
		private Map<String, ModelBudget> models = new LinkedHashMap<>();

		public @Nullable Double getWeight() {
			return this.weight;
		}

		public void setWeight(@Nullable Double weight) {
			this.weight = weight;
		}

		public @Nullable Integer getPriority() {
			return this.priority;
		}

		public void setPriority(@Nullable Integer priority) {
			this.priority = priority;
		}

		public @Nullable Long getTokensPerMinute() {
			return this.tokensPerMinute;
		}

		public void setTokensPerMinute(@Nullable Long tokensPerMinute) {
			this.tokensPerMinute = tokensPerMinute;
		}

		public @Nullable Long getTokensPerDay() {
			return this.tokensPerDay;
		}

		public void setTokensPerDay(@Nullable Long tokensPerDay) {
			this.tokensPerDay = tokensPerDay;
		}

		public Map<String, ModelBudget> getModels() {
			return this.models;
		}

		public void setModels(Map<String, ModelBudget> models) {
			this.models = models;
		}

	}

	/** A tenant's budget for one model. */
	public static class ModelBudget {

		/** Tokens (weighted cost) per minute for this model; unset: no limit. */
		@Positive(message = "a model's tokens-per-minute must be > 0")
		private @Nullable Long tokensPerMinute;

		/** Tokens (weighted cost) per day for this model; unset: no limit. */
		@Positive(message = "a model's tokens-per-day must be > 0")
		private @Nullable Long tokensPerDay;

		public @Nullable Long getTokensPerMinute() {
			return this.tokensPerMinute;
		}

		public void setTokensPerMinute(@Nullable Long tokensPerMinute) {
			this.tokensPerMinute = tokensPerMinute;
		}

		public @Nullable Long getTokensPerDay() {
			return this.tokensPerDay;
		}

		public void setTokensPerDay(@Nullable Long tokensPerDay) {
			this.tokensPerDay = tokensPerDay;
		}

	}

}

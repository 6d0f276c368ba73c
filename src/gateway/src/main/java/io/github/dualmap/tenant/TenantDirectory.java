package io.github.dualmap.tenant;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * The tenants the configuration names, each with its effective settings, and the checks
 * on the names clients send: a tenant name is client input, so it is validated (length
 * and characters) and, in meters, only configured names appear as themselves (every other
 * one is {@value #OTHER}).
 */
public final class TenantDirectory {

	/** The tenant of a request that names none. */
	public static final String DEFAULT = "default";

	/** What a model's budget keys have after the tenant's hash tag. */
	static final String MODEL_KEY = "model:";

	/** The meter tag of every tenant the configuration does not name. */
	public static final String OTHER = "other";

	/**
	 * Keys of {@code dualmap.tenants} that are settings, not tenants (compared without
	 * case, dashes or underscores, as Spring Boot's relaxed binding does).
	 */
	static final Set<String> RESERVED = Set.of("enabled", "header", "keyresolver", "mode", "store", "maxtracked",
			"maxnamelength", "defaultmaxtokens", "maxusagebodysize", "cost", "redis", "fairness", DEFAULT, OTHER);

	private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._:@-]+");

	private final Map<String, TenantSettings> named;

	private final TenantSettings defaults;

	private final int maxNameLength;

	/**
	 * @param named the configured tenants' settings, as written (unset fields
	 * {@code null})
	 * @param defaults {@code dualmap.tenants.default}
	 */
	public TenantDirectory(Map<String, TenantProperties.Tenant> named, TenantProperties.Tenant defaults,
			int maxNameLength) {
		this.maxNameLength = maxNameLength;
		this.defaults = effective(defaults, null);
		Map<String, TenantSettings> settings = new LinkedHashMap<>();
		named.forEach((name, tenant) -> {
			if (RESERVED.contains(normalized(name))) {
				throw new IllegalArgumentException("dualmap.tenants." + name
						+ " is a setting of dualmap.tenants, not a tenant; tenants may not be named " + RESERVED);
			}
			if (!valid(name)) {
				throw new IllegalArgumentException("dualmap.tenants." + name + ": a tenant name must be 1 to "
						+ maxNameLength + " letters, digits or . _ : @ -");
			}
			settings.put(name, effective(tenant, defaults));
		});
		this.named = Collections.unmodifiableMap(settings);
	}

	static String normalized(String key) {
		return key.toLowerCase(Locale.ROOT).replace("-", "").replace("_", "");
	}

	private static TenantSettings effective(TenantProperties.Tenant tenant,
			TenantProperties.@Nullable Tenant fallback) {
		Map<String, TenantSettings.ModelLimits> models = new LinkedHashMap<>();
		if (fallback != null) {
			fallback.getModels()
				.forEach((model, b) -> models.put(model,
						new TenantSettings.ModelLimits(b.getTokensPerMinute(), b.getTokensPerDay())));
		}
		tenant.getModels()
			.forEach((model, b) -> models.put(model,
					new TenantSettings.ModelLimits(b.getTokensPerMinute(), b.getTokensPerDay())));
		return new TenantSettings(first(tenant.getWeight(), fallback == null ? null : fallback.getWeight(), 1.0),
				first(tenant.getPriority(), fallback == null ? null : fallback.getPriority(), 0),
				first(tenant.getTokensPerMinute(), fallback == null ? null : fallback.getTokensPerMinute(), null),
				first(tenant.getTokensPerDay(), fallback == null ? null : fallback.getTokensPerDay(), null),
				Collections.unmodifiableMap(models));
	}

	private static <T> @Nullable T first(@Nullable T own, @Nullable T fallback, @Nullable T otherwise) {
		return own != null ? own : fallback != null ? fallback : otherwise;
	}

	/** Whether {@code name} is an acceptable tenant name. */
	public boolean valid(String name) {
		return !name.isEmpty() && name.length() <= this.maxNameLength && NAME.matcher(name).matches();
	}

	/** The longest name accepted. */
	public int maxNameLength() {
		return this.maxNameLength;
	}

	/** {@code tenant}'s settings: its own when configured, else the defaults. */
	public TenantSettings settings(String tenant) {
		TenantSettings own = this.named.get(tenant);
		return own != null ? own : this.defaults;
	}

	/** The configured tenants, in configuration order. */
	public Map<String, TenantSettings> named() {
		return this.named;
	}

	/** The settings of tenant {@value #DEFAULT} and of every unlisted tenant. */
	public TenantSettings defaults() {
		return this.defaults;
	}

	/**
	 * The name {@code tenant} is reported under in meters and the actuator: itself when
	 * configured or {@value #DEFAULT}, else {@value #OTHER}.
	 */
	public String reported(String tenant) {
		return this.named.containsKey(tenant) || DEFAULT.equals(tenant) ? tenant : OTHER;
	}

	/**
	 * Whether {@code key}, a budget line's key, belongs to a configured tenant or to
	 * {@value #DEFAULT}.
	 */
	public boolean configuredKey(String key) {
		int end = key.indexOf("}:");
		if (!key.startsWith("{") || end < 0) {
			return false;
		}
		String tenant = key.substring(1, end);
		return DEFAULT.equals(tenant) || this.named.containsKey(tenant);
	}

	/**
	 * The budget lines a request of {@code tenant} for {@code model} is charged to: the
	 * tenant's per minute and per day, and the same for the model where it has its own.
	 */
	public List<BudgetLine> lines(String tenant, @Nullable String model) {
		TenantSettings s = settings(tenant);
		List<BudgetLine> lines = new ArrayList<>(4);
		// The hash tag keeps a tenant's keys in one Redis Cluster slot.
		String base = "{" + tenant + "}:";
		add(lines, base + "m", s.tokensPerMinute(), BudgetLine.MINUTE_MILLIS);
		add(lines, base + "d", s.tokensPerDay(), BudgetLine.DAY_MILLIS);
		TenantSettings.ModelLimits m = model == null ? null : s.models().get(model);
		if (m != null) {
			add(lines, base + MODEL_KEY + model + ":m", m.tokensPerMinute(), BudgetLine.MINUTE_MILLIS);
			add(lines, base + MODEL_KEY + model + ":d", m.tokensPerDay(), BudgetLine.DAY_MILLIS);
		}
		return lines;
	}

	private static void add(List<BudgetLine> lines, String key, @Nullable Long limit, long window) {
		if (limit != null) {
			lines.add(new BudgetLine(key, limit, window));
		}
	}

}

package io.github.dualmap.tenant;

import java.beans.PropertyDescriptor;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.springframework.beans.BeanUtils;

/**
 * Reads the named tenants ({@code dualmap.tenants.<name>.*}) out of
 * {@code dualmap.tenants} bound as a map: their names are the configuration's keys,
 * beside the fixed settings {@link TenantProperties} binds, so they are picked out by
 * name and read field by field, with messages that name the bad property.
 */
public final class NamedTenants {

	private NamedTenants() {
	}

	/**
	 * The tenants among the keys of {@code tenants} (every key but the settings of
	 * {@link TenantProperties}).
	 * @throws IllegalArgumentException naming the property that does not read
	 */
	public static Map<String, TenantProperties.Tenant> read(Map<String, Object> tenants) {
		Map<String, TenantProperties.Tenant> named = new LinkedHashMap<>();
		tenants.forEach((name, value) -> {
			if (TenantDirectory.RESERVED.contains(TenantDirectory.normalized(name))) {
				return;
			}
			String property = TenantProperties.PREFIX + "." + name;
			if (!(value instanceof Map<?, ?> fields)) {
				throw new IllegalArgumentException(property + " is neither a setting of " + TenantProperties.PREFIX
						+ " nor a tenant (a tenant has weight, priority, tokens-per-minute, tokens-per-day, models)");
			}
			named.put(name, tenant(property, fields));
		});
		return named;
	}

	/**
	 * Checks every key of {@code dualmap.tenants} bound as a map, whether tenants are on
	 * or not, so that a misspelt key stops the start as it does elsewhere under
	 * {@code dualmap.*}: each named tenant reads ({@link #read}), {@code default} has
	 * only tenant settings, {@code cost} and {@code redis} only their own, and the
	 * meters' {@value TenantDirectory#OTHER} is no key at all. The values of the fixed
	 * settings are {@link TenantProperties}' to check.
	 * @throws IllegalArgumentException naming the first key that does not read
	 */
	public static void check(Map<String, Object> tenants) {
		read(tenants);
		tenants.forEach((name, value) -> {
			String property = TenantProperties.PREFIX + "." + name;
			switch (TenantDirectory.normalized(name)) {
				case TenantDirectory.DEFAULT -> tenant(property, group(property, value));
				case "cost" -> keysOf(property, group(property, value), TenantProperties.Cost.class);
				case "redis" -> keysOf(property, group(property, value), TenantProperties.Redis.class);
				case TenantDirectory.OTHER ->
					throw new IllegalArgumentException(property + " is no setting: '" + TenantDirectory.OTHER
							+ "' is the meters' name for every tenant the configuration does not name");
				default -> {
					// A fixed setting written as a group (a named tenant is read above).
					if (value instanceof Map<?, ?>
							&& TenantDirectory.RESERVED.contains(TenantDirectory.normalized(name))) {
						throw new IllegalArgumentException(property + " is a single value, not a group");
					}
				}
			}
		});
	}

	private static Map<?, ?> group(String property, Object value) {
		if (!(value instanceof Map<?, ?> fields)) {
			throw new IllegalArgumentException(property + " is a group of settings, not a single value");
		}
		return fields;
	}

	/** Every key of {@code fields} is a property of {@code type}, by its relaxed name. */
	private static void keysOf(String property, Map<?, ?> fields, Class<?> type) {
		Set<String> known = new TreeSet<>();
		for (PropertyDescriptor d : BeanUtils.getPropertyDescriptors(type)) {
			if (d.getWriteMethod() != null) {
				known.add(d.getName());
			}
		}
		Set<String> normalized = new HashSet<>();
		known.forEach(k -> normalized.add(TenantDirectory.normalized(k)));
		for (Object key : fields.keySet()) {
			if (!normalized.contains(TenantDirectory.normalized(String.valueOf(key)))) {
				throw new IllegalArgumentException(property + "." + key + " is no setting of " + property + " (known: "
						+ String.join(", ", known.stream().map(NamedTenants::kebab).toList()) + ")");
			}
		}
	}

	private static String kebab(String camel) {
		return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
	}

	private static TenantProperties.Tenant tenant(String property, Map<?, ?> fields) {
		TenantProperties.Tenant tenant = new TenantProperties.Tenant();
		fields.forEach((key, value) -> {
			String name = String.valueOf(key);
			String at = property + "." + name;
			switch (TenantDirectory.normalized(name)) {
				case "weight" -> {
					double weight = number(at, value);
					if (!(weight > 0) || Double.isInfinite(weight)) {
						throw new IllegalArgumentException(at + " must be > 0 but was " + value);
					}
					tenant.setWeight(weight);
				}
				case "priority" -> tenant.setPriority((int) whole(at, value, Integer.MIN_VALUE));
				case "tokensperminute" -> tenant.setTokensPerMinute(whole(at, value, 1));
				case "tokensperday" -> tenant.setTokensPerDay(whole(at, value, 1));
				case "models" -> {
					if (!(value instanceof Map<?, ?> models)) {
						throw new IllegalArgumentException(at + " must be a map of model names to budgets");
					}
					models.forEach((model, budget) -> tenant.getModels()
						.put(String.valueOf(model), model(at + "." + model, budget)));
				}
				default -> throw new IllegalArgumentException(at + " is no tenant setting (weight, priority, "
						+ "tokens-per-minute, tokens-per-day, models)");
			}
		});
		return tenant;
	}

	private static TenantProperties.ModelBudget model(String property, Object value) {
		if (!(value instanceof Map<?, ?> fields)) {
			throw new IllegalArgumentException(property + " must have tokens-per-minute and/or tokens-per-day");
		}
		TenantProperties.ModelBudget budget = new TenantProperties.ModelBudget();
		fields.forEach((key, v) -> {
			String at = property + "." + key;
			switch (TenantDirectory.normalized(String.valueOf(key))) {
				case "tokensperminute" -> budget.setTokensPerMinute(whole(at, v, 1));
				case "tokensperday" -> budget.setTokensPerDay(whole(at, v, 1));
				default -> throw new IllegalArgumentException(
						at + " is no model budget setting " + "(tokens-per-minute, tokens-per-day)");
			}
		});
		return budget;
	}

	private static double number(String property, Object value) {
		try {
			return Double.parseDouble(String.valueOf(value).strip());
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException(property + " must be a number but was '" + value + "'");
		}
	}

	private static long whole(String property, Object value, long min) {
		long n;
		try {
			n = Long.parseLong(String.valueOf(value).strip().replace("_", ""));
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException(property + " must be a whole number but was '" + value + "'");
		}
		if (n < min || (min == Integer.MIN_VALUE && n > Integer.MAX_VALUE)) {
			throw new IllegalArgumentException(
					property + " must be " + (min == Integer.MIN_VALUE ? "an int" : ">= " + min) + " but was " + value);
		}
		return n;
	}

}

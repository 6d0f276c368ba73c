package io.github.dualmap.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import io.github.dualmap.core.RoutingPolicies;
import io.github.dualmap.tenant.NamedTenants;
import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;

/**
 * The names {@link DualMapProperties} refers to exist: its routing policies (global and
 * per pool) are registered in {@link RoutingPolicies}, and the keys of
 * {@code dualmap.pools} and {@code dualmap.scrape.services} are service ids of
 * {@code dualmap.services} (a key that is not one is never read: a typo would be lost),
 * and every key of {@code dualmap.tenants} is a setting or a tenant
 * ({@link NamedTenants#check}), whether tenants are on or not.
 * <p>
 * A constraint of its own rather than {@code @AssertTrue} methods because its messages
 * name the value refused and the names known (an {@code @AssertTrue} message is fixed
 * text), and a Bean Validation one so that it applies wherever the properties are
 * validated: the gateway's binding and {@code sim --set}.
 */
@Documented
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Constraint(validatedBy = KnownNames.Check.class)
public @interface KnownNames {

	String message() default "dualmap.* names an unknown routing policy or service";

	Class<?>[] groups() default {};

	Class<? extends Payload>[] payload() default {};

	/** The check; each name that is not known is a violation of its own. */
	class Check implements ConstraintValidator<KnownNames, DualMapProperties> {

		@Override
		public boolean isValid(DualMapProperties properties, ConstraintValidatorContext context) {
			context.disableDefaultConstraintViolation();
			boolean valid = true;
			String policy = properties.getPolicy();
			// A blank one is @NotBlank's to report.
			if (policy != null && !policy.isBlank() && !RoutingPolicies.exists(policy)) {
				violation(context, unknownPolicy("dualmap.policy", policy)).addPropertyNode("policy")
					.addConstraintViolation();
				valid = false;
			}
			for (Map.Entry<String, PoolProperties> pool : properties.getPools().entrySet()) {
				String p = pool.getValue().getPolicy();
				if (p != null && !RoutingPolicies.exists(p)) {
					violation(context, unknownPolicy("dualmap.pools." + pool.getKey() + ".policy", p))
						.addPropertyNode("pools")
						.addPropertyNode("policy")
						.inIterable()
						.atKey(pool.getKey())
						.addConstraintViolation();
					valid = false;
				}
			}
			valid &= keysAreServices(context, "dualmap.pools", properties.getPools().keySet(),
					properties.getServices());
			valid &= keysAreServices(context, "dualmap.scrape.services", properties.getScrape().getServices().keySet(),
					properties.getServices());
			try {
				NamedTenants.check(properties.getTenants());
			}
			catch (IllegalArgumentException ex) {
				violation(context, ex.getMessage()).addConstraintViolation();
				valid = false;
			}
			return valid;
		}

		private static String unknownPolicy(String property, String policy) {
			return property + " names no known routing policy: '" + policy + "'; known: "
					+ String.join(", ", RoutingPolicies.names());
		}

		private static boolean keysAreServices(ConstraintValidatorContext context, String property,
				Collection<String> keys, List<String> services) {
			List<String> unknown = keys.stream().filter(k -> !services.contains(k)).toList();
			if (unknown.isEmpty()) {
				return true;
			}
			// Not a property's error: the keys are names, not values.
			violation(context, "every key of " + property + " must be a service id listed in dualmap.services "
					+ services + "; not listed: " + String.join(", ", unknown))
				.addConstraintViolation();
			return false;
		}

		/**
		 * A violation whose message is {@code message} as written: the names in it come
		 * from the configuration, and a message is a template where braces, {@code $} and
		 * backslashes mean something.
		 */
		private static ConstraintValidatorContext.ConstraintViolationBuilder violation(
				ConstraintValidatorContext context, String message) {
			return context.buildConstraintViolationWithTemplate(message.replaceAll("[\\\\{}$]", "\\\\$0"));
		}

	}

}

package io.github.dualmap.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when the boolean property {@link #value()} is on, read as the properties
 * classes bind it: {@code true}, {@code on}, {@code yes} or {@code 1} are on, and a value
 * that is no boolean fails the startup naming the property. Spring Boot's
 * {@code @ConditionalOnProperty(havingValue = "true")} compares text, so {@code on} would
 * bind as true in the properties yet leave the beans out, and a misspelt value would
 * quietly switch the feature off.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ ElementType.TYPE, ElementType.METHOD })
@Documented
@Conditional(ConditionalOnSwitch.OnSwitchCondition.class)
@interface ConditionalOnSwitch {

	/** The property's full name, such as {@code dualmap.scrape.enabled}. */
	String value();

	/** Whether the condition matches when the property is not set. */
	boolean matchIfMissing() default false;

	/** The condition behind {@link ConditionalOnSwitch}. */
	final class OnSwitchCondition extends SpringBootCondition {

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			Map<String, @Nullable Object> attributes = metadata
				.getAnnotationAttributes(ConditionalOnSwitch.class.getName());
			if (attributes == null) {
				return ConditionOutcome.noMatch("no @ConditionalOnSwitch");
			}
			String name = (String) attributes.get("value");
			boolean matchIfMissing = Boolean.TRUE.equals(attributes.get("matchIfMissing"));
			// Throws a BindException naming the property for a value that is no boolean.
			Boolean on = Binder.get(context.getEnvironment()).bind(name, Boolean.class).orElse(null);
			boolean matches = on == null ? matchIfMissing : on;
			String message = name + (on == null ? " is not set" : " is " + on);
			return matches ? ConditionOutcome.match(message) : ConditionOutcome.noMatch(message);
		}

	}

}

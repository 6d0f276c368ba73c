package io.github.dualmap;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a static {@link StubEngine} or {@code List<StubEngine>} field of a
 * {@link GatewayIntegrationTest}: its engines are the instances of {@link #value()} in
 * simple discovery, in order, their knobs are {@link StubEngine#reset() reset} before
 * each test and they are stopped after the class.
 * <p>
 * The address of an engine is also the property {@code stub-engines.NAME} (its
 * {@link StubEngine#name name}, when no other engine of the class has it), so that
 * settings such as a route's {@code uri=${stub-engines.hosted}} can name it. An engine of
 * no service ({@code @Discovered({})}) is only that: a backend of a plain route, reset
 * and stopped like the others.
 */
@Target(ElementType.FIELD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Discovered {

	/** The services the engines are instances of (none: a plain route's backend). */
	String[] value() default "llm";

}

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
 */
@Target(ElementType.FIELD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Discovered {

	/** The services the engines are instances of. */
	String[] value() default "llm";

}

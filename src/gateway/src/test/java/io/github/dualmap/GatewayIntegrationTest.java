package io.github.dualmap;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.core.annotation.AliasFor;
import org.springframework.test.context.ContextCustomizerFactories;
import org.springframework.test.context.TestPropertySource;

/**
 * A gateway on a random port in front of the test class's {@link Discovered} stub
 * engines, with a {@code WebTestClient} (30 s timeout) bound to it.
 * <p>
 * Unless the test says otherwise ({@link #properties()} win), the gateway has the
 * settings of {@code gateway-test.properties}: one route {@code llm} ({@code /v1/**} to
 * {@code lb://llm}), DualMap routing the service {@code llm}, and no load balancer cache
 * (membership changes reach the pool at once). A test states only what is special about
 * it; two test classes with the same {@link #classes()}, properties and engines share one
 * cached context.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@TestPropertySource(locations = "classpath:gateway-test.properties")
@AutoConfigureWebTestClient(timeout = "30s")
@ContextCustomizerFactories(StubEngines.class)
@ExtendWith(StubEngines.class)
public @interface GatewayIntegrationTest {

	/**
	 * The application: {@link GatewayTestApplication} unless the test needs beans of its
	 * own.
	 */
	@AliasFor(annotation = SpringBootTest.class, attribute = "classes")
	Class<?>[] classes() default GatewayTestApplication.class;

	/**
	 * What is special about this test's gateway, over {@code gateway-test.properties}.
	 */
	@AliasFor(annotation = TestPropertySource.class, attribute = "properties")
	String[] properties() default {};

}

package com.example.llmgateway;

import java.time.Duration;
import java.util.Arrays;

import io.github.dualmap.emulator.EmulatorPool;
import io.github.dualmap.gateway.DualMapRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A user's gateway that happens to run with a profile called {@code demo} gets none of
 * the DualMap demo: not its port, services, routes, discovery or actuator exposure, and
 * no emulated instances. The demo belongs to the exec jar's application only.
 */
class DemoProfileInUserApplicationTests {

	@Test
	void theDemoProfileOfAUserApplicationIsItsOwn() {
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(ExampleGatewayApplication.class)
			.web(WebApplicationType.REACTIVE)
			.profiles("demo")
			.run("--server.port=0", "--server.address=127.0.0.1")) {
			ConfigurableEnvironment environment = context.getEnvironment();
			assertThat(environment.getPropertySources().stream().map(PropertySource::getName))
				.noneMatch(name -> name.contains("demo"));
			// Only the user's own argument sets the port.
			assertThat(environment.getPropertySources()
				.stream()
				.filter(source -> source instanceof EnumerablePropertySource<?> enumerable
						&& Arrays.asList(enumerable.getPropertyNames()).contains("server.port"))
				.map(PropertySource::getName)).containsExactly("commandLineArgs");
			assertThat(environment.getProperty("management.endpoints.web.exposure.include")).isNull();
			assertThat(environment.getProperty("dualmap.services[0]")).isNull();
			assertThat(context.getBean(DualMapRegistry.class).services()).isEmpty();
			assertThat(context.getBean(RouteLocator.class)
				.getRoutes()
				.map(Route::getId)
				.collectList()
				.block(Duration.ofSeconds(10))).isEmpty();
			assertThat(context.getBean(ReactiveDiscoveryClient.class)
				.getServices()
				.collectList()
				.block(Duration.ofSeconds(10))).doesNotContain("demo-pool");
			assertThat(context.getBeansOfType(EmulatorPool.class)).isEmpty();
		}
	}

}

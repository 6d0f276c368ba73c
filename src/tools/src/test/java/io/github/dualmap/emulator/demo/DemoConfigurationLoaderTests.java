package io.github.dualmap.emulator.demo;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.bootstrap.DefaultBootstrapContext;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.env.DefaultPropertiesPropertySource;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo's configuration arrives with the demo profile only, and below the user's own
 * configuration.
 */
class DemoConfigurationLoaderTests {

	@Test
	void addsTheDemoBelowTheUsersConfiguration() {
		StandardEnvironment environment = environment();
		environment.setActiveProfiles("demo");
		prepared(environment);
		// The user's port wins; what the user does not set comes from the demo.
		assertThat(environment.getProperty("server.port")).isEqualTo("9000");
		assertThat(environment.getProperty("dualmap.services[0]")).isEqualTo("demo-pool");
		// Batch work waits its own 90 s instead of expiring at half its 60 s SLO.
		assertThat(environment.getProperty("dualmap.slo.classes.batch.max-wait")).isEqualTo("90s");
		assertThat(environment.getProperty("dualmap.dispatch.max-wait")).isNull();
		assertThat(environment.getProperty("management.endpoints.web.exposure.include"))
			.isEqualTo("health,prometheus,dualmap");
		assertThat(environment.getPropertySources().stream().map(PropertySource::getName)).containsSubsequence("user",
				"DualMap demo configuration 'classpath:dualmap-demo.yml'", DefaultPropertiesPropertySource.NAME);
	}

	@Test
	void addsNothingWithoutTheDemoProfile() {
		StandardEnvironment environment = environment();
		environment.setActiveProfiles("other");
		int before = environment.getPropertySources().size();
		prepared(environment);
		assertThat(environment.getPropertySources().size()).isEqualTo(before);
		assertThat(environment.getProperty("dualmap.services[0]")).isNull();
	}

	private static StandardEnvironment environment() {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addLast(new MapPropertySource("user", Map.of("server.port", "9000")));
		environment.getPropertySources()
			.addLast(new DefaultPropertiesPropertySource(Map.of("server.port", "1", "dualmap.enabled", "true")));
		return environment;
	}

	private static void prepared(StandardEnvironment environment) {
		new DemoConfigurationLoader().onApplicationEvent(new ApplicationEnvironmentPreparedEvent(
				new DefaultBootstrapContext(), new SpringApplication(), new String[0], environment));
	}

}

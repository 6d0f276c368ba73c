package io.github.dualmap.emulator.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.env.DefaultPropertiesPropertySource;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.support.EnvironmentPostProcessorApplicationListener;
import org.springframework.context.ApplicationListener;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ClassPathResource;

/**
 * Adds the {@code demo} profile's configuration ({@value #LOCATION}: port, pool, routes,
 * actuator exposure) to the environment when that profile is active, below every other
 * source of configuration but the application's default properties: the user's files,
 * arguments and environment variables override it.
 * <p>
 * Only {@code DualMapApplication} registers it. The file is deliberately not called
 * {@code application-demo.yml}: that name is loaded by every Spring Boot application with
 * this jar on its classpath and a profile called {@code demo}.
 */
public final class DemoConfigurationLoader
		implements ApplicationListener<ApplicationEnvironmentPreparedEvent>, Ordered {

	/** The profile that starts the demo. */
	public static final String PROFILE = "demo";

	/** Where the demo's configuration is, on the classpath. */
	public static final String LOCATION = "dualmap-demo.yml";

	@Override
	public void onApplicationEvent(ApplicationEnvironmentPreparedEvent event) {
		ConfigurableEnvironment environment = event.getEnvironment();
		if (!environment.matchesProfiles(PROFILE)) {
			return;
		}
		List<PropertySource<?>> loaded;
		try {
			loaded = new YamlPropertySourceLoader().load("DualMap demo configuration 'classpath:" + LOCATION + "'",
					new ClassPathResource(LOCATION, DemoConfigurationLoader.class.getClassLoader()));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read the demo configuration classpath:" + LOCATION, ex);
		}
		MutablePropertySources sources = environment.getPropertySources();
		for (PropertySource<?> source : loaded) {
			sources.addLast(source);
		}
		DefaultPropertiesPropertySource.moveToEnd(sources);
	}

	/** After the config data processing that decides the active profiles. */
	@Override
	public int getOrder() {
		return EnvironmentPostProcessorApplicationListener.DEFAULT_ORDER + 1;
	}

}

package io.github.dualmap.emulator.demo;

import java.util.stream.Collectors;

import io.github.dualmap.emulator.EmulatorPool;
import io.github.dualmap.emulator.EmulatorServer;
import io.github.dualmap.emulator.EmulatorSettings;
import io.github.dualmap.emulator.MetricsFlavour;
import io.github.dualmap.engine.EngineProfile;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;

/**
 * The {@code demo} profile: starts the emulated pool with the application context, stops
 * it with the context, makes its instances the {@code demo-pool} service's in discovery
 * (so the gateway's {@code lb://demo-pool} route reaches exactly them), and logs where
 * everything is once the gateway is up.
 * <p>
 * {@link DemoProperties} is bound in every profile: the gateway refuses unknown
 * {@code dualmap.*} keys except those another properties class binds, and
 * {@code dualmap.demo.*} set without the profile are accepted as they are with it.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(DemoProperties.class)
public class DemoPoolConfiguration {

	private static final Log logger = LogFactory.getLog(DemoPoolConfiguration.class);

	/** The pool and what goes with it, with the {@code demo} profile only. */
	@Configuration(proxyBeanMethods = false)
	@Profile("demo")
	static class Pool {

		@Bean(destroyMethod = "close")
		EmulatorPool demoEmulatorPool(DemoProperties properties) {
			EmulatorSettings settings = new EmulatorSettings(properties.model(),
					EngineProfile.named(properties.profile()), properties.timeScale(), MetricsFlavour.VLLM,
					"127.0.0.1");
			try {
				return EmulatorPool.start(settings, properties.instances(), properties.basePort());
			}
			catch (IllegalStateException ex) {
				// A port in use: reported as its property, with no stack trace.
				throw new InvalidConfigurationPropertyValueException("dualmap.demo.base-port", properties.basePort(),
						bindFailure(ex) + "; the demo's " + properties.instances()
								+ " instances take consecutive ports from dualmap.demo.base-port");
			}
		}

		/** What failed to bind, and why ("Address already in use"). */
		private static String bindFailure(Throwable ex) {
			Throwable root = ex;
			while (root.getCause() != null && root.getCause() != root) {
				root = root.getCause();
			}
			return root == ex || root.getMessage() == null ? ex.getMessage()
					: ex.getMessage() + ": " + root.getMessage();
		}

		@Bean
		ReactiveDiscoveryClient demoPoolReactiveDiscoveryClient(EmulatorPool pool) {
			return DemoPoolDiscovery.reactive(pool);
		}

		@Bean
		DiscoveryClient demoPoolDiscoveryClient(EmulatorPool pool) {
			return DemoPoolDiscovery.blocking(pool);
		}

		@Bean
		ApplicationListener<ApplicationReadyEvent> demoBanner(EmulatorPool pool) {
			return (event) -> {
				int port = event.getApplicationContext() instanceof WebServerApplicationContext web
						? web.getWebServer().getPort() : -1;
				String gateway = "http://localhost:" + port;
				String instances = pool.servers()
					.stream()
					.map(EmulatorServer::baseUrl)
					.collect(Collectors.joining("\n    ", "    ", ""));
				logger.info("\n--- DualMap demo ---------------------------------------------\n" + "  gateway:    "
						+ gateway + "/v1/chat/completions, " + gateway + "/v1/completions\n"
						+ "  instances (emulated vLLM, model " + pool.servers().get(0).settings().model() + "):\n"
						+ instances + "\n" + "  actuator:   " + gateway + "/actuator/dualmap, " + gateway
						+ "/actuator/health, " + gateway + "/actuator/prometheus\n"
						+ "  per-instance engine metrics: <instance>/metrics\n"
						+ "--------------------------------------------------------------");
			};
		}

	}

}

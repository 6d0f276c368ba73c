package io.github.dualmap.tenant;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Gateways with tenants on, in front of one {@link UsageEngine}, for the tests. Started
 * by hand, not as a {@code @GatewayIntegrationTest}: the backend is a
 * {@link UsageEngine}, not a {@code StubEngine}, and the Redis and modes tests run two
 * gateways side by side.
 */
final class TenantGateways {

	private TenantGateways() {
	}

	static ConfigurableApplicationContext start(Class<?> app, UsageEngine engine, String... extra) throws IOException {
		List<String> properties = new ArrayList<>(List.of("server.port=" + freePort(), "server.address=127.0.0.1",
				"dualmap.services=llm", "dualmap.scrape.enabled=false", "spring.cloud.loadbalancer.cache.enabled=false",
				"spring.cloud.gateway.server.webflux.routes[0].id=llm",
				"spring.cloud.gateway.server.webflux.routes[0].uri=lb://llm",
				"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/v1/**",
				"spring.cloud.discovery.client.simple.instances.llm[0].uri=" + engine.uri(),
				"management.endpoints.web.exposure.include=dualmap,prometheus", "management.health.redis.enabled=false",
				"dualmap.tenants.enabled=true"));
		properties.addAll(List.of(extra));
		return new SpringApplicationBuilder(app).web(WebApplicationType.REACTIVE)
			.properties(properties.toArray(String[]::new))
			.run();
	}

	static WebTestClient client(ConfigurableApplicationContext context) {
		return WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port"))
			.responseTimeout(Duration.ofSeconds(20))
			.build();
	}

	static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	static String chat(String content, boolean stream, String extra) {
		return "{\"model\":\"m\",\"stream\":" + stream + extra + ",\"messages\":[{\"role\":\"user\",\"content\":\""
				+ content + "\"}]}";
	}

}

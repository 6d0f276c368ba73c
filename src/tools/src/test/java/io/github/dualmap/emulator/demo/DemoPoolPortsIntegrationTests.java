package io.github.dualmap.emulator.demo;

import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;

import io.github.dualmap.DualMapApplication;
import io.github.dualmap.emulator.EmulatorPool;
import io.github.dualmap.emulator.EmulatorServer;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.ServicePool;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.UseMainMethod;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The demo started through the application's main method with another base port and
 * instance count than the defaults: discovery, the DualMap pool and the requests all
 * follow the instances it started, and nothing else.
 */
@SpringBootTest(classes = DualMapApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		useMainMethod = UseMainMethod.ALWAYS)
@ActiveProfiles("demo")
class DemoPoolPortsIntegrationTests {

	private static final int INSTANCES = 3;

	private static final int BASE_PORT = FreePorts.consecutive(INSTANCES);

	@DynamicPropertySource
	static void pool(DynamicPropertyRegistry registry) {
		FreePorts.demoPool(registry, BASE_PORT);
		registry.add("dualmap.demo.instances", () -> INSTANCES);
	}

	@LocalServerPort
	int port;

	@Autowired
	EmulatorPool pool;

	@Autowired
	ReactiveDiscoveryClient discovery;

	@Autowired
	DualMapRegistry registry;

	@Test
	void routesToExactlyTheInstancesItStarted() {
		List<String> started = IntStream.range(0, INSTANCES)
			.mapToObj(i -> "http://127.0.0.1:" + (BASE_PORT + i))
			.toList();
		assertThat(this.pool.servers().stream().map(EmulatorServer::baseUrl)).containsExactlyElementsOf(started);
		// What the load balancer reads, checked before any request is sent anywhere.
		assertThat(this.discovery.getInstances("demo-pool")
			.map(ServiceInstance::getUri)
			.map(Object::toString)
			.collectList()
			.block(Duration.ofSeconds(10))).containsExactlyInAnyOrderElementsOf(started);
		// What the DualMap pool follows (its rings and scrape targets).
		ServicePool demo = this.registry.service("demo-pool");
		assertThat(demo).isNotNull();
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(demo.serviceInstances().stream().map(i -> i.getUri().toString()))
				.containsExactlyInAnyOrderElementsOf(started));
		WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + this.port).build();
		int requests = 6;
		for (int i = 0; i < requests; i++) {
			client.post()
				.uri("/v1/chat/completions")
				.header("Content-Type", "application/json")
				.bodyValue("{\"messages\":[{\"role\":\"user\",\"content\":\"Question number " + i
						+ " for the demo pool\"}],\"max_tokens\":2}")
				.exchange()
				.expectStatus()
				.isOk();
		}
		// Every request was served by one of the instances the demo started.
		assertThat(this.pool.servers().stream().mapToLong(s -> s.stats().finished()).sum()).isEqualTo(requests);
	}

}

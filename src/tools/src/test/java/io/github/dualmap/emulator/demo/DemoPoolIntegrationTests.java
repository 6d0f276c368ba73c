package io.github.dualmap.emulator.demo;

import java.nio.charset.StandardCharsets;

import io.github.dualmap.DualMapApplication;
import io.github.dualmap.emulator.EmulatorPool;
import io.github.dualmap.emulator.EmulatorServer;
import io.github.dualmap.emulator.EmulatorSettings;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import org.springframework.boot.test.context.SpringBootTest.UseMainMethod;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo profile end to end: the gateway on a random port routes {@code /v1/**} to the
 * emulated pool it started (stock load balancer; DualMap's comes from its own module).
 * Started through the application's main method, which adds the demo's configuration.
 */
@SpringBootTest(classes = DualMapApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		useMainMethod = UseMainMethod.ALWAYS)
@ActiveProfiles("demo")
class DemoPoolIntegrationTests {

	private static final int INSTANCES = 4;

	private static final int BASE_PORT = FreePorts.consecutive(INSTANCES);

	@DynamicPropertySource
	static void ports(DynamicPropertyRegistry registry) {
		FreePorts.demoPool(registry, BASE_PORT);
	}

	@LocalServerPort
	int port;

	@Autowired
	EmulatorPool pool;

	@Autowired
	Environment environment;

	@Test
	void servesACompletionThroughTheGateway() {
		WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build();
		long before = finished();
		EntityExchangeResult<byte[]> served = client.post()
			.uri("/v1/chat/completions")
			.header("Content-Type", "application/json")
			.bodyValue(
					"{\"messages\":[{\"role\":\"user\",\"content\":\"Hello through the gateway\"}],\"max_tokens\":3}")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.object")
			.isEqualTo("chat.completion")
			.jsonPath("$.usage.completion_tokens")
			.isEqualTo(3)
			.returnResult();
		// The gateway's request id names the completion, as it does on vLLM.
		String requestId = served.getResponseHeaders().getFirst("x-request-id");
		assertThat(requestId).isNotBlank();
		assertThat(new String(served.getResponseBodyContent(), StandardCharsets.UTF_8))
			.contains("\"id\":\"chatcmpl-" + requestId + "\"");
		// The demo shows where and why (off by default elsewhere).
		assertThat(served.getResponseHeaders().getFirst("x-dualmap-instance")).startsWith("emulator-");
		assertThat(served.getResponseHeaders().getFirst("x-dualmap-reason")).isNotBlank();
		assertThat(pool.servers()).hasSize(INSTANCES);
		assertThat(finished()).isEqualTo(before + 1);
		assertThat(pool.servers().stream().map(EmulatorServer::port)).containsExactly(BASE_PORT, BASE_PORT + 1,
				BASE_PORT + 2, BASE_PORT + 3);
		client.get().uri("/actuator/health").exchange().expectStatus().isOk();
		// Its actuator and headers are open: this machine only.
		assertThat(environment.getProperty("server.address")).isEqualTo("127.0.0.1");
	}

	@Test
	void listsTheModelAndCountsAttainmentByClass() {
		WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build();
		// Four instances of one model: listed once.
		client.get()
			.uri("/v1/models")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.object")
			.isEqualTo("list")
			.jsonPath("$.data.length()")
			.isEqualTo(1)
			.jsonPath("$.data[0].id")
			.isEqualTo(EmulatorSettings.DEFAULT_MODEL);
		client.post()
			.uri("/v1/chat/completions")
			.header("Content-Type", "application/json")
			.header("x-slo-class", "interactive")
			.bodyValue(
					"{\"messages\":[{\"role\":\"user\",\"content\":\"Stream me\"}],\"max_tokens\":2,\"stream\":true}")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.returnResult();
		String metrics = new String(client.get()
			.uri("/actuator/prometheus")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.returnResult()
			.getResponseBodyContent(), StandardCharsets.UTF_8);
		assertThat(metrics).containsPattern(
				"dualmap_slo_total\\{class=\"interactive\",outcome=\"(within|over)\",pool=\"demo-pool\"} 1\\.0");
	}

	/** Requests the emulated instances finished, all together. */
	private long finished() {
		return pool.servers().stream().mapToLong(s -> s.stats().finished()).sum();
	}

}

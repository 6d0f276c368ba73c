package io.github.dualmap.gateway;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two stub engines and one that accepts connections and never answers (a hung engine):
 * its scrapes time out, it is taken out after {@code dualmap.scrape.unresponsive-after},
 * and every request goes to the others, where before a share of them hung with it.
 */
@GatewayIntegrationTest(properties = { "dualmap.scrape.interval=50ms", "dualmap.scrape.timeout=100ms",
		"dualmap.scrape.unresponsive-after=600ms", "management.endpoints.web.exposure.include=dualmap" })
@ExtendWith(OutputCaptureExtension.class)
class UnresponsiveInstanceIntegrationTests {

	static final List<StubEngine> ENGINES = List.of(new StubEngine("a"), new StubEngine("b"));

	static final Blackhole HUNG = new Blackhole();

	@Autowired
	WebTestClient client;

	@Autowired
	DualMapRegistry registry;

	@DynamicPropertySource
	static void engines(DynamicPropertyRegistry properties) {
		StubEngine.discover(properties, "llm", ENGINES);
		properties.add("spring.cloud.discovery.client.simple.instances.llm[2].uri",
				() -> "http://127.0.0.1:" + HUNG.port());
	}

	@AfterAll
	static void stop() throws IOException {
		ENGINES.forEach(StubEngine::stop);
		HUNG.close();
	}

	@Test
	void aHungEngineGetsNoRequestsOnceItHasNotAnsweredForTheSilenceBound(CapturedOutput output) {
		String hung = "127.0.0.1:" + HUNG.port();
		// Discovery is polled in the background (DiscoveryMembership): no request needed.
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.registry.service("llm").instancePool().instance(hung) != null
					&& !this.registry.service("llm").instancePool().instance(hung).acceptsNewWork());
		assertThat(this.registry.service("llm").breakers().responsive(hung)).isFalse();
		this.client.get()
			.uri("/actuator/dualmap/llm/" + hung)
			.exchange()
			.expectBody()
			.jsonPath("$.responsive")
			.isEqualTo(false)
			.jsonPath("$.healthy")
			.isEqualTo(false);
		Set<String> servedBy = new HashSet<>();
		for (int i = 0; i < 12; i++) {
			EntityExchangeResult<byte[]> r = this.client.post()
				.uri("/v1/chat/completions")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue("{\"model\":\"m\",\"stream\":" + (i % 2 == 0) + ",\"messages\":[{\"role\":\"user\","
						+ "\"content\":\"question " + i + " " + "x".repeat(600) + "\"}]}")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody(byte[].class)
				.returnResult();
			servedBy.add(r.getResponseHeaders().getFirst(DispatchAccountingFilter.INSTANCE_HEADER));
		}
		assertThat(servedBy).doesNotContain(hung).isNotEmpty();
		assertThat(output.getAll()).contains("Instance " + hung + " of llm has not answered for");
	}

	/** Accepts connections and never reads or writes. */
	static final class Blackhole implements AutoCloseable {

		private final ServerSocket server;

		private final List<Socket> held = new CopyOnWriteArrayList<>();

		Blackhole() {
			try {
				this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
			Thread accepting = new Thread(() -> {
				while (!this.server.isClosed()) {
					try {
						this.held.add(this.server.accept());
					}
					catch (IOException ex) {
						return;
					}
				}
			}, "blackhole");
			accepting.setDaemon(true);
			accepting.start();
		}

		int port() {
			return this.server.getLocalPort();
		}

		@Override
		public void close() throws IOException {
			this.server.close();
			for (Socket s : this.held) {
				s.close();
			}
		}

	}

}

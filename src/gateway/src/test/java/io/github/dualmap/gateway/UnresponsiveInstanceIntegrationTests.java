package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two stub engines and one that accepts connections and never answers (a hung engine):
 * its scrapes time out, it is taken out after {@code dualmap.scrape.unresponsive-after},
 * and every request goes to the others instead of a share of them hanging with it.
 */
@GatewayIntegrationTest(properties = { "dualmap.scrape.interval=50ms", "dualmap.scrape.timeout=100ms",
		"dualmap.scrape.unresponsive-after=600ms", "management.endpoints.web.exposure.include=dualmap" })
@ExtendWith(OutputCaptureExtension.class)
class UnresponsiveInstanceIntegrationTests {

	@Discovered
	static final List<StubEngine> ENGINES = List.of(new StubEngine("a"), new StubEngine("b"));

	@Discovered
	static final StubEngine HUNG = StubEngine.unresponsive("hung");

	@Autowired
	WebTestClient client;

	@Autowired
	DualMapRegistry registry;

	@Test
	void aHungEngineGetsNoRequestsOnceItHasNotAnsweredForTheSilenceBound(CapturedOutput output) {
		String hung = HUNG.instanceId();
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

}

package io.github.dualmap.gateway;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two services over the same two stub engines in one gateway, the A/B set-up of
 * docs/operations.md: {@code affine} runs the global settings ({@code dualmap}, queue
 * mode, a 1 h TTFT SLO), {@code spread} overrides them under
 * {@code dualmap.pools.spread.*} ({@code round-robin}, pass-through, a 1 ms SLO). Each
 * route's requests are placed by its own pool's policy, judged against its own SLO, and
 * tagged and reported with its own policy.
 */
@GatewayIntegrationTest(properties = { "dualmap.policy=dualmap-directory",
		"spring.cloud.gateway.server.webflux.routes[0].id=affine",
		"spring.cloud.gateway.server.webflux.routes[0].uri=lb://affine",
		"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/v1/**",
		"spring.cloud.gateway.server.webflux.routes[0].predicates[1]=Header=x-pool, affine",
		"spring.cloud.gateway.server.webflux.routes[1].id=spread",
		"spring.cloud.gateway.server.webflux.routes[1].uri=lb://spread",
		"spring.cloud.gateway.server.webflux.routes[1].predicates[0]=Path=/v1/**",
		"spring.cloud.gateway.server.webflux.routes[1].predicates[1]=Header=x-pool, spread",
		"dualmap.services=affine,spread", "dualmap.scrape.interval=50ms", "dualmap.scrape.timeout=2s",
		"dualmap.slo.ttft=1h", "dualmap.pools.spread.policy=round-robin", "dualmap.pools.spread.slo.ttft=1ms",
		"dualmap.pools.spread.dispatch.mode=pass-through", "dualmap.pools.spread.dispatch.max-prefill-requests=4",
		"management.endpoints.web.exposure.include=dualmap" })
class PoolSettingsIntegrationTests {

	@Discovered({ "affine", "spread" })
	static final List<StubEngine> ENGINES = List.of(new StubEngine("a"), new StubEngine("b"));

	static final JsonMapper JSON = JsonMapper.builder().build();

	static final String CHAT = """
			{"model":"m","stream":true,"messages":[{"role":"system","content":"%s"},{"role":"user","content":"same question"}]}"""
		.formatted("You are the assistant of the pool settings test. ".repeat(20));

	@Autowired
	WebTestClient client;

	@Autowired
	DualMapRegistry registry;

	@Autowired
	MeterRegistry meters;

	@BeforeEach
	void slowPrefill() {
		// Longer than spread's 1 ms objective, far below affine's hour.
		ENGINES.forEach(e -> e.firstByteDelay.set(Duration.ofMillis(30)));
	}

	@AfterAll
	static void stopEngines() {
		ENGINES.forEach(StubEngine::stop);
	}

	List<String> send(String pool, int times) {
		List<String> instances = new ArrayList<>();
		for (int i = 0; i < times; i++) {
			instances.add(this.client.post()
				.uri("/v1/chat/completions")
				.header("x-pool", pool)
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(CHAT)
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.returnResult()
				.getResponseHeaders()
				.getFirst(DispatchAccountingFilter.INSTANCE_HEADER));
		}
		return instances;
	}

	double slo(String service, String outcome) {
		return count("dualmap.slo", "pool", service, "outcome", outcome);
	}

	double decisions(String service, String policy) {
		return count("dualmap.decisions", "pool", service, "policy", policy);
	}

	double count(String meter, String... tags) {
		return this.meters.find(meter).tags(tags).counters().stream().mapToDouble(c -> c.count()).sum();
	}

	@Test
	void eachServiceRoutesJudgesAndReportsWithItsOwnSettings() {
		await().atMost(Duration.ofSeconds(5))
			.until(() -> this.registry.service("affine").instancePool().size() == 2
					&& this.registry.service("spread").instancePool().size() == 2);

		JsonNode root = actuator();
		assertThat(root.get("policy").asString()).isEqualTo("dualmap-directory");
		assertThat(root.get("dispatchMode").asString()).isEqualTo("queue");
		JsonNode affine = root.get("pools").get("affine");
		assertThat(affine.get("policy").asString()).isEqualTo("dualmap-directory");
		assertThat(affine.get("dispatchMode").asString()).isEqualTo("queue");
		assertThat(affine.get("sloTtftMs").asLong()).isEqualTo(3_600_000);
		assertThat(affine.get("dispatch").get("maxPrefillRequests").asInt()).isEqualTo(32);
		assertThat(affine.get("dispatch").get("maxMigrations").asInt()).isEqualTo(2);
		JsonNode spreadPool = root.get("pools").get("spread");
		assertThat(spreadPool.get("policy").asString()).isEqualTo("round-robin");
		assertThat(spreadPool.get("dispatchMode").asString()).isEqualTo("pass-through");
		assertThat(spreadPool.get("sloTtftMs").asLong()).isEqualTo(1);
		assertThat(spreadPool.get("dispatch").get("maxPrefillRequests").asInt()).isEqualTo(4);
		// A peer policy's queue moves nothing: its moves would follow DualMap's rings.
		assertThat(spreadPool.get("dispatch").get("maxMigrations").asInt()).isZero();

		// The same prompt stays on one instance under DualMap, alternates under
		// round-robin.
		assertThat(send("affine", 4)).hasSize(4).doesNotContainNull().containsOnly(send("affine", 1).get(0));
		List<String> spread = send("spread", 4);
		assertThat(spread).filteredOn(ENGINES.get(0).instanceId()::equals).hasSize(2);
		assertThat(spread).filteredOn(ENGINES.get(1).instanceId()::equals).hasSize(2);

		// Judged against its own pool's objective: 30 ms is within an hour, over 1 ms.
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
			assertThat(slo("affine", "within")).isEqualTo(5);
			assertThat(slo("spread", "over")).isEqualTo(4);
		});
		assertThat(slo("affine", "over")).isZero();
		assertThat(slo("spread", "within")).isZero();
		assertThat(decisions("affine", "dualmap-directory")).isEqualTo(5);
		// dualmap-directory keeps a prefix directory; round-robin keeps none.
		JsonNode after = actuator();
		assertThat(after.get("pools").get("affine").get("directory").get("blocks").asInt()).isPositive();
		assertThat(after.get("pools").get("spread").get("directory").isNull()).isTrue();
		assertThat(decisions("spread", "round-robin")).isEqualTo(4);
		assertThat(decisions("spread", "dualmap-directory")).isZero();
	}

	private JsonNode actuator() {
		return JSON.readTree(new String(this.client.get()
			.uri("/actuator/dualmap")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.returnResult()
			.getResponseBodyContent(), StandardCharsets.UTF_8));
	}

}

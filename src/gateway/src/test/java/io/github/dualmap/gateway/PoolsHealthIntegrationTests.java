package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.List;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.awaitility.Awaitility.await;

/**
 * The {@code dualMap} health contributor, added to the readiness group: DOWN (readiness
 * 503) while no instance of a pool can take a request (both engines stop answering their
 * scrapes and are taken out as unresponsive), UP again once they answer; liveness, whose
 * group it is not in, stays UP throughout.
 */
@GatewayIntegrationTest(
		properties = { "dualmap.scrape.interval=100ms", "dualmap.scrape.timeout=100ms", "dualmap.scrape.jitter=0",
				"dualmap.scrape.unresponsive-after=400ms", "management.endpoints.web.exposure.include=health",
				"management.endpoint.health.show-details=always", "management.endpoint.health.probes.enabled=true",
				"management.endpoint.health.group.readiness.include=readinessState,dualMap",
				"management.endpoint.health.group.readiness.show-details=always" })
class PoolsHealthIntegrationTests {

	@Discovered
	static final List<StubEngine> ENGINES = List.of(new StubEngine("a"), new StubEngine("b"));

	@Autowired
	WebTestClient client;

	WebTestClient.ResponseSpec get(String path) {
		return this.client.get().uri(path).exchange();
	}

	@Test
	void downWhileNoInstanceCanTakeARequestAndUpWhenTheyAreBack() {
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> get("/actuator/health/readiness").expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.components.dualMap.status")
				.isEqualTo("UP")
				.jsonPath("$.components.dualMap.details.pools.llm.instances")
				.isEqualTo(2)
				.jsonPath("$.components.dualMap.details.pools.llm.accepting")
				.isEqualTo(2));

		// Both engines hang: their scrapes time out until they are taken out.
		ENGINES.forEach(e -> e.scrapesHang.set(true));
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> get("/actuator/health/readiness").expectStatus()
				.isEqualTo(503)
				.expectBody()
				.jsonPath("$.status")
				.isEqualTo("DOWN")
				.jsonPath("$.components.dualMap.details.pools.llm.instances")
				.isEqualTo(2)
				.jsonPath("$.components.dualMap.details.pools.llm.accepting")
				.isEqualTo(0));
		get("/actuator/health").expectStatus().isEqualTo(503);
		// Not in the liveness group: a gateway is not restarted for its backends.
		get("/actuator/health/liveness").expectStatus().isOk().expectBody().jsonPath("$.status").isEqualTo("UP");

		ENGINES.forEach(e -> e.scrapesHang.set(false));
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> get("/actuator/health/readiness").expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.components.dualMap.details.pools.llm.accepting")
				.isEqualTo(2));
	}

}

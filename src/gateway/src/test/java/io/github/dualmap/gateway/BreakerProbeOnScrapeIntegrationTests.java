package io.github.dualmap.gateway;

import java.time.Duration;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An instance that comes back (its scrapes answer again after failing) takes requests
 * within one scrape interval, although its breaker opened with an hour to wait: the
 * answering scrape moves the open breaker to half open, and the next request is its
 * probe.
 */
@GatewayIntegrationTest(properties = { "dualmap.scrape.interval=200ms", "dualmap.scrape.timeout=150ms",
		"dualmap.scrape.jitter=0", "dualmap.breaker.sliding-window-size=2", "dualmap.breaker.minimum-number-of-calls=2",
		"dualmap.breaker.failure-rate-threshold=50", "dualmap.breaker.wait-duration-in-open-state=1h",
		"dualmap.breaker.permitted-number-of-calls-in-half-open-state=1" })
class BreakerProbeOnScrapeIntegrationTests {

	static final Duration SCRAPE_INTERVAL = Duration.ofMillis(200);

	@Discovered
	static final StubEngine ENGINE = new StubEngine("a");

	@Autowired
	WebTestClient client;

	@Autowired
	DualMapRegistry registry;

	int post(String user) {
		return this.client.post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"" + user + "\"}]}")
			.exchange()
			.expectBody(String.class)
			.returnResult()
			.getStatus()
			.value();
	}

	@Test
	void anInstanceWhoseScrapesAnswerAgainIsProbedAtOnce() {
		ServicePool service = this.registry.service("llm");
		await().atMost(Duration.ofSeconds(10)).until(() -> service.instancePool().size() == 1);
		assertThat(post("warm")).isEqualTo(200);
		CircuitBreaker breaker = service.breakers().breaker(ENGINE.instanceId());

		// The engine goes down: requests fail, scrapes get no answer.
		ENGINE.scrapesHang.set(true);
		ENGINE.crash.set("before");
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			assertThat(post("down")).isGreaterThanOrEqualTo(500);
			assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
		});
		assertThat(post("while open")).isEqualTo(503);
		await().atMost(Duration.ofSeconds(5)).until(() -> service.scrapeFailures(ENGINE.instanceId()) > 0);

		// It is back: within one scrape interval (plus the scrape itself) its breaker
		// lets a probe through, an hour before its wait in the open state ends.
		ENGINE.crash.set("");
		ENGINE.scrapesHang.set(false);
		long back = System.nanoTime();
		await().atMost(Duration.ofSeconds(5))
			.pollInterval(Duration.ofMillis(10))
			.until(() -> breaker.getState() != CircuitBreaker.State.OPEN);
		Duration reopened = Duration.ofNanos(System.nanoTime() - back);
		// A scrape hanging when the engine came back times out first (150 ms).
		assertThat(reopened).isLessThan(SCRAPE_INTERVAL.multipliedBy(2).plusMillis(150).plusMillis(300));
		assertThat(post("back")).isEqualTo(200);
		// One probe is permitted, and it succeeded (recorded when the exchange ends,
		// which
		// may be just after the client has read the answer).
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED));
	}

}

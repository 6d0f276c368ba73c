package io.github.dualmap.actuate;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import io.github.dualmap.gateway.DispatchAccountingFilter;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.ServicePool;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Draining through {@code POST /actuator/dualmap/{service}/{instance}} with
 * {@code management.endpoint.dualmap.access=unrestricted}, on three stub engines: a
 * drained instance gets no new requests, keeps the one it holds, hands the requests
 * queued for it to other instances at once, reports idle once its own request finishes,
 * and takes requests again when undrained.
 */
@GatewayIntegrationTest(properties = { "dualmap.scrape.enabled=false",
		"management.endpoints.web.exposure.include=dualmap", "management.endpoint.dualmap.access=unrestricted",
		"spring.cloud.gateway.server.webflux.httpclient.response-timeout=30s",
		// One request in prefill per instance, so a held stream makes the next
		// ones queue.
		"dualmap.dispatch.max-prefill-requests=1" })
class DualMapDrainIntegrationTests {

	@Discovered
	static final List<StubEngine> ENGINES = List.of(new StubEngine("a"), new StubEngine("b"), new StubEngine("c"));

	static final String SYSTEM_PROMPT = "You answer questions about drains and pipes. ".repeat(10);

	@Autowired
	WebTestClient client;

	@LocalServerPort
	int port;

	@Autowired
	DualMapRegistry registry;

	static String body(String user) {
		return """
				{"model":"m","messages":[{"role":"system","content":"%s"},{"role":"user","content":"%s"}]}"""
			.formatted(SYSTEM_PROMPT, user);
	}

	String chat(String user) {
		return this.client.post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body(user))
			.exchange()
			.expectStatus()
			.isOk()
			.returnResult(byte[].class)
			.getResponseHeaders()
			.getFirst(DispatchAccountingFilter.INSTANCE_HEADER);
	}

	WebTestClient.BodyContentSpec drain(String instance, boolean draining) {
		return this.client.post()
			.uri("/actuator/dualmap/llm/{instance}", instance)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"draining\":" + draining + "}")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody();
	}

	@Test
	void aDrainedInstanceGetsNoNewRequestsAndReportsIdleOnceItsRequestEnds() throws Exception {
		String home = chat("first");
		StubEngine engine = ENGINES.stream().filter(e -> e.instanceId().equals(home)).findFirst().orElseThrow();
		engine.holdResponses();
		int servedBefore = engine.served.get();
		// A request held by the engine: in flight on the instance while it drains.
		HttpClient http = HttpClient.newHttpClient();
		CompletableFuture<HttpResponse<String>> held = http
			.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/v1/chat/completions"))
				.header("content-type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofString(body("held")))
				.build(), HttpResponse.BodyHandlers.ofString());
		await().atMost(Duration.ofSeconds(10)).until(() -> engine.served.get() == servedBefore + 1);

		drain(home, true).jsonPath("$.id")
			.isEqualTo(home)
			.jsonPath("$.draining")
			.isEqualTo(true)
			.jsonPath("$.idle")
			.isEqualTo(false)
			.jsonPath("$.inFlight")
			.isEqualTo(1);
		for (int i = 0; i < 6; i++) {
			assertThat(chat("while draining " + i)).isNotEqualTo(home);
		}
		assertThat(engine.served.get()).isEqualTo(servedBefore + 1);
		this.client.get()
			.uri("/actuator/dualmap/llm")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.accepting")
			.isEqualTo(2)
			// Three instances: no warning about a small pool.
			.jsonPath("$.warnings.length()")
			.isEqualTo(0);

		engine.releaseResponses();
		assertThat(held.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> this.client.get()
				.uri("/actuator/dualmap/llm/{instance}", home)
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.idle")
				.isEqualTo(true)
				.jsonPath("$.draining")
				.isEqualTo(true));

		drain(home, false).jsonPath("$.draining").isEqualTo(false).jsonPath("$.idle").isEqualTo(true);
		// Undrained, it is a candidate again: some of many fresh prefixes land there.
		boolean servedAgain = false;
		for (int i = 0; i < 60 && !servedAgain; i++) {
			String system = "Tenant " + i + " has its own assistant. ";
			servedAgain = home.equals(this.client.post()
				.uri("/v1/completions")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue("{\"model\":\"m\",\"prompt\":\"" + system.repeat(30) + "\"}")
				.exchange()
				.expectStatus()
				.isOk()
				.returnResult(byte[].class)
				.getResponseHeaders()
				.getFirst(DispatchAccountingFilter.INSTANCE_HEADER));
		}
		assertThat(servedAgain).isTrue();
	}

	static String streamed(String system, String user) {
		return """
				{"model":"m","stream":true,"messages":[{"role":"system","content":"%s"},{"role":"user","content":"%s"}]}"""
			.formatted(system, user);
	}

	CompletableFuture<HttpResponse<String>> sendAsync(HttpClient http, String body) {
		return http
			.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/v1/chat/completions"))
				.header("content-type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofString(body))
				.build(), HttpResponse.BodyHandlers.ofString());
	}

	@Test
	void drainingMovesTheRequestsQueuedForTheInstanceElsewhereAtOnce() throws Exception {
		String system = "You answer questions about queues and waiting lines. ".repeat(10);
		HttpClient http = HttpClient.newHttpClient();
		HttpResponse<String> warm = sendAsync(http, streamed(system, "warm up")).get(10, TimeUnit.SECONDS);
		assertThat(warm.statusCode()).isEqualTo(200);
		String home = warm.headers().firstValue(DispatchAccountingFilter.INSTANCE_HEADER).orElseThrow();
		StubEngine engine = ENGINES.stream().filter(e -> e.instanceId().equals(home)).findFirst().orElseThrow();
		ServicePool service = this.registry.service("llm");
		engine.holdResponses();
		int servedBefore = engine.served.get();
		// A stream whose first byte the engine holds: in prefill on its home, which then
		// has no prefill capacity left (max-prefill-requests=1).
		CompletableFuture<HttpResponse<String>> held = sendAsync(http, streamed(system, "held"));
		await().atMost(Duration.ofSeconds(10)).until(() -> engine.served.get() == servedBefore + 1);
		// Same prefix, cached only on the home: they wait in the gateway for it.
		List<CompletableFuture<HttpResponse<String>>> waiting = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			waiting.add(sendAsync(http, streamed(system, "waiting " + i)));
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> service.queues().queued(home) == 3);
		long reroutedBefore = service.queues().rerouted();

		drain(home, true).jsonPath("$.draining")
			.isEqualTo(true)
			.jsonPath("$.queuedRequests")
			.isEqualTo(0)
			.jsonPath("$.inFlight")
			.isEqualTo(1)
			.jsonPath("$.idle")
			.isEqualTo(false);
		assertThat(service.queues().rerouted() - reroutedBefore).isEqualTo(3);
		for (CompletableFuture<HttpResponse<String>> w : waiting) {
			HttpResponse<String> r = w.get(10, TimeUnit.SECONDS);
			assertThat(r.statusCode()).isEqualTo(200);
			assertThat(r.headers().firstValue(DispatchAccountingFilter.INSTANCE_HEADER)).get().isNotEqualTo(home);
		}
		assertThat(engine.served.get()).isEqualTo(servedBefore + 1);

		engine.releaseResponses();
		assertThat(held.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		await().atMost(Duration.ofSeconds(10)).until(() -> service.isIdle(home));
		this.client.get()
			.uri("/actuator/dualmap/llm/{instance}", home)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.idle")
			.isEqualTo(true)
			.jsonPath("$.draining")
			.isEqualTo(true);
		this.client.get()
			.uri("/actuator/dualmap/llm")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.queue.queued")
			.isEqualTo(0)
			.jsonPath("$.queue.rerouted")
			.value(Integer.class, n -> assertThat(n).isGreaterThanOrEqualTo(3));
		drain(home, false).jsonPath("$.draining").isEqualTo(false);
	}

	@Test
	void drainingAnUnknownInstanceOrServiceIsABadRequestNamingIt() {
		this.client.post()
			.uri("/actuator/dualmap/llm/{instance}", "10.9.9.9:1")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"draining\":true}")
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody(String.class)
			.value(b -> assertThat(b).contains("service 'llm' has no instance '10.9.9.9:1'")
				.contains("\"code\":\"unknown_instance\""));
		this.client.post()
			.uri("/actuator/dualmap/nope/{instance}", "10.9.9.9:1")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"draining\":true}")
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody(String.class)
			.value(b -> assertThat(b).contains("no service 'nope'").contains("\"code\":\"unknown_service\""));
	}

	@Test
	void aDrainBodyWithoutAJsonBooleanIsABadRequestInTheEndpointsErrorShape() {
		String instance = ENGINES.get(0).instanceId();
		// No value, a null, a value Spring would convert ("yes", 1), no JSON at all.
		for (String body : List.of("{}", "", "{\"draining\":null}", "{\"draining\":\"yes\"}", "{\"draining\":1}",
				"garbage", "{\"draining\":")) {
			this.client.post()
				.uri("/actuator/dualmap/llm/{instance}", instance)
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(body)
				.exchange()
				.expectStatus()
				.isBadRequest()
				.expectBody()
				.jsonPath("$.error.type")
				.isEqualTo("invalid_request_error")
				.jsonPath("$.error.code")
				.isEqualTo("invalid_draining")
				.jsonPath("$.error.param")
				.isEqualTo("draining")
				.jsonPath("$.error.message")
				.value(String.class, m -> assertThat(m).as(body).contains("{\"draining\": true}"));
		}
		assertThat(this.registry.service("llm").instancePool().instance(instance).draining()).isFalse();
	}

}

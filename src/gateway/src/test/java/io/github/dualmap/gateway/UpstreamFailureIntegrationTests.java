package io.github.dualmap.gateway;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * An engine that dies with a request on it (its connection closed or reset), answers
 * later than Spring Cloud Gateway's response timeout, or goes silent after its status
 * line for {@code dualmap.response-idle-timeout}: the client gets an OpenAI error naming
 * what happened (502, 504) while nothing was sent to it yet, and a stream already under
 * way is cut, not ended as if complete; nothing is logged as a gateway error.
 */
@GatewayIntegrationTest(properties = {
		// Every route here: a list binds from one property source.
		"spring.cloud.gateway.server.webflux.routes[0].id=llm",
		"spring.cloud.gateway.server.webflux.routes[0].uri=lb://llm",
		"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/v1/**",
		"spring.cloud.gateway.server.webflux.routes[1].id=gone",
		"spring.cloud.gateway.server.webflux.routes[1].uri=lb://gone",
		"spring.cloud.gateway.server.webflux.routes[1].predicates[0]=Path=/gone/**",
		"spring.cloud.gateway.server.webflux.routes[1].filters[0]=StripPrefix=1",
		"spring.cloud.gateway.server.webflux.httpclient.response-timeout=1s", "dualmap.response-idle-timeout=1s",
		"dualmap.services=llm,gone", "dualmap.scrape.enabled=false", "dualmap.headers.enabled=false" })
@ExtendWith(OutputCaptureExtension.class)
class UpstreamFailureIntegrationTests {

	@Discovered
	static final List<StubEngine> ENGINES = List.of(new StubEngine("a"), new StubEngine("b"));

	/** Two engines that are gone: connections to them are refused. */
	@Discovered("gone")
	static final List<StubEngine> GONE = List.of(StubEngine.gone("gone-a"), StubEngine.gone("gone-b"));

	@Autowired
	WebTestClient client;

	@Autowired
	DualMapRegistry registry;

	@LocalServerPort
	int port;

	static String chat(boolean stream, String user) {
		return "{\"model\":\"m\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + user
				+ "\"}]}";
	}

	EntityExchangeResult<String> post(String body) {
		return this.client.post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	@Test
	void anEngineThatDiesBeforeAnsweringGets502(CapturedOutput output) {
		ENGINES.forEach(e -> e.crash.set("before"));
		closedBeforeAnswering();
		assertThat(output.getAll()).doesNotContain("500 Server Error").doesNotContain("ERROR");
	}

	@Test
	void anEngineWhoseConnectionIsResetBeforeAnsweringGets502(CapturedOutput output) {
		ENGINES.forEach(e -> e.crash.set("reset-before"));
		closedBeforeAnswering();
		assertThat(output.getAll()).doesNotContain("500 Server Error").doesNotContain("ERROR");
	}

	private void closedBeforeAnswering() {
		for (boolean stream : List.of(false, true)) {
			EntityExchangeResult<String> r = post(chat(stream, "dies " + stream));
			assertThat(r.getStatus().value()).isEqualTo(502);
			assertThat(r.getResponseBody()).contains("\"code\":\"upstream_connection_closed\"")
				.contains("\"type\":\"server_error\"")
				.contains("closed the connection before answering");
			assertThat(r.getResponseHeaders().getFirst("x-request-id")).isNotBlank();
			assertNamesNoBackend(r);
		}
	}

	@Test
	void anEngineSlowerThanTheResponseTimeoutGets504() {
		ENGINES.forEach(e -> e.firstByteDelay.set(Duration.ofSeconds(3)));
		EntityExchangeResult<String> r = post(chat(false, "slow"));
		assertThat(r.getStatus().value()).isEqualTo(504);
		assertThat(r.getResponseBody()).contains("\"code\":\"upstream_timeout\"")
			.contains("Response took longer than timeout");
		assertNamesNoBackend(r);
	}

	@Test
	void anAnswerSilentAfterItsStatusLineGets504AndFreesItsInstance(CapturedOutput output) {
		ENGINES.forEach(e -> e.crash.set("silent-before"));
		// An earlier test's request may still be ending (one cut or timed out ends after
		// its client has the answer): an attempt's end records its breaker outcome before
		// it leaves the pool, so once nothing is in flight every earlier failure counts.
		await().atMost(Duration.ofSeconds(5))
			.until(() -> this.registry.service("llm")
				.instancePool()
				.instances()
				.stream()
				.allMatch(s -> s.inFlight() == 0));
		int failedBefore = failedCalls();
		EntityExchangeResult<String> r = post(chat(true, "stalled"));
		assertThat(r.getStatus().value()).isEqualTo(504);
		assertThat(r.getResponseBody()).contains("\"code\":\"upstream_timeout\"")
			.contains("began its answer and then sent nothing")
			.contains("dualmap.response-idle-timeout");
		assertNamesNoBackend(r);
		// The connection to the engine is closed (vLLM aborts the request), and the
		// request no longer holds the instance's prefill.
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
			assertThat(ENGINES).allSatisfy(e -> assertThat(e.answering()).isZero());
			assertThat(this.registry.service("llm").instancePool().instances())
				.allSatisfy(s -> assertThat(s.prefillRequests()).isZero());
		});
		// It counts against the instance's breaker, as a failed answer does.
		assertThat(failedCalls()).isEqualTo(failedBefore + 1);
		assertThat(output.getAll()).doesNotContain("500 Server Error").doesNotContain("ERROR");
	}

	private int failedCalls() {
		ServicePool llm = this.registry.service("llm");
		return llm.instancePool()
			.instances()
			.stream()
			.mapToInt(s -> llm.breakers().breaker(s.id()).getMetrics().getNumberOfFailedCalls())
			.sum();
	}

	@Test
	void aStreamSilentMidwayIsCutNotEndedAsComplete(CapturedOutput output) {
		ENGINES.forEach(e -> e.crash.set("silent-during"));
		cutMidStream(output);
	}

	@Test
	void noInstanceToConnectToGets502NamingNoBackend() {
		EntityExchangeResult<String> r = this.client.post()
			.uri("/gone/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(chat(false, "nobody home"))
			.exchange()
			.expectBody(String.class)
			.returnResult();
		assertThat(r.getStatus().value()).as(r.getResponseBody()).isEqualTo(502);
		assertThat(r.getResponseBody()).contains("\"code\":\"upstream_connect_failed\"")
			.contains("'gone'")
			.doesNotContain(GONE.get(0).instanceId())
			.doesNotContain(GONE.get(1).instanceId())
			.doesNotContain("127.0.0.1");
		assertThat(r.getResponseHeaders().getFirst("x-dualmap-instance")).isNull();
	}

	/** Neither the body nor the headers of an error name an engine's address. */
	static void assertNamesNoBackend(EntityExchangeResult<String> r) {
		for (StubEngine e : ENGINES) {
			assertThat(r.getResponseBody()).doesNotContain(e.instanceId());
		}
		assertThat(r.getResponseBody()).doesNotContain("127.0.0.1").contains("'llm'");
		assertThat(r.getResponseHeaders().getFirst("x-dualmap-instance")).isNull();
	}

	@Test
	void aStreamWhoseEngineDiesIsCutNotEndedAsComplete(CapturedOutput output) throws Exception {
		ENGINES.forEach(e -> e.crash.set("during"));
		cutMidStream(output);
	}

	@Test
	void aStreamWhoseConnectionIsResetIsCutNotEndedAsComplete(CapturedOutput output) throws Exception {
		ENGINES.forEach(e -> e.crash.set("reset-during"));
		cutMidStream(output);
	}

	private void cutMidStream(CapturedOutput output) {
		HttpClient http = HttpClient.newHttpClient();
		HttpRequest request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/v1/chat/completions"))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(chat(true, "cut")))
			.timeout(Duration.ofSeconds(20))
			.build();
		// The client sees its stream fail, as with the engine itself, not a clean end.
		assertThatExceptionOfType(IOException.class)
			.isThrownBy(() -> http.send(request, HttpResponse.BodyHandlers.ofString()));
		assertThat(output.getAll()).contains("cut mid-response").doesNotContain("ERROR");
	}

}

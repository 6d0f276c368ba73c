package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Requests already sent to an engine that then hangs (it reads them, and answers neither
 * them nor its scrapes): once it is taken out as unresponsive they are sent to another
 * instance, where before they waited for their client or the response timeout (none is
 * set here, so without this they would wait for ever). A request continuing a response
 * only the hung engine holds gets a 504 instead.
 */
@GatewayIntegrationTest(properties = { "dualmap.policy=round-robin", "dualmap.scrape.interval=100ms",
		"dualmap.scrape.timeout=500ms", "dualmap.scrape.unresponsive-after=1500ms" })
@ExtendWith(OutputCaptureExtension.class)
class UnresponsiveInFlightIntegrationTests {

	@Discovered
	static final StubEngine A = new StubEngine("a");

	@Discovered
	static final StubEngine B = new StubEngine("b");

	@LocalServerPort
	int port;

	@Autowired
	DualMapRegistry registry;

	@BeforeEach
	void bothAnswer() {
		answerAgain();
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			ServicePool service = this.registry.service("llm");
			return service.instancePool().instance(A.instanceId()) != null
					&& service.instancePool().instance(B.instanceId()) != null
					&& service.instancePool().instance(A.instanceId()).acceptsNewWork()
					&& service.instancePool().instance(B.instanceId()).acceptsNewWork();
		});
	}

	@AfterEach
	void answerAgain() {
		B.hung.set(false);
		B.scrapesHang.set(false);
	}

	@Test
	void requestsWaitingOnAnEngineThatHangsAreSentToAnotherOnceItIsTakenOut(CapturedOutput output) throws Exception {
		ServicePool service = this.registry.service("llm");
		long retried = service.retries(RetryCause.UNRESPONSIVE);
		int held = B.held.get();
		B.hung.set(true);
		CompletableFuture<List<ResponseEntity<String>>> sent = Flux.range(0, 6)
			.flatMap(i -> post("/v1/chat/completions",
					"{\"model\":\"m\",\"stream\":" + (i % 2 == 0) + ",\"messages\":[{\"role\":\"user\","
							+ "\"content\":\"question " + i + "\"}]}"))
			.collectList()
			.toFuture();
		// Round robin sends half of them to b, which reads them and answers none; its
		// scrapes still answer, so nothing moves them until they stop too.
		await().atMost(Duration.ofSeconds(10)).until(() -> B.held.get() - held == 3);
		B.scrapesHang.set(true);
		List<ResponseEntity<String>> answers = sent.get(20, TimeUnit.SECONDS);
		assertThat(answers).hasSize(6).allSatisfy(answer -> {
			assertThat(answer.getStatusCode().value()).isEqualTo(200);
			assertThat(answer.getHeaders().getFirst(DispatchAccountingFilter.INSTANCE_HEADER))
				.isEqualTo(A.instanceId());
		});
		assertThat(service.retries(RetryCause.UNRESPONSIVE) - retried).isEqualTo(3);
		assertThat(output.getAll()).contains("sent to it and waiting for its answer are sent to another instance");
		// Nothing of the abandoned tries is left in the accounting.
		await().atMost(Duration.ofSeconds(5))
			.until(() -> service.instancePool().instance(B.instanceId()).inFlight() == 0
					&& service.instancePool().instance(A.instanceId()).inFlight() == 0);
	}

	@Test
	void aContinuationOfAResponseOnlyTheHungEngineHoldsGetsA504() throws Exception {
		String stored = null;
		for (int i = 0; i < 4 && stored == null; i++) {
			ResponseEntity<String> first = post("/v1/responses", "{\"model\":\"m\",\"input\":\"start " + i + "\"}")
				.block(Duration.ofSeconds(10));
			if (B.instanceId().equals(first.getHeaders().getFirst(DispatchAccountingFilter.INSTANCE_HEADER))) {
				Matcher id = Pattern.compile("\"id\":\"(resp_[^\"]+)\"").matcher(first.getBody());
				assertThat(id.find()).isTrue();
				stored = id.group(1);
			}
		}
		assertThat(stored).as("a response stored by b").isNotNull();
		B.hung.set(true);
		int held = B.held.get();
		CompletableFuture<ResponseEntity<String>> sent = post("/v1/responses",
				"{\"model\":\"m\",\"input\":\"more\",\"previous_response_id\":\"" + stored + "\"}")
			.toFuture();
		await().atMost(Duration.ofSeconds(10)).until(() -> B.held.get() > held);
		B.scrapesHang.set(true);
		ResponseEntity<String> next = sent.get(20, TimeUnit.SECONDS);
		assertThat(next.getStatusCode().value()).isEqualTo(504);
		// The body names the service, not the instance (a backend address).
		assertThat(next.getBody()).contains("\"code\":\"upstream_unresponsive\"")
			.contains("'llm'")
			.doesNotContain(B.instanceId());
	}

	private Mono<ResponseEntity<String>> post(String path, String body) {
		return WebClient.create("http://127.0.0.1:" + this.port)
			.post()
			.uri(path)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchangeToMono(response -> response.toEntity(String.class));
	}

}

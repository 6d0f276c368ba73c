package io.github.dualmap.gateway;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.dualmap.StubEngine;
import io.github.dualmap.core.Decision;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.replica.ReplicaPublisher;
import io.github.dualmap.replica.ReplicaSync;
import io.github.dualmap.replica.ReplicaSyncHandler;
import io.github.dualmap.WebTestClients;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two gateway replicas in front of two stub engines, syncing on loopback: replica A finds
 * its peers through discovery (its own entry included, which it recognises and skips),
 * replica B has A as a static peer. What one replica sends to an instance, the other then
 * knows is cached there. The receiving endpoint wins over a catch-all gateway route and
 * refuses bad input with OpenAI-style errors.
 * <p>
 * Not a {@code @GatewayIntegrationTest}: three gateways in one test class.
 */
class ReplicaSyncIntegrationTests {

	static final List<StubEngine> ENGINES = List.of(new StubEngine("a"), new StubEngine("b"));

	static final String TOKEN = "s3cret-for-tests";

	static ConfigurableApplicationContext a;

	static ConfigurableApplicationContext b;

	static ConfigurableApplicationContext c;

	static int portA;

	static int portB;

	static final List<Routed> decisionsA = new CopyOnWriteArrayList<>();

	static final List<Routed> decisionsB = new CopyOnWriteArrayList<>();

	@BeforeAll
	static void start() throws IOException {
		portA = freePort();
		portB = freePort();
		a = replica(portA, "dualmap.replicas.service-id=gateway",
				"spring.cloud.discovery.client.simple.instances.gateway[0].uri=http://127.0.0.1:" + portA,
				"spring.cloud.discovery.client.simple.instances.gateway[1].uri=http://127.0.0.1:" + portB);
		b = replica(portB, "dualmap.replicas.peers=http://127.0.0.1:" + portA);
		record(a, decisionsA);
		record(b, decisionsB);
	}

	@AfterAll
	static void stop() {
		for (ConfigurableApplicationContext context : new ConfigurableApplicationContext[] { c, a, b }) {
			if (context != null) {
				context.close();
			}
		}
		ENGINES.forEach(StubEngine::stop);
	}

	private static ConfigurableApplicationContext replica(int port, String... extra) {
		List<String> properties = new ArrayList<>(List.of("server.port=" + port, "server.address=127.0.0.1",
				"dualmap.services=llm", "dualmap.scrape.enabled=false", "spring.cloud.loadbalancer.cache.enabled=false",
				"dualmap.headers.enabled=true", "dualmap.hot-prefix.window=1000", "dualmap.hot-prefix.min-samples=1000",
				"spring.cloud.gateway.server.webflux.routes[0].id=everything",
				"spring.cloud.gateway.server.webflux.routes[0].uri=lb://llm",
				"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/**", "dualmap.replicas.enabled=true",
				"dualmap.replicas.token=" + TOKEN, "dualmap.replicas.flush-interval=20ms",
				"dualmap.replicas.peer-refresh-interval=100ms", "dualmap.replicas.max-body-size=64KB",
				"management.endpoints.web.exposure.include=dualmap,prometheus"));
		for (int i = 0; i < ENGINES.size(); i++) {
			properties.add("spring.cloud.discovery.client.simple.instances.llm[" + i + "].uri=" + ENGINES.get(i).uri());
		}
		properties.addAll(List.of(extra));
		return new SpringApplicationBuilder(App.class).web(WebApplicationType.REACTIVE)
			.properties(properties.toArray(String[]::new))
			.run();
	}

	private static void record(ConfigurableApplicationContext context, List<Routed> decisions) {
		context.getBean(DualMapRegistry.class).addListener(new DualMapListener() {
			@Override
			public void onDecision(String service, RoutingRequest request, Decision decision) {
				decisions.add(new Routed(request, decision));
			}
		});
	}

	/**
	 * Whether {@code replica}'s shadow index has all of {@code routed}'s prompt on its
	 * instance.
	 */
	private static boolean knows(ConfigurableApplicationContext replica, Routed routed) {
		long[] chain = routed.request().blocks().chain();
		return replica.getBean(DualMapRegistry.class)
			.service("llm")
			.instancePool()
			.instance(routed.decision().instanceId())
			.shadow()
			.peekMatchedBlocks(chain) == chain.length;
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	private static WebTestClient client(int port) {
		return WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + port)
			.responseTimeout(Duration.ofSeconds(30))
			.build();
	}

	private static Routed chat(int port, List<Routed> decisions, String topic) {
		int before = decisions.size();
		String system = ("You are the assistant for " + topic + ". ").repeat(20);
		client(port).post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("""
					{"model":"m","messages":[{"role":"system","content":"%s"},{"role":"user","content":"hi"}]}"""
				.formatted(system))
			.exchange()
			.expectStatus()
			.isOk();
		assertThat(decisions).hasSizeGreaterThan(before);
		return decisions.get(decisions.size() - 1);
	}

	@Test
	void aContinuationReachingTheOtherReplicaIsPinnedToTheInstanceHoldingItsResponse() {
		String body = """
				{"model":"m","instructions":"%s","input":"go"%s}""";
		WebTestClient.ResponseSpec first = client(portA).post()
			.uri("/v1/responses")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body.formatted(("You plan trips. ").repeat(20), ""))
			.exchange()
			.expectStatus()
			.isOk();
		String holder = first.returnResult(String.class).getResponseHeaders().getFirst("x-dualmap-instance");
		String id = a.getBean(StoredResponses.class).recent(1).get(0).responseId();
		// B learns from A's publication where the response lives; the continuation, with
		// a
		// prompt of its own, goes there (the stub answers 404 elsewhere).
		await().atMost(Duration.ofSeconds(10))
			.until(() -> holder.equals(b.getBean(StoredResponses.class).instanceOf("llm", id)));
		for (String topic : List.of("museums", "food", "trains")) {
			client(portB).post()
				.uri("/v1/responses")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(body.formatted(("You plan " + topic + ". ").repeat(20),
						",\"previous_response_id\":\"" + id + "\""))
				.exchange()
				.expectStatus()
				.isOk()
				.expectHeader()
				.valueEquals("x-dualmap-instance", holder)
				.expectHeader()
				.valueEquals("x-dualmap-reason", "pinned");
		}
	}

	@Test
	void whatOneReplicaSentTheOtherKnowsIsCachedInBothDirections() {
		Routed first = chat(portA, decisionsA, "billing");
		assertThat(first.decision().cachedTokens()).isZero();
		await().atMost(Duration.ofSeconds(10)).until(() -> knows(b, first));
		Decision fromB = chat(portB, decisionsB, "billing").decision();
		assertThat(fromB.instanceId()).isEqualTo(first.decision().instanceId());
		assertThat(fromB.cachedTokens()).as("B never routed this prompt; only A's release tells it").isPositive();

		Routed second = chat(portB, decisionsB, "shipping");
		assertThat(second.decision().cachedTokens()).isZero();
		await().atMost(Duration.ofSeconds(10)).until(() -> knows(a, second));
		Decision fromA = chat(portA, decisionsA, "shipping").decision();
		assertThat(fromA.instanceId()).isEqualTo(second.decision().instanceId());
		assertThat(fromA.cachedTokens()).isPositive();
		assertThat(a.getBean(ReplicaSync.class).applied()).isPositive();
		assertThat(b.getBean(ReplicaSync.class).applied()).isPositive();

		// A found itself in discovery and publishes to B only.
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(a.getBean(ReplicaPublisher.class).peers())
				.containsExactly(URI.create("http://127.0.0.1:" + portB)));
		assertThat(b.getBean(ReplicaPublisher.class).peers()).containsExactly(URI.create("http://127.0.0.1:" + portA));
		assertThat(a.getBean(ReplicaSync.class).failedPublications()).isZero();
		assertThat(a.getBean(ReplicaSync.class).sent()).isPositive();

		// Operators see it in the actuator view and in Prometheus.
		client(portA).get()
			.uri("/actuator/dualmap")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.replicas.replica")
			.isEqualTo(a.getBean(ReplicaSync.class).replicaId())
			.jsonPath("$.replicas.peers[0]")
			.isEqualTo("http://127.0.0.1:" + portB)
			.jsonPath("$.replicas.applied")
			.value(n -> assertThat(((Number) n).longValue()).isPositive());
		String prometheus = WebTestClients.okBody(client(portA), "/actuator/prometheus");
		assertThat(prometheus).containsPattern("dualmap_replicas_releases_total\\{.*outcome=\"applied\".*\\} [1-9]")
			.contains("dualmap_replicas_peers ")
			.contains("dualmap_replicas_publish_failures_total");
	}

	@Test
	void aRequestInPrefillAtOneReplicaCountsInTheOthersLoadUntilItsFirstByte() {
		ENGINES.forEach(e -> e.firstByteDelay.set(Duration.ofSeconds(4)));
		try {
			String system = ("You are the assistant for load sharing. ").repeat(20);
			Disposable streaming = WebClient.create("http://127.0.0.1:" + portA)
				.post()
				.uri("/v1/chat/completions")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue("{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"system\",\"content\":\"" + system
						+ "\"},{\"role\":\"user\",\"content\":\"hi\"}]}")
				.retrieve()
				.bodyToFlux(String.class)
				.subscribe();
			// B learns A's load with A's next flush (20 ms here), before the first byte.
			await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> assertThat(peerPrefill(b)).isEqualTo(1));
			ENGINES.forEach(e -> e.firstByteDelay.set(Duration.ZERO));
			client(portB).get()
				.uri("/actuator/dualmap")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.replicas.shareLoad")
				.isEqualTo(true)
				.jsonPath("$.replicas.loadPeers")
				.isEqualTo(1)
				.jsonPath("$.pools.llm.instances[?(@.peerPrefillRequests == 1)].peerPendingTokens")
				.value(tokens -> assertThat(tokens.toString()).matches("\\[[1-9][0-9]*\\]"))
				// A's publication carries the attention pairs of its prompt in prefill.
				.jsonPath("$.pools.llm.instances[?(@.peerPrefillRequests == 1)].peerPrefillPairs")
				.value(pairs -> assertThat(pairs.toString()).matches("\\[[1-9][0-9]*\\]"))
				.jsonPath("$.pools.llm.instances[?(@.peerPrefillRequests == 1)].peerQueuedTokens")
				.value(queued -> assertThat(queued.toString()).isEqualTo("[0]"));
			// The first byte came back at A: its next publication says so.
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(peerPrefill(b)).isZero());
			streaming.dispose();
			assertThat(peerPrefill(a)).as("B sent nothing").isZero();
		}
		finally {
			ENGINES.forEach(e -> e.firstByteDelay.set(Duration.ZERO));
		}
	}

	/**
	 * The other replicas' requests in prefill, over the instances, as {@code replica}
	 * sees them.
	 */
	private static int peerPrefill(ConfigurableApplicationContext replica) {
		return replica.getBean(DualMapRegistry.class)
			.service("llm")
			.instancePool()
			.instances()
			.stream()
			.mapToInt(InstanceState::peerPrefillRequests)
			.sum();
	}

	@Test
	void aReplicaThatStartsLaterLearnsWhatItsPeerKnowsAtOnce() throws IOException {
		Routed routed = chat(portA, decisionsA, "returns");
		// A does not publish to C (C is not in A's discovery): only C's start-up snapshot
		// can tell it what A sent where.
		c = replica(freePort(), "dualmap.replicas.peers=http://127.0.0.1:" + portA);
		await().atMost(Duration.ofSeconds(10)).until(() -> knows(c, routed));
		ReplicaPublisher.Bootstrap learned = c.getBean(ReplicaPublisher.class).bootstrapped();
		assertThat(learned).isNotNull();
		assertThat(learned.peer()).isEqualTo(URI.create("http://127.0.0.1:" + portA));
		assertThat(learned.instances()).isPositive();
		assertThat(learned.blocks()).isPositive();
		// Operators see it in the actuator view.
		client(((org.springframework.boot.web.server.context.WebServerApplicationContext) c).getWebServer().getPort())
			.get()
			.uri("/actuator/dualmap")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.replicas.bootstrap.peer")
			.isEqualTo("http://127.0.0.1:" + portA)
			.jsonPath("$.replicas.bootstrap.blocks")
			.value(n -> assertThat(((Number) n).intValue()).isPositive());
		// C leaves; A and B, on loops of their own, serve on.
		c.close();
		c = null;
		// The snapshot is the peers' only: without the token, 401.
		client(portA).get()
			.uri("/dualmap/replicas/releases")
			.exchange()
			.expectStatus()
			.isUnauthorized()
			.expectBody()
			.jsonPath("$.error.code")
			.isEqualTo("invalid_replica_token");
	}

	@Test
	void theEndpointRefusesBadInputWithOpenAiErrorsAndChangesNothing() throws IOException, InterruptedException {
		ReplicaSync sync = a.getBean(ReplicaSync.class);
		String instance = ENGINES.get(0).instanceId();
		String good = "{\"replica\":\"peer-x\",\"hashing\":\"" + sync.hashing()
				+ "\",\"releases\":[{\"service\":\"llm\",\"instance\":\"" + instance + "\",\"chain\":[11,22,33]}]}";
		long applied = sync.applied();

		post(null, MediaType.APPLICATION_JSON, good).expectStatus()
			.isUnauthorized()
			.expectBody()
			.jsonPath("$.error.code")
			.isEqualTo("invalid_replica_token")
			.jsonPath("$.error.type")
			.isEqualTo("authentication_error");
		post("Bearer wrong", MediaType.APPLICATION_JSON, good).expectStatus().isUnauthorized();
		// The token twice: refused, whichever comes first.
		client(portA).post()
			.uri("/dualmap/replicas/releases")
			.header("Authorization", "Bearer " + TOKEN, "Bearer wrong")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(good)
			.exchange()
			.expectStatus()
			.isUnauthorized();
		post("Bearer " + TOKEN, MediaType.TEXT_PLAIN, good).expectStatus()
			.isEqualTo(415)
			.expectBody()
			.jsonPath("$.error.code")
			.isEqualTo("unsupported_media_type");
		// A type that does not parse, a wildcard, or a coding: 415 too, not a 500 or a
		// gzip body read as JSON.
		for (String[] headers : new String[][] { { "Content-Type", "@@@" }, { "Content-Type", "*/*" },
				{ "Content-Type", "application/json", "Content-Encoding", "gzip" },
				{ "Content-Type", "application/json", "Content-Encoding", "foo" } }) {
			// A client of the JDK: WebTestClient refuses to send a type that does not
			// parse.
			HttpResponse<String> refused = HttpClient.newHttpClient()
				.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + portA + "/dualmap/replicas/releases"))
					.header("Authorization", "Bearer " + TOKEN)
					.headers(headers)
					.POST(HttpRequest.BodyPublishers.ofString(good))
					.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(refused.statusCode()).as(String.join(" ", headers)).isEqualTo(415);
			assertThat(refused.body()).contains("\"code\":\"unsupported_media_type\"");
		}
		post("Bearer " + TOKEN, MediaType.APPLICATION_JSON, "{\"replica\":").expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.error.code")
			.isEqualTo("invalid_release_batch")
			.jsonPath("$.error.message")
			.value(m -> assertThat((String) m).startsWith("not a release batch"));
		post("Bearer " + TOKEN, MediaType.APPLICATION_JSON, good.replace(sync.hashing(), "xxh3-chain;other"))
			.expectStatus()
			.isEqualTo(409)
			.expectBody()
			.jsonPath("$.error.code")
			.isEqualTo("hashing_mismatch");
		String huge = good.replace("[11,22,33]", "[" + "1234567890,".repeat(7000) + "1]");
		// Sent without a length (chunked) and without end, a batch is read no further
		// once it is over the limit: its connection ends.
		EndlessUpload.assertReadingStops(portA, "POST /dualmap/replicas/releases HTTP/1.1\r\nHost: 127.0.0.1\r\n"
				+ "Authorization: Bearer " + TOKEN + "\r\nContent-Type: application/json\r\n");
		post("Bearer " + TOKEN, MediaType.APPLICATION_JSON, huge).expectStatus()
			.isEqualTo(413)
			// Its length is known and small: the rest is read, the connection kept.
			.expectHeader()
			.doesNotExist("Connection")
			.expectBody()
			.jsonPath("$.error.code")
			.isEqualTo("body_too_large");
		// A batch is held within the gateway's budget of bodies, like a client's.
		whileTheBudgetLeaves(100, () -> assertBuffersFull(post("Bearer " + TOKEN, MediaType.APPLICATION_JSON,
				good.replace("[11,22,33]", "[" + "1234567890,".repeat(100) + "1]"))));
		// Parsing takes its memory from that budget too: a chain of small numbers is a
		// long every two bytes, eight times the text it came in.
		String dense = good.replace("[11,22,33]", "[" + "1,".repeat(20_000) + "1]");
		whileTheBudgetLeaves(200_000,
				() -> assertBuffersFull(post("Bearer " + TOKEN, MediaType.APPLICATION_JSON, dense)));
		assertThat(sync.applied()).isEqualTo(applied);

		// The scheme in any case (RFC 9110).
		post("bearer " + TOKEN, MediaType.APPLICATION_JSON, good).expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals(ReplicaSyncHandler.REPLICA_HEADER, sync.replicaId())
			.expectBody()
			.json("{\"applied\":1,\"ignored\":0}");
		assertThat(a.getBean(DualMapRegistry.class)
			.service("llm")
			.instancePool()
			.instance(instance)
			.shadow()
			.peekMatchedBlocks(new long[] { 11, 22, 33 })).isEqualTo(3);
		// The gateway still serves everything else on the same port.
		assertThat(chat(portA, decisionsA, "after bad input").decision().instanceId())
			.isIn(ENGINES.stream().map(StubEngine::instanceId).toList().toArray(String[]::new));
	}

	@Test
	void anotherMethodOnTheEndpointIs405AndDoesNotFallThroughToTheCatchAllRoute() throws Exception {
		// Before the endpoint answered these, the catch-all route sent them to an engine,
		// token and all, and the engine's 404 came back.
		for (String method : List.of("PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")) {
			HttpResponse<String> refused = HttpClient.newHttpClient()
				.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + portA + "/dualmap/replicas/releases"))
					.header("Authorization", "Bearer " + TOKEN)
					.header("Content-Type", "application/json")
					.method(method,
							method.equals("HEAD") ? HttpRequest.BodyPublishers.noBody()
									: HttpRequest.BodyPublishers.ofString("{\"replica\":\"x\"}"))
					.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(refused.statusCode()).as(method).isEqualTo(405);
			assertThat(refused.headers().allValues("Allow")).as(method).isNotEmpty();
			assertThat(String.join(",", refused.headers().allValues("Allow"))).contains("GET").contains("POST");
			if (!method.equals("HEAD")) {
				assertThat(refused.body()).contains("\"code\":\"method_not_allowed\"")
					.contains("method " + method + " is not allowed on /dualmap/replicas/releases");
			}
		}
		// The endpoint's own methods are unchanged.
		post(null, MediaType.APPLICATION_JSON, "{}").expectStatus().isUnauthorized();
		client(portA).get().uri("/dualmap/replicas/releases").exchange().expectStatus().isUnauthorized();
	}

	@Test
	void aSnapshotIsHeldWithinTheBudgetOfBodies() {
		RequestBuffers buffers = a.getBean(RequestBuffers.class);
		long before = buffers.used();
		// Too little left in the budget for a snapshot of the peers' largest size: 503,
		// as
		// for a batch, rather than building it outside the budget.
		whileTheBudgetLeaves(100,
				() -> assertBuffersFull(client(portA).get()
					.uri("/dualmap/replicas/releases")
					.header("Authorization", "Bearer " + TOKEN)
					.exchange()));
		// With room it is served, and its reservation given back when the exchange ends.
		client(portA).get()
			.uri("/dualmap/replicas/releases")
			.header("Authorization", "Bearer " + TOKEN)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.replica")
			.isNotEmpty();
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(buffers.used()).isEqualTo(before));
	}

	/**
	 * Runs {@code check} while replica A's budget of bodies has only {@code left} bytes
	 * free.
	 */
	private static void whileTheBudgetLeaves(long left, Runnable check) {
		RequestBuffers buffers = a.getBean(RequestBuffers.class);
		MockServerWebExchange holder = MockServerWebExchange.from(MockServerHttpRequest.post("/held"));
		assertThat(buffers.reserve(holder, buffers.limit() - buffers.used() - left)).isTrue();
		try {
			check.run();
		}
		finally {
			buffers.release(holder);
		}
	}

	/** A 503 for a full budget of bodies, with its {@code Retry-After}. */
	private static void assertBuffersFull(WebTestClient.ResponseSpec response) {
		response.expectStatus()
			.isEqualTo(503)
			.expectHeader()
			.valueEquals("Retry-After", "1")
			.expectBody()
			.jsonPath("$.error.code")
			.isEqualTo("gateway_buffers_full");
	}

	private static WebTestClient.ResponseSpec post(String authorization, MediaType type, String body) {
		return client(portA).post().uri("/dualmap/replicas/releases").headers(h -> {
			if (authorization != null) {
				h.set("Authorization", authorization);
			}
		}).contentType(type).bodyValue(body).exchange();
	}

	record Routed(RoutingRequest request, Decision decision) {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	// Each replica loops of its own: closing one leaves the others up.
	@Import(OwnReactorResources.class)
	static class App {

	}

}

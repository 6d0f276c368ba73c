package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.dualmap.StubEngine;
import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.replica.ReleaseBatch;
import io.github.dualmap.replica.ReplicaSync;
import io.github.dualmap.replica.ReplicaSyncHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A replica that (re)starts with replica sync is not ready while it waits for a peer's
 * start-up snapshot, when its readiness group includes {@code dualMapReplicas}; it turns
 * ready once the snapshot is applied. Liveness never waits.
 * <p>
 * Not a {@code @GatewayIntegrationTest}: each test starts its own gateway, with settings
 * of its own, while the peer it bootstraps from waits for the test.
 */
class ReplicaBootstrapReadinessIntegrationTests {

	private final StubEngine engine = new StubEngine("only");

	/** Completes the peer's snapshot answer when the test says so. */
	private final Sinks.One<byte[]> snapshot = Sinks.one();

	private final DisposableServer peer = HttpServer.create()
		.host("127.0.0.1")
		.port(0)
		.route(routes -> routes.get("/dualmap/replicas/releases",
				(req, res) -> res.header(ReplicaSyncHandler.REPLICA_HEADER, "peer")
					.header("Content-Type", "application/json")
					.sendByteArray(this.snapshot.asMono())))
		.bindNow();

	private ConfigurableApplicationContext context;

	@AfterEach
	void stop() {
		if (this.context != null) {
			this.context.close();
		}
		this.snapshot.tryEmitEmpty();
		this.peer.disposeNow();
		this.engine.stop();
	}

	private ConfigurableApplicationContext start(String... extra) {
		Map<String, Object> properties = new HashMap<>(Map.of("server.port", "0", "server.address", "127.0.0.1",
				"spring.cloud.discovery.client.simple.instances.llm[0].uri", this.engine.uri(), "dualmap.services",
				"llm", "dualmap.scrape.enabled", "false", "spring.cloud.loadbalancer.cache.enabled", "false",
				"dualmap.replicas.enabled", "true", "dualmap.replicas.token", "s3cret-0123456789",
				"dualmap.replicas.peers", "http://127.0.0.1:" + this.peer.port(),
				"management.endpoint.health.probes.enabled", "true"));
		properties.put("management.endpoint.health.show-details", "always");
		for (String property : extra) {
			String[] kv = property.split("=", 2);
			properties.put(kv[0], kv[1]);
		}
		return new SpringApplicationBuilder(App.class).properties(properties).run();
	}

	private WebTestClient client() {
		String port = this.context.getEnvironment().getProperty("local.server.port");
		return WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + port)
			.responseTimeout(Duration.ofSeconds(30))
			.build();
	}

	private static WebTestClient.BodyContentSpec readiness(WebTestClient client, int status) {
		return client.get().uri("/actuator/health/readiness").exchange().expectStatus().isEqualTo(status).expectBody();
	}

	/**
	 * What the peer knows: one prompt on the one instance, hashed as the replica does.
	 */
	private byte[] peerKnowledge() {
		ReplicaSync sync = this.context.getBean(ReplicaSync.class);
		long[] chain = PrefixHasher.ofDefaults().ofText("m", "A long shared system prompt. ".repeat(40)).chain();
		String instance = this.context.getBean(DualMapRegistry.class)
			.service("llm")
			.instancePool()
			.instances()
			.get(0)
			.id();
		return new ReleaseBatch("peer", sync.hashing(), List.of(new ReleaseBatch.Release("llm", instance, chain)))
			.toJson();
	}

	@Test
	void notReadyUntilThePeersSnapshotIsAppliedAndAliveThroughout() {
		this.context = start("management.endpoint.health.group.readiness.include=readinessState,dualMapReplicas");
		WebTestClient client = client();
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> readiness(client, 503).jsonPath("$.status")
				.isEqualTo("OUT_OF_SERVICE")
				.jsonPath("$.components.dualMapReplicas.details.bootstrap")
				.isEqualTo("waiting for a peer's snapshot"));
		client.get().uri("/actuator/health/liveness").exchange().expectStatus().isOk();
		this.snapshot.tryEmitValue(peerKnowledge());
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> readiness(client, 200).jsonPath("$.status")
				.isEqualTo("UP")
				.jsonPath("$.components.dualMapReplicas.details.bootstrap.peer")
				.isEqualTo("http://127.0.0.1:" + this.peer.port())
				.jsonPath("$.components.dualMapReplicas.details.bootstrap.blocks")
				.value(n -> assertThat(((Number) n).intValue()).isPositive()));
	}

	@Test
	void aSnapshotMayTakeLongerThanAPublicationsTimeout() {
		// dualmap.replicas.timeout 1 s by default; a snapshot is allowed ten.
		this.context = start("management.endpoint.health.group.readiness.include=readinessState,dualMapReplicas");
		WebTestClient client = client();
		byte[] knowledge = peerKnowledge();
		Mono.delay(Duration.ofMillis(2_500)).subscribe(tick -> this.snapshot.tryEmitValue(knowledge));
		await().atMost(Duration.ofSeconds(15))
			.untilAsserted(() -> readiness(client, 200).jsonPath("$.components.dualMapReplicas.details.bootstrap.peer")
				.isEqualTo("http://127.0.0.1:" + this.peer.port()));
	}

	@Test
	void aPeerThatNeverAnswersDelaysReadinessOnlyWithinTheBootstrapBounds() {
		// 10 x timeout per peer: 2 s here.
		this.context = start("management.endpoint.health.group.readiness.include=readinessState,dualMapReplicas",
				"dualmap.replicas.timeout=200ms");
		WebTestClient client = client();
		await().atMost(Duration.ofSeconds(15))
			.untilAsserted(() -> readiness(client, 200).jsonPath("$.components.dualMapReplicas.details.bootstrap")
				.isEqualTo("no peer answered"));
	}

	@Test
	void offItLeavesHealthAlone() {
		this.context = start("management.health.dualmap-replicas.enabled=false");
		assertThat(this.context.getBeanNamesForType(io.github.dualmap.actuate.ReplicaSyncHealthIndicator.class))
			.isEmpty();
		client().get().uri("/actuator/health/readiness").exchange().expectStatus().isOk();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(OwnReactorResources.class)
	static class App {

	}

}

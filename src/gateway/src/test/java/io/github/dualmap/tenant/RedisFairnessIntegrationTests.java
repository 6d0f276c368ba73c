package io.github.dualmap.tenant;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.dualmap.GatewayTestApplication;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.embedded.RedisServer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

/**
 * Two gateways share one fairness account per pool through a real Redis server (the
 * redis-server binary of embedded-redis, on loopback) and one engine: the service the
 * first gave tenant a puts a behind tenant b in the second's queue; with Redis stopped
 * both serve on with their own accounts, the failures are metered, and once Redis is back
 * the service given meanwhile reaches the other replica. The tests use tenants of their
 * own (a and b, c and d), so either may run first.
 */
class RedisFairnessIntegrationTests {

	static final UsageEngine ENGINE = new UsageEngine();

	static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	static RedisServer redis;

	static int redisPort;

	/** Serves tenant a's flood. */
	static ConfigurableApplicationContext first;

	/** One request at a time to the engine: its releases show its account's order. */
	static ConfigurableApplicationContext second;

	@BeforeAll
	static void start() throws Exception {
		redisPort = TenantGateways.freePort();
		redis = EmbeddedRedis.server(redisPort);
		redis.start();
		first = gateway();
		// Requests wait there as long as the test needs, whatever their TTFT objective.
		second = gateway("dualmap.dispatch.max-prefill-requests=1", "dualmap.dispatch.max-wait-share=0",
				"dualmap.dispatch.shed-hopeless=false");
		// One request of each gateway ends first: releases then charge the pool's mean
		// output (what every request generates), so no correction reorders the queue.
		assertThat(send(first, "default", "warm-up").statusCode()).isEqualTo(200);
		assertThat(send(second, "default", "warm-up").statusCode()).isEqualTo(200);
	}

	private static ConfigurableApplicationContext gateway(String... extra) throws IOException {
		List<String> properties = new ArrayList<>(List.of("dualmap.tenants.store=redis",
				"dualmap.tenants.redis.fairness-sync-interval=200ms", "spring.data.redis.host=127.0.0.1",
				"spring.data.redis.port=" + redisPort, "dualmap.dispatch.max-wait=30s", "dualmap.tenants.a.weight=1",
				"dualmap.tenants.b.weight=1", "dualmap.tenants.c.weight=1", "dualmap.tenants.d.weight=1"));
		properties.addAll(List.of(extra));
		return TenantGateways.start(GatewayTestApplication.class, ENGINE, properties.toArray(String[]::new));
	}

	@AfterAll
	static void stop() throws IOException {
		ENGINE.hold.complete(null);
		for (ConfigurableApplicationContext context : new ConfigurableApplicationContext[] { first, second }) {
			if (context != null) {
				context.close();
			}
		}
		if (redis != null && redis.isActive()) {
			redis.stop();
		}
		ENGINE.stop();
	}

	@Test
	void serviceOneReplicaGaveATenantPutsItBehindAnotherInTheOtherReplicasQueue() throws Exception {
		ENGINE.hold = new CompletableFuture<>();
		CompletableFuture<HttpResponse<String>> blocker = sendAsync(second, "default", "hold");
		await().atMost(Duration.ofSeconds(5)).until(() -> ENGINE.bodies.stream().anyMatch(b -> b.contains("hold")));
		// Behind it, b's requests then a's wait for the second gateway's one engine slot.
		List<CompletableFuture<HttpResponse<String>>> queued = new ArrayList<>();
		for (String tenant : List.of("b", "a")) {
			for (int i = 0; i < 3; i++) {
				queued.add(sendAsync(second, tenant, "queued-" + tenant + i));
			}
			await().atMost(Duration.ofSeconds(5)).until(() -> queued(second, tenant) == 3);
		}
		// A sync names both tenants, so the next one credits what came since.
		long syncs = llm(second).get("syncs").asLong();
		await().atMost(Duration.ofSeconds(5)).until(() -> llm(second).get("syncs").asLong() >= syncs + 2);

		for (int i = 0; i < 8; i++) {
			assertThat(send(first, "a", "flood-" + i).statusCode()).isEqualTo(200);
		}
		assertThat(served(first, "a")).isPositive();
		// The second gateway counts a's service on the first as a's, though it served
		// none of it.
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(served(second, "a")).isCloseTo(served(first, "a"), within(1e-6)));
		assertThat(served(second, "b")).isZero();

		ENGINE.hold.complete(null);
		assertThat(blocker.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		for (CompletableFuture<HttpResponse<String>> answer : queued) {
			assertThat(answer.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		}
		List<String> order = ENGINE.bodies.stream()
			.filter(b -> b.contains("queued-"))
			.map(b -> b.replaceAll("(?s).*\"content\":\"queued-(\\w)\\d\".*", "$1"))
			.toList();
		// Alone (each replica its own account), b and a start at one counter and
		// alternate: b, a, b, a, b, a.
		assertThat(String.join("", order)).isEqualTo("bbbaaa");

		JsonNode account = llm(second);
		assertThat(account.get("shared").asBoolean()).isTrue();
		assertThat(account.get("inSync").asBoolean()).isTrue();
		assertThat(account.get("lastSyncAgeMs").asLong()).isBetween(0L, 5_000L);
	}

	@Test
	void withRedisStoppedEachReplicaServesByItsOwnAccountAndTheSyncResumesWhenItReturns() throws Exception {
		MeterRegistry meters = second.getBean(MeterRegistry.class);
		// The second gateway credits the tenants it knows: c is one once it served c and
		// a sync named c.
		assertThat(send(second, "c", "known-c").statusCode()).isEqualTo(200);
		long syncs = llm(second).get("syncs").asLong();
		await().atMost(Duration.ofSeconds(5)).until(() -> llm(second).get("syncs").asLong() >= syncs + 2);
		double before = served(second, "c");
		redis.stop();
		await().atMost(Duration.ofSeconds(5)).until(() -> !llm(second).get("inSync").asBoolean());
		assertThat(meters.get("dualmap.tenants.fairness.shared").tag("pool", "llm").gauge().value()).isZero();

		// Requests keep flowing through both; the first's service for c stays its own.
		long start = System.nanoTime();
		double servedFirst = served(first, "c");
		for (int i = 0; i < 4; i++) {
			assertThat(send(first, "c", "outage-" + i).statusCode()).isEqualTo(200);
		}
		assertThat(send(second, "d", "outage-d").statusCode()).isEqualTo(200);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
		double outage = served(first, "c") - servedFirst;
		assertThat(outage).isPositive();
		double failures = meters.get("dualmap.tenants.fairness.sync.failures")
			.tag("pool", "llm")
			.functionCounter()
			.count();
		assertThat(failures).isPositive();
		// Two more syncs failed after the first gateway served c: nothing of it here.
		await().atMost(Duration.ofSeconds(5))
			.until(() -> meters.get("dualmap.tenants.fairness.sync.failures")
				.tag("pool", "llm")
				.functionCounter()
				.count() >= failures + 2);
		assertThat(served(second, "c")).isCloseTo(before, within(1e-6));

		// Back (empty): the first adds what it served meanwhile, the second credits it.
		redis = EmbeddedRedis.server(redisPort);
		redis.start();
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
			assertThat(llm(first).get("inSync").asBoolean()).isTrue();
			assertThat(llm(second).get("inSync").asBoolean()).isTrue();
			assertThat(served(second, "c")).isCloseTo(before + outage, within(1e-6));
		});
		assertThat(meters.get("dualmap.tenants.fairness.shared").tag("pool", "llm").gauge().value()).isEqualTo(1);
	}

	private static HttpRequest request(ConfigurableApplicationContext gateway, String tenant, String content) {
		return HttpRequest.newBuilder(URI.create(base(gateway) + "/v1/chat/completions"))
			.header("content-type", "application/json")
			.header("x-tenant-id", tenant)
			.timeout(Duration.ofSeconds(30))
			.POST(HttpRequest.BodyPublishers.ofString(TenantGateways.chat(content, true, "")))
			.build();
	}

	private static HttpResponse<String> send(ConfigurableApplicationContext gateway, String tenant, String content)
			throws Exception {
		return HTTP.send(request(gateway, tenant, content), HttpResponse.BodyHandlers.ofString());
	}

	private static CompletableFuture<HttpResponse<String>> sendAsync(ConfigurableApplicationContext gateway,
			String tenant, String content) {
		return HTTP.sendAsync(request(gateway, tenant, content), HttpResponse.BodyHandlers.ofString());
	}

	private static String base(ConfigurableApplicationContext gateway) {
		return "http://127.0.0.1:" + gateway.getEnvironment().getProperty("local.server.port");
	}

	private static JsonNode tenants(ConfigurableApplicationContext gateway) throws Exception {
		String body = HTTP
			.send(HttpRequest.newBuilder(URI.create(base(gateway) + "/actuator/dualmap")).build(),
					HttpResponse.BodyHandlers.ofString())
			.body();
		return JsonMapper.shared().readTree(body).get("tenants");
	}

	/** The pool's fairness account. */
	private static JsonNode llm(ConfigurableApplicationContext gateway) throws Exception {
		return tenants(gateway).get("fairness").get("llm");
	}

	private static JsonNode share(ConfigurableApplicationContext gateway, String tenant) throws Exception {
		JsonNode share = tenants(gateway).get("tenants").get(tenant).get("shares").get("llm");
		return share == null ? JsonMapper.shared().readTree("{\"servedTokens\":0,\"queued\":0}") : share;
	}

	private static double served(ConfigurableApplicationContext gateway, String tenant) throws Exception {
		return share(gateway, tenant).get("servedTokens").asDouble();
	}

	private static int queued(ConfigurableApplicationContext gateway, String tenant) throws Exception {
		return share(gateway, tenant).get("queued").asInt();
	}

}

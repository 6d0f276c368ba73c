package io.github.dualmap.actuate;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.gateway.DispatchAccountingFilter;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.RequestBuffers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code /actuator/dualmap} and {@code /actuator/prometheus} with the endpoint at its
 * default (read-only) access, in front of two stub engines: the pool known from discovery
 * before any request, the JSON shape with queue settings and counters, the warning about
 * a pool below three instances, a refused drain, and the meters with their tags. No
 * prompt text appears in either answer.
 */
@SpringBootTest(classes = DualMapEndpointIntegrationTests.App.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.cloud.gateway.server.webflux.routes[0].id=llm",
				"spring.cloud.gateway.server.webflux.routes[0].uri=lb://llm",
				"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/v1/**",
				"spring.cloud.loadbalancer.cache.enabled=false", "dualmap.services=llm", "dualmap.scrape.interval=50ms",
				"dualmap.scrape.timeout=2s", "dualmap.hot-prefix.window=20", "dualmap.hot-prefix.min-samples=10",
				"management.endpoints.web.exposure.include=dualmap,prometheus", "dualmap.slo.classes.batch.ttft=60s",
				"logging.level.io.github.dualmap.gateway.EngineScraping=debug" })
@AutoConfigureWebTestClient(timeout = "30s")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DualMapEndpointIntegrationTests {

	static final List<StubEngine> ENGINES = List.of(new StubEngine(), new StubEngine());

	static final String SYSTEM_PROMPT = "You are the confidential assistant of the Zebra Account. ".repeat(10);

	static final JsonMapper JSON = JsonMapper.builder().build();

	@Autowired
	WebTestClient client;

	@Autowired
	DualMapRegistry registry;

	@Autowired
	RequestBuffers buffers;

	@DynamicPropertySource
	static void engines(DynamicPropertyRegistry properties) {
		for (int i = 0; i < ENGINES.size(); i++) {
			properties.add("spring.cloud.discovery.client.simple.instances.llm[" + i + "].uri", ENGINES.get(i)::uri);
		}
	}

	@AfterAll
	static void stopEngines() {
		ENGINES.forEach(StubEngine::stop);
	}

	/**
	 * A streamed chat completion, read to its end: only a streamed first byte is a real
	 * TTFT, so only streamed requests feed {@code dualmap.ttft} and {@code dualmap.slo}.
	 */
	String chat(String user, String... headers) {
		String body = """
				{"model":"m","stream":true,"messages":[{"role":"system","content":"%s"},{"role":"user","content":"%s"}]}"""
			.formatted(SYSTEM_PROMPT, user);
		return this.client.post().uri("/v1/chat/completions").headers(h -> {
			for (int i = 0; i < headers.length; i += 2) {
				h.add(headers[i], headers[i + 1]);
			}
		})
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.returnResult()
			.getResponseHeaders()
			.getFirst(DispatchAccountingFilter.INSTANCE_HEADER);
	}

	String get(String path) {
		byte[] body = this.client.get()
			.uri(path)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.returnResult()
			.getResponseBodyContent();
		return new String(body, StandardCharsets.UTF_8);
	}

	@Test
	@Order(1)
	void beforeTheFirstRequestThePoolIsKnownFromDiscoveryWithItsQueues() {
		// Membership is read from discovery at startup, not on the first request.
		await().atMost(Duration.ofSeconds(5)).until(() -> this.registry.pool("llm").pool().size() == 2);
		String body = get("/actuator/dualmap");
		JsonNode root = JSON.readTree(body);
		assertThat(root.get("policy").asString()).isEqualTo("dualmap");
		assertThat(root.get("dispatchMode").asString()).isEqualTo("queue");
		JsonNode buffers = root.get("buffers");
		assertThat(buffers.get("limitBytes").asLong()).isEqualTo(this.buffers.limit()).isPositive();
		assertThat(buffers.get("usedBytes").asLong()).isZero();
		assertThat(buffers.get("rejections").asLong()).isZero();
		JsonNode dispatch = root.get("dispatch");
		assertThat(dispatch.get("maxPrefillRequests").asInt()).isEqualTo(QueueSettings.DEFAULT_MAX_PREFILL_REQUESTS);
		assertThat(dispatch.get("idlePull").asBoolean()).isTrue();
		assertThat(dispatch.get("sloAware").asBoolean()).isTrue();
		assertThat(dispatch.get("maxPrefillTokens").asLong()).isEqualTo(16384);
		assertThat(dispatch.get("maxWaitMs").asLong()).isEqualTo(30_000);
		assertThat(dispatch.get("maxWaitShare").asDouble()).isEqualTo(0.5);
		assertThat(dispatch.get("rescue").asBoolean()).isTrue();
		assertThat(dispatch.get("rescueToQueue").asBoolean()).isTrue();
		assertThat(dispatch.get("shedHopeless").asBoolean()).isTrue();
		assertThat(dispatch.get("holdOnEngineQueue").asBoolean()).isTrue();
		assertThat(dispatch.get("moveLateOnly").asBoolean()).isTrue();
		assertThat(dispatch.get("agingMs").asLong()).isEqualTo(2000);
		assertThat(dispatch.get("expiry").asString()).isEqualTo("reject");
		JsonNode pool = root.get("pools").get("llm");
		assertThat(pool.get("size").asInt()).isEqualTo(2);
		assertThat(pool.get("accepting").asInt()).isEqualTo(2);
		assertThat(pool.get("instances")).hasSize(2);
		for (JsonNode i : pool.get("instances")) {
			assertThat(i.get("dispatched").asLong()).isZero();
			assertThat(i.get("queuedRequests").asInt()).isZero();
			assertThat(i.get("idle").asBoolean()).isTrue();
		}
		JsonNode queue = pool.get("queue");
		assertThat(queue.get("queued").asInt()).isZero();
		assertThat(queue.get("releases").asLong()).isZero();
		assertThat(queue.get("migrations").asLong()).isZero();
		assertThat(queue.get("rerouted").asLong()).isZero();
		assertThat(queue.get("rescues").asLong()).isZero();
		assertThat(queue.get("rescuesQueued").asLong()).isZero();
		assertThat(queue.get("hopelessShed").asLong()).isZero();
		assertThat(queue.get("rejections").asLong()).isZero();
		assertThat(queue.get("rejectionsByStatus").get("429").asLong()).isZero();
		assertThat(queue.get("rejectionsByStatus").get("503").asLong()).isZero();
		// The only warning is about the small pool; none says the pool is unknown.
		assertThat(root.get("warnings")).hasSize(1);
		assertThat(root.get("warnings").get(0).asString()).contains("service 'llm' has 2 instances");
		assertThat(body).doesNotContain("no known instances");
	}

	@Test
	@Order(2)
	void theWholeViewDescribesSettingsRingsInstancesEngineStateAndHotPrefixHashes() {
		String home = null;
		for (int i = 0; i < 12; i++) {
			home = chat("question number " + i);
		}
		String instance = home;
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(this.registry.pool("llm").pool().instance(instance).engine()).isNotNull());
		String body = get("/actuator/dualmap");
		JsonNode root = JSON.readTree(body);
		JsonNode settings = root.get("settings");
		assertThat(settings.get("virtualNodes").asInt()).isEqualTo(160);
		assertThat(settings.get("defaultSloMs").asLong()).isEqualTo(5000);
		assertThat(settings.get("switchHitCharge").asDouble()).isEqualTo(1.0);
		assertThat(settings.get("staleAfterMs").asLong()).isEqualTo(2000);
		assertThat(settings.get("hotWindow").asInt()).isEqualTo(20);
		assertThat(settings.get("prefillMsPerToken").asDouble()).isEqualTo(0.025);
		JsonNode pool = root.get("pools").get("llm");
		assertThat(pool.get("service").asString()).isEqualTo("llm");
		assertThat(pool.get("size").asInt()).isEqualTo(2);
		assertThat(pool.get("accepting").asInt()).isEqualTo(2);
		assertThat(pool.get("ringRebuilds").asLong()).isEqualTo(1);
		assertThat(pool.get("ttftModel").get("baseMs").asLong()).isEqualTo(20);
		assertThat(pool.get("ttftModel").get("configuredPrefillMsPerToken").asDouble()).isEqualTo(0.025);
		assertThat(pool.get("instances")).hasSize(2);
		JsonNode served = null;
		double firstShares = 0;
		for (JsonNode i : pool.get("instances")) {
			firstShares += i.get("firstCandidateShare").asDouble();
			if (i.get("id").asString().equals(home)) {
				served = i;
			}
		}
		assertThat(firstShares).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-9));
		assertThat(served).isNotNull();
		assertThat(served.get("uri").asString()).isEqualTo("http://" + home);
		assertThat(served.get("dispatched").asLong()).isEqualTo(12);
		assertThat(served.get("idle").asBoolean()).isTrue();
		assertThat(served.get("draining").asBoolean()).isFalse();
		assertThat(served.get("healthy").asBoolean()).isTrue();
		assertThat(served.get("breaker").asString()).isEqualTo("CLOSED");
		assertThat(served.get("virtualNodes").asInt()).isEqualTo(160);
		assertThat(served.get("weight").asDouble()).isEqualTo(1.0);
		assertThat(served.get("inFlight").asInt()).isZero();
		assertThat(served.get("pendingTokens").asLong()).isZero();
		assertThat(served.get("shadowBlocks").asInt()).isPositive();
		assertThat(served.get("shadowCapacityBlocks").asInt()).isPositive();
		assertThat(served.get("estimatedHitRate").asDouble()).isGreaterThan(0.5);
		assertThat(served.get("scrapeFailures").isIntegralNumber()).isTrue();
		JsonNode engine = served.get("engine");
		assertThat(engine.get("kvUsage").asDouble()).isEqualTo(0.25);
		assertThat(engine.get("prefixHitRate").asDouble()).isEqualTo(0.4);
		assertThat(engine.get("running").asInt()).isEqualTo(1);
		assertThat(engine.get("waiting").asInt()).isZero();
		assertThat(engine.get("stale").asBoolean()).isFalse();
		assertThat(engine.get("lastScrapeFailed").asBoolean()).isFalse();
		assertThat(engine.get("ageMs").asLong()).isBetween(0L, 2000L);
		// Not reported by the stub: unknown, which JSON says as null.
		assertThat(engine.get("kvCapacityTokens").isNull()).isTrue();
		JsonNode hot = pool.get("hotPrefixes").get(0);
		assertThat(hot.get("hash").asString()).matches("[0-9a-f]{16}");
		assertThat(hot.get("share").asDouble()).isGreaterThan(0.5);
		assertThat(root.get("warnings").toString()).contains("service 'llm' has 2 instances; dual mapping buys little");
		assertThat(body).doesNotContain("Zebra").doesNotContain("question number");
	}

	@Test
	@Order(3)
	void oneServiceAndOneInstanceCanBeReadAndUnknownOnesAre404() {
		String id = ENGINES.get(0).instanceId();
		this.client.get()
			.uri("/actuator/dualmap/llm")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.service")
			.isEqualTo("llm")
			.jsonPath("$.warnings.length()")
			.isEqualTo(1);
		this.client.get()
			.uri("/actuator/dualmap/llm/{instance}", id)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.id")
			.isEqualTo(id)
			.jsonPath("$.idle")
			.isEqualTo(true);
		this.client.get().uri("/actuator/dualmap/other").exchange().expectStatus().isNotFound();
		this.client.get().uri("/actuator/dualmap/llm/10.9.9.9:1").exchange().expectStatus().isNotFound();
	}

	@Test
	@Order(4)
	void drainingIsRefusedWhileTheEndpointIsReadOnly() {
		String id = ENGINES.get(0).instanceId();
		this.client.post()
			.uri("/actuator/dualmap/llm/{instance}", id)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"draining\":true}")
			.exchange()
			.expectStatus()
			.isEqualTo(405);
		assertThat(this.registry.pool("llm").pool().instance(id).draining()).isFalse();
	}

	@Test
	@Order(5)
	void prometheusShowsTheMetersWithServiceInstanceReasonAndPolicyTags() {
		String home = chat("one more");
		String metrics = get("/actuator/prometheus");
		assertThat(metrics)
			.containsPattern("dualmap_decisions_total\\{instance=\"" + home
					+ "\",policy=\"dualmap\",reason=\"affinity\",service=\"llm\"} 13\\.0")
			.containsPattern("dualmap_ttft_seconds_count\\{instance=\"" + home + "\",service=\"llm\"} 13")
			.contains("dualmap_ttft_seconds_bucket{instance=\"" + home + "\",service=\"llm\",le=\"")
			.containsPattern("dualmap_slo_total\\{class=\"default\",outcome=\"within\",service=\"llm\"} 13\\.0")
			.containsPattern("dualmap_slo_total\\{class=\"default\",outcome=\"over\",service=\"llm\"} 0\\.0")
			.contains("dualmap_load_cv{service=\"llm\"}")
			.containsPattern("dualmap_instances\\{service=\"llm\"} 2\\.0")
			.containsPattern("dualmap_ring_rebuilds_total\\{service=\"llm\"} 1\\.0")
			.contains("dualmap_pending_tokens{instance=\"" + home + "\",service=\"llm\"}")
			.contains("dualmap_inflight{instance=\"" + home + "\",service=\"llm\"}")
			.containsPattern("dualmap_engine_prefix_hit_rate\\{instance=\"" + home + "\",service=\"llm\"} 0\\.4")
			.containsPattern(
					"dualmap_engine_prefix_hits_tokens_total\\{instance=\"" + home + "\",service=\"llm\"} 400\\.0")
			.containsPattern(
					"dualmap_engine_prefix_queries_tokens_total\\{instance=\"" + home + "\",service=\"llm\"} 1000\\.0")
			.containsPattern("dualmap_scrape_errors_total\\{instance=\"" + home + "\",service=\"llm\"} \\d+\\.0")
			.containsPattern("dualmap_queue_depth\\{instance=\"" + home + "\",service=\"llm\"} 0\\.0")
			.containsPattern("dualmap_queue_releases_total\\{service=\"llm\"} 13\\.0")
			.containsPattern("dualmap_migrations_total\\{service=\"llm\"} 0\\.0")
			.containsPattern("dualmap_reroutes_total\\{service=\"llm\"} 0\\.0")
			.containsPattern("dualmap_queue_rescues_total\\{service=\"llm\"} 0\\.0")
			.containsPattern("dualmap_queue_rescues_queued_total\\{service=\"llm\"} 0\\.0")
			.containsPattern("dualmap_queue_hopeless_total\\{service=\"llm\"} 0\\.0")
			.containsPattern("dualmap_rejections_total\\{service=\"llm\",status=\"429\"} 0\\.0")
			.containsPattern("dualmap_rejections_total\\{service=\"llm\",status=\"503\"} 0\\.0")
			.containsPattern("dualmap_retries_total\\{cause=\"connect\",service=\"llm\"} 0\\.0")
			.containsPattern("dualmap_retries_total\\{cause=\"status\",service=\"llm\"} 0\\.0")
			.containsPattern("dualmap_retries_total\\{cause=\"unresponsive\",service=\"llm\"} 0\\.0")
			.doesNotContain("Zebra")
			.doesNotContain("one more");
	}

	@Test
	@Order(6)
	void sloAttainmentIsCountedPerClass() {
		chat("a batch question", "x-slo-class", "batch");
		chat("an explicit objective", "x-slo-ttft-ms", "4000");
		chat("an unknown class", "x-slo-class", "no-such-class");
		assertThat(get("/actuator/prometheus"))
			.containsPattern("dualmap_slo_total\\{class=\"batch\",outcome=\"within\",service=\"llm\"} 1\\.0")
			.containsPattern("dualmap_slo_total\\{class=\"header\",outcome=\"within\",service=\"llm\"} 1\\.0")
			.containsPattern("dualmap_slo_total\\{class=\"default\",outcome=\"within\",service=\"llm\"} 14\\.0")
			// A configured class's misses exist before its first miss: its attainment is
			// 1,
			// not no data.
			.containsPattern("dualmap_slo_total\\{class=\"batch\",outcome=\"over\",service=\"llm\"} 0\\.0")
			.doesNotContain("no-such-class");
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}

package io.github.dualmap.actuate;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.gateway.DispatchAccountingFilter;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.RequestBuffers;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code /actuator/dualmap} and {@code /actuator/prometheus} with the endpoint at its
 * default (read-only) access, in front of two stub engines: the pool known from discovery
 * before any request, the JSON shape with queue settings and counters, the warning about
 * a pool below three instances, a refused drain, and the meters with their tags. No
 * prompt text appears in either answer. The tests share one gateway and count what their
 * own requests add, except the one about the gateway before any request, which starts one
 * of its own; so they run in any order.
 */
@GatewayIntegrationTest(
		properties = { "dualmap.scrape.interval=50ms", "dualmap.scrape.timeout=2s", "dualmap.hot-prefix.window=20",
				"dualmap.hot-prefix.min-samples=10", "management.endpoints.web.exposure.include=dualmap,prometheus",
				"dualmap.slo.classes.batch.ttft=60s", "logging.level.io.github.dualmap.gateway.EngineScraping=debug" })
class DualMapEndpointIntegrationTests {

	@Discovered
	static final List<StubEngine> ENGINES = List.of(engine("a"), engine("b"));

	static final String SYSTEM_PROMPT = "You are the confidential assistant of the Zebra Account. ".repeat(10);

	static final JsonMapper JSON = JsonMapper.builder().build();

	@Autowired
	WebTestClient client;

	@Autowired
	DualMapRegistry registry;

	@Autowired
	RequestBuffers buffers;

	/**
	 * An engine whose {@code /metrics} shows one running request, a quarter of its KV
	 * cache in use and 400 prefix cache hits in 1000 queries.
	 */
	static StubEngine engine(String name) {
		StubEngine engine = new StubEngine(name);
		engine.running.set(1);
		engine.kvCacheUsage.set(0.25);
		engine.prefixCache.set(new long[] { 1000, 400 });
		return engine;
	}

	/**
	 * Twelve streamed questions behind one system prompt, which all go to its home.
	 * @return the home instance
	 */
	String twelveQuestions() {
		String home = null;
		for (int i = 0; i < 12; i++) {
			home = chat("question number " + i);
		}
		return home;
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

	/** Requests dispatched so far, by instance. */
	Map<String, Long> dispatched() {
		Map<String, Long> dispatched = new HashMap<>();
		this.registry.service("llm").instancePool().instances().forEach(s -> dispatched.put(s.id(), s.dispatched()));
		return dispatched;
	}

	/** The value of one series in a Prometheus answer (0 when it is absent). */
	static double sample(String metrics, String series) {
		for (String line : metrics.split("\n")) {
			if (line.startsWith(series + " ")) {
				return Double.parseDouble(line.substring(series.length() + 1).trim());
			}
		}
		return 0;
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
	@DirtiesContext(methodMode = DirtiesContext.MethodMode.BEFORE_METHOD)
	void beforeTheFirstRequestThePoolIsKnownFromDiscoveryWithItsQueues() {
		// Membership is read from discovery at startup, not on the first request.
		await().atMost(Duration.ofSeconds(5)).until(() -> this.registry.service("llm").instancePool().size() == 2);
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
		assertThat(dispatch.get("rescueMaxKvUsage").asDouble()).isEqualTo(0.9);
		assertThat(dispatch.get("shedHopeless").asBoolean()).isTrue();
		assertThat(dispatch.get("shedBehindForeignPrefill").asBoolean()).isTrue();
		assertThat(dispatch.get("shedWhereOthersSend").asBoolean()).isTrue();
		assertThat(dispatch.get("holdOnEngineQueue").asBoolean()).isTrue();
		assertThat(dispatch.get("countQueuedPrefixes").asBoolean()).isTrue();
		assertThat(dispatch.get("moveLateOnly").asBoolean()).isTrue();
		assertThat(dispatch.get("moveIntervalMs").asLong()).isZero();
		assertThat(dispatch.get("maxMoveChecksPerEvent").asInt()).isZero();
		assertThat(dispatch.get("maxPullChecksPerEvent").asInt()).isEqualTo(16);
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
		assertThat(queue.get("hopelessShedForOthers").asLong()).isZero();
		assertThat(queue.get("rejections").asLong()).isZero();
		assertThat(queue.get("rejectionsByStatus").get("429").asLong()).isZero();
		assertThat(queue.get("rejectionsByStatus").get("503").asLong()).isZero();
		// The only warning is about the small pool; none says the pool is unknown.
		assertThat(root.get("warnings")).hasSize(1);
		assertThat(root.get("warnings").get(0).asString()).contains("service 'llm' has 2 instances");
		assertThat(body).doesNotContain("no known instances");
	}

	@Test
	void theWholeViewDescribesSettingsRingsInstancesEngineStateAndHotPrefixHashes() {
		Map<String, Long> dispatched = dispatched();
		String home = twelveQuestions();
		String instance = home;
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(this.registry.service("llm").instancePool().instance(instance).engine())
				.isNotNull());
		String body = get("/actuator/dualmap");
		JsonNode root = JSON.readTree(body);
		JsonNode settings = root.get("settings");
		assertThat(settings.get("virtualNodes").asInt()).isEqualTo(160);
		assertThat(settings.get("defaultSloMs").asLong()).isEqualTo(5000);
		assertThat(settings.get("switchHitCharge").asDouble()).isEqualTo(1.0);
		assertThat(settings.get("staleAfterMs").asLong()).isEqualTo(2000);
		assertThat(settings.get("tieBreak").asString()).isEqualTo("auto");
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
		assertThat(served.get("dispatched").asLong()).isEqualTo(dispatched.get(home) + 12);
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
		// The attention model (the default) fits each instance, but twelve short prompts
		// do not teach it what a cold 4,096-token prompt costs: unknown.
		assertThat(served.get("ttftEstimateMs")).isNotNull();
		assertThat(served.get("ttftEstimateMs").isNull()).isTrue();
		JsonNode engine = served.get("engine");
		assertThat(engine.get("kvUsage").asDouble()).isEqualTo(0.25);
		assertThat(engine.get("prefixHitRate").asDouble()).isEqualTo(0.4);
		assertThat(engine.get("backlogTokens").isIntegralNumber()).as("estimated by default").isTrue();
		assertThat(engine.get("running").asInt()).isEqualTo(1);
		assertThat(engine.get("foreignRequests").isIntegralNumber()).isTrue();
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
	void drainingIsRefusedWhileTheEndpointIsReadOnly() {
		String id = ENGINES.get(0).instanceId();
		this.client.post()
			.uri("/actuator/dualmap/llm/{instance}", id)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"draining\":true}")
			.exchange()
			.expectStatus()
			.isEqualTo(405);
		assertThat(this.registry.service("llm").instancePool().instance(id).draining()).isFalse();
	}

	@Test
	void prometheusShowsTheMetersWithPoolInstanceReasonAndPolicyTags() {
		String before = get("/actuator/prometheus");
		String first = twelveQuestions();
		String home = chat("one more");
		assertThat(home).isEqualTo(first);
		String metrics = get("/actuator/prometheus");
		// Thirteen requests, every one of them sent to its home.
		for (String series : List.of(
				"dualmap_decisions_total{instance_id=\"" + home
						+ "\",policy=\"dualmap\",pool=\"llm\",reason=\"affinity\"}",
				"dualmap_ttft_seconds_count{instance_id=\"" + home + "\",pool=\"llm\"}",
				"dualmap_slo_total{class=\"default\",outcome=\"within\",pool=\"llm\"}",
				"dualmap_queue_releases_total{pool=\"llm\"}")) {
			assertThat(sample(metrics, series)).as(series).isEqualTo(sample(before, series) + 13);
		}
		assertThat(metrics).contains("dualmap_ttft_seconds_bucket{instance_id=\"" + home + "\",pool=\"llm\",le=\"")
			.containsPattern("dualmap_slo_total\\{class=\"default\",outcome=\"over\",pool=\"llm\"} 0\\.0")
			.contains("dualmap_load_cv{pool=\"llm\"}")
			.containsPattern("dualmap_instances\\{pool=\"llm\"} 2\\.0")
			.containsPattern("dualmap_ring_rebuilds_total\\{pool=\"llm\"} 1\\.0")
			.contains("dualmap_pending_tokens{instance_id=\"" + home + "\",pool=\"llm\"}")
			.contains("dualmap_inflight{instance_id=\"" + home + "\",pool=\"llm\"}")
			.containsPattern("dualmap_engine_prefix_hit_rate\\{instance_id=\"" + home + "\",pool=\"llm\"} 0\\.4")
			.containsPattern("dualmap_engine_backlog_tokens\\{instance_id=\"" + home + "\",pool=\"llm\"} [0-9]")
			.containsPattern("dualmap_engine_foreign_requests\\{instance_id=\"" + home + "\",pool=\"llm\"} [0-9]")
			.containsPattern(
					"dualmap_engine_prefix_hits_tokens_total\\{instance_id=\"" + home + "\",pool=\"llm\"} 400\\.0")
			.containsPattern(
					"dualmap_engine_prefix_queries_tokens_total\\{instance_id=\"" + home + "\",pool=\"llm\"} 1000\\.0")
			.containsPattern("dualmap_scrape_errors_total\\{instance_id=\"" + home + "\",pool=\"llm\"} \\d+\\.0")
			.containsPattern("dualmap_queue_depth\\{instance_id=\"" + home + "\",pool=\"llm\"} 0\\.0")
			.containsPattern("dualmap_migrations_total\\{pool=\"llm\"} 0\\.0")
			.containsPattern("dualmap_reroutes_total\\{pool=\"llm\"} 0\\.0")
			.containsPattern("dualmap_queue_rescues_total\\{pool=\"llm\"} 0\\.0")
			.containsPattern("dualmap_queue_rescues_queued_total\\{pool=\"llm\"} 0\\.0")
			.containsPattern("dualmap_queue_hopeless_total\\{pool=\"llm\"} 0\\.0")
			.containsPattern("dualmap_queue_hopeless_others_total\\{pool=\"llm\"} 0\\.0")
			.containsPattern("dualmap_rejections_total\\{pool=\"llm\",status=\"429\"} 0\\.0")
			.containsPattern("dualmap_rejections_total\\{pool=\"llm\",status=\"503\"} 0\\.0")
			.containsPattern("dualmap_retries_total\\{cause=\"connect\",pool=\"llm\"} 0\\.0")
			.containsPattern("dualmap_retries_total\\{cause=\"status\",pool=\"llm\"} 0\\.0")
			.containsPattern("dualmap_retries_total\\{cause=\"unresponsive\",pool=\"llm\"} 0\\.0")
			.doesNotContain("Zebra")
			.doesNotContain("one more");
	}

	@Test
	void sloAttainmentIsCountedPerClass() {
		String defaultWithin = "dualmap_slo_total{class=\"default\",outcome=\"within\",pool=\"llm\"}";
		double before = sample(get("/actuator/prometheus"), defaultWithin);
		chat("a batch question", "x-slo-class", "batch");
		chat("an explicit objective", "x-slo-ttft-ms", "4000");
		chat("an unknown class", "x-slo-class", "no-such-class");
		String metrics = get("/actuator/prometheus");
		// The unknown class's request counts as the default class's.
		assertThat(sample(metrics, defaultWithin)).isEqualTo(before + 1);
		assertThat(metrics)
			.containsPattern("dualmap_slo_total\\{class=\"batch\",outcome=\"within\",pool=\"llm\"} 1\\.0")
			.containsPattern("dualmap_slo_total\\{class=\"header\",outcome=\"within\",pool=\"llm\"} 1\\.0")
			// A configured class's misses exist before its first miss: its attainment is
			// 1,
			// not no data.
			.containsPattern("dualmap_slo_total\\{class=\"batch\",outcome=\"over\",pool=\"llm\"} 0\\.0")
			.doesNotContain("no-such-class");
	}

}

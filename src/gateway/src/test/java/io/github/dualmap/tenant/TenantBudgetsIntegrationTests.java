package io.github.dualmap.tenant;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.github.dualmap.GatewayTestApplication;
import io.github.dualmap.WebTestClients;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * Token budgets kept in memory, end to end through a gateway in front of an engine that
 * reports usage as vLLM does: admission on an estimate, the charge of the actual usage
 * (non-streamed, streamed with and without the client's include_usage, a client leaving
 * mid-stream), the 429 and the rate-limit headers, bounded tenant names, the GenAI meters
 * and the actuator view.
 */
class TenantBudgetsIntegrationTests {

	/** 100 uncached prompt tokens, 20 cached at half weight, 5 completion tokens. */
	static final long COST = 100 + 10 + 5;

	static final UsageEngine ENGINE = new UsageEngine();

	static ConfigurableApplicationContext gateway;

	static WebTestClient client;

	@BeforeAll
	static void start() throws Exception {
		gateway = TenantGateways.start(GatewayTestApplication.class, ENGINE,
				"dualmap.tenants.cost.cached-prompt-weight=0.5", "dualmap.tenants.max-tracked=3",
				"dualmap.tenants.default.tokens-per-day=100000", "dualmap.tenants.acme.tokens-per-day=1000",
				"dualmap.tenants.acme.weight=2", "dualmap.tenants.acme.priority=1",
				"dualmap.tenants.streamer.tokens-per-day=1000", "dualmap.tenants.asker.tokens-per-day=1000",
				"dualmap.tenants.tiny.tokens-per-minute=50", "dualmap.tenants.leaver.tokens-per-day=100000",
				"dualmap.tenants.metered.tokens-per-minute=100000", "dualmap.tenants.shown.tokens-per-day=1000",
				"dualmap.tenants.shown.weight=2", "dualmap.tenants.modeled.tokens-per-day=100000",
				"dualmap.tenants.modeled.models.m.tokens-per-minute=50", "dualmap.tenants.zipped.tokens-per-day=300",
				"dualmap.tenants.zipstreamer.tokens-per-day=1000", "dualmap.tenants.zstded.tokens-per-day=300",
				"dualmap.tenants.brotlied.tokens-per-day=300", "dualmap.tenants.hoarder.tokens-per-day=1000",
				"dualmap.tenants.hoarder.models.m.tokens-per-minute=500");
		client = TenantGateways.client(gateway);
	}

	@AfterAll
	static void stop() {
		if (gateway != null) {
			gateway.close();
		}
		ENGINE.stop();
	}

	private static TokenBudgets budgets() {
		return gateway.getBean(TokenBudgets.class);
	}

	private static TenantView view(String tenant) {
		return budgets().view().get(tenant);
	}

	private static EntityExchangeResult<String> post(String tenant, String body) {
		return client.post()
			.uri("/v1/chat/completions")
			.header("x-tenant-id", tenant)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	@Test
	void aNonStreamedAnswerIsChargedItsUsage() {
		EntityExchangeResult<String> result = post("acme", TenantGateways.chat("hello", false, ",\"max_tokens\":10"));
		assertThat(result.getStatus().value()).isEqualTo(200);
		HttpHeaders headers = result.getResponseHeaders();
		assertThat(headers.getFirst(RateLimitHeaders.LIMIT)).isEqualTo("1000");
		long remaining = Long.parseLong(headers.getFirst(RateLimitHeaders.REMAINING));
		// Admitted on an estimate: some prompt tokens plus max_tokens.
		assertThat(remaining).isLessThanOrEqualTo(1000 - 10).isGreaterThan(800);
		assertThat(headers.getFirst(RateLimitHeaders.RESET)).matches("(\\d+h)?(\\d+m)?\\d+(\\.\\d+)?s|\\d+ms");
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(view("acme").usage().cost()).isEqualTo(COST));
		TenantView acme = view("acme");
		assertThat(acme.usage().promptTokens()).isEqualTo(UsageEngine.PROMPT_TOKENS);
		assertThat(acme.usage().cachedPromptTokens()).isEqualTo(UsageEngine.CACHED_TOKENS);
		assertThat(acme.usage().completionTokens()).isEqualTo(UsageEngine.COMPLETION_TOKENS);
		assertThat(acme.weight()).isEqualTo(2.0);
		assertThat(acme.priority()).isEqualTo(1);
		// The estimate was replaced by the actual cost (refill over the test: < 1 token).
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(view("acme").budgets().get(0).remaining()).isBetween(1000 - COST,
					1000 - COST + 1));
	}

	@Test
	void aStreamIsAskedForItsUsageAndTheClientDoesNotSeeIt() {
		String sent = TenantGateways.chat("stream me", true, "");
		EntityExchangeResult<String> result = post("streamer", sent);
		assertThat(result.getStatus().value()).isEqualTo(200);
		String body = result.getResponseBody();
		assertThat(body).doesNotContain("usage").contains("[DONE]");
		assertThat(body.split("\"content\":\"tok\"", -1)).hasSize(UsageEngine.COMPLETION_TOKENS + 1);
		assertThat(ENGINE.bodies).anySatisfy(
				b -> assertThat(b).contains("stream me").contains("\"stream_options\":{\"include_usage\":true}"));
		assertThat(result.getResponseHeaders().getFirst(RateLimitHeaders.LIMIT)).isEqualTo("1000");
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(view("streamer").usage().cost()).isEqualTo(COST));
		assertThat(view("streamer").usage().completionTokens()).isEqualTo(UsageEngine.COMPLETION_TOKENS);
	}

	@Test
	void aStreamThatAskedForItsUsageKeepsIt() {
		String sent = TenantGateways.chat("asking", true, ",\"stream_options\":{\"include_usage\":true}");
		EntityExchangeResult<String> result = post("asker", sent);
		assertThat(result.getStatus().value()).isEqualTo(200);
		assertThat(result.getResponseBody()).contains("\"usage\":" + UsageEngine.usage());
		assertThat(ENGINE.bodies).contains(sent);
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(view("asker").usage().cost()).isEqualTo(COST));
	}

	@Test
	void overBudgetIsA429WithOpenAiBodyAndHeaders() throws Exception {
		int served = ENGINE.served.get();
		// The first request costs more than the bucket holds: admitted on a full bucket,
		// which it leaves in debt.
		EntityExchangeResult<String> first = post("tiny", TenantGateways.chat("first", false, ",\"max_tokens\":100"));
		assertThat(first.getStatus().value()).as(first.getResponseHeaders().toString()).isEqualTo(200);
		EntityExchangeResult<String> refused = post("tiny", TenantGateways.chat("second", false, ",\"max_tokens\":1"));
		assertThat(refused.getStatus().value()).as(refused.getResponseHeaders().toString() + view("tiny"))
			.isEqualTo(429);
		HttpHeaders headers = refused.getResponseHeaders();
		assertThat(headers.getFirst(RateLimitHeaders.LIMIT)).isEqualTo("50");
		assertThat(headers.getFirst(RateLimitHeaders.REMAINING)).isEqualTo("0");
		assertThat(headers.getFirst(RateLimitHeaders.RESET)).matches("\\d+m\\d+(\\.\\d+)?s|\\d+(\\.\\d+)?s");
		assertThat(Long.parseLong(headers.getFirst(HttpHeaders.RETRY_AFTER))).isPositive();
		JsonNode error = JsonMapper.shared().readTree(refused.getResponseBody()).get("error");
		assertThat(error.get("code").asString()).isEqualTo("rate_limit_exceeded");
		assertThat(error.get("type").asString()).isEqualTo("tokens");
		// Its own budget refused it, not one of the model it names.
		assertThat(error.get("message").asString()).contains("tiny").contains("limit 50").doesNotContain("on model");
		assertThat(ENGINE.served.get()).isEqualTo(served + 1);
		assertThat(view("tiny").usage().refused()).isEqualTo(1);
	}

	/**
	 * A request admitted on a huge estimate (a {@code max_tokens} far past its budget)
	 * leaves the bucket deep in debt while it runs, until its usage settles it: the next
	 * request is told to wait at most the budget's window (a bucket refills from empty in
	 * one), in its {@code Retry-After}, its message and the reset header alike, not the
	 * years that paying the estimate off would take.
	 */
	@Test
	void aHugeEstimateInFlightDelaysTheNextRequestByAtMostTheBudgetsWindow() throws Exception {
		CompletableFuture<Void> hold = new CompletableFuture<>();
		ENGINE.hold = hold;
		try {
			CompletableFuture<EntityExchangeResult<String>> first = CompletableFuture
				.supplyAsync(() -> post("hoarder", TenantGateways.chat("hold", false, ",\"max_tokens\":1000000000")));
			await().atMost(Duration.ofSeconds(10))
				.until(() -> ENGINE.bodies.stream().anyMatch(b -> b.contains("\"max_tokens\":1000000000")));
			EntityExchangeResult<String> refused = post("hoarder",
					TenantGateways.chat("second", false, ",\"max_tokens\":1"));
			assertThat(refused.getStatus().value()).as(refused.getResponseBody()).isEqualTo(429);
			HttpHeaders headers = refused.getResponseHeaders();
			// The day's budget refuses it (the minute's refills sooner): at most a day.
			assertThat(Long.parseLong(headers.getFirst(HttpHeaders.RETRY_AFTER))).isEqualTo(86_400);
			JsonNode error = JsonMapper.shared().readTree(refused.getResponseBody()).get("error");
			assertThat(error.get("message").asString()).contains("limit 1000")
				.doesNotContain("on model")
				.endsWith("Please try again in 24h0m0s.");
			// The binding budget (least share left) is the model's: full again within its
			// minute, as far as the client is told.
			assertThat(headers.getFirst(RateLimitHeaders.LIMIT)).isEqualTo("500");
			assertThat(headers.getFirst(RateLimitHeaders.RESET)).isEqualTo("1m0s");
			hold.complete(null);
			assertThat(first.get(10, TimeUnit.SECONDS).getStatus().value()).isEqualTo(200);
			// Settled on its usage: the debt is gone, and so is the long wait.
			await().atMost(Duration.ofSeconds(5))
				.untilAsserted(() -> assertThat(view("hoarder").budgets().get(0).remaining()).isPositive());
			assertThat(post("hoarder", TenantGateways.chat("third", false, ",\"max_tokens\":1")).getStatus().value())
				.isEqualTo(200);
		}
		finally {
			hold.complete(null);
		}
	}

	@Test
	void aModelsOwnBudgetIsCheckedBesidesTheTenants() {
		EntityExchangeResult<String> first = post("modeled",
				TenantGateways.chat("model m", false, ",\"max_tokens\":100"));
		assertThat(first.getStatus().value()).isEqualTo(200);
		// The model's budget binds: it has the smallest share left.
		assertThat(first.getResponseHeaders().getFirst(RateLimitHeaders.LIMIT)).isEqualTo("50");
		EntityExchangeResult<String> second = post("modeled",
				TenantGateways.chat("model m", false, ",\"max_tokens\":1"));
		assertThat(second.getStatus().value()).isEqualTo(429);
		assertThat(second.getResponseBody()).contains("on model 'm'");
		// The tenant's own budget was charged too.
		assertThat(view("modeled").budgets()).extracting(TenantView.Budget::model, TenantView.Budget::window)
			.containsExactly(tuple(null, "day"), tuple("m", "minute"));
		assertThat(view("modeled").budgets().get(0).remaining()).isLessThan(100_000 - 100);
	}

	@Test
	void aClientThatLeavesIsChargedWhatWasGenerated() throws Exception {
		String body = TenantGateways.chat("endless", true, "");
		int port = Integer.parseInt(gateway.getEnvironment().getProperty("local.server.port"));
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
					+ "x-tenant-id: leaver\r\nContent-Length: " + body.getBytes(StandardCharsets.UTF_8).length
					+ "\r\n\r\n" + body)
				.getBytes(StandardCharsets.UTF_8));
			out.flush();
			InputStream in = socket.getInputStream();
			byte[] buffer = new byte[8192];
			int read = 0;
			while (read < 4000) {
				int n = in.read(buffer);
				assertThat(n).isPositive();
				read += n;
			}
			socket.setSoLinger(true, 0);
		}
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(view("leaver").usage().cost()).isPositive());
		TenantView leaver = view("leaver");
		// Charged its prompt (estimated) and the events it was sent, no more than the
		// engine generated.
		assertThat(leaver.usage().completionTokens()).isPositive().isLessThanOrEqualTo(ENGINE.endlessEvents.get());
		assertThat(leaver.usage().promptTokens()).isPositive();
	}

	@Test
	void tenantNamesAreBoundedAndValidated() {
		for (int i = 0; i < 20; i++) {
			assertThat(post("client-" + i, TenantGateways.chat("unlisted " + i, false, "")).getStatus().value())
				.isEqualTo(200);
		}
		assertThat(post("bad tenant!", TenantGateways.chat("x", false, "")).getStatus().value()).isEqualTo(400);
		EntityExchangeResult<String> tooLong = post("a".repeat(65), TenantGateways.chat("x", false, ""));
		assertThat(tooLong.getStatus().value()).isEqualTo(400);
		assertThat(tooLong.getResponseBody()).contains("invalid_tenant");
		// Twice: whichever came first would count, a proxy's appended value or the
		// client's.
		EntityExchangeResult<String> twice = client.post()
			.uri("/v1/chat/completions")
			.header("x-tenant-id", "client-1", "acme")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(TenantGateways.chat("x", false, ""))
			.exchange()
			.expectBody(String.class)
			.returnResult();
		assertThat(twice.getStatus().value()).isEqualTo(400);
		assertThat(twice.getResponseBody()).contains("invalid_tenant").contains("x-tenant-id must be sent once");
		// max-tracked 3: at most four budget lines per tracked tenant.
		assertThat(gateway.getBean(LocalBudgetStore.class).size()).isLessThanOrEqualTo(12);
		MeterRegistry meters = gateway.getBean(MeterRegistry.class);
		Set<String> tenants = meters.getMeters()
			.stream()
			.map(Meter::getId)
			.filter(id -> id.getName().startsWith("gen_ai.") || id.getName().startsWith("dualmap.tenants."))
			.map(id -> id.getTag("tenant"))
			.filter(t -> t != null)
			.collect(Collectors.toSet());
		assertThat(tenants).contains("other")
			.isSubsetOf("acme", "streamer", "asker", "tiny", "leaver", "metered", "shown", "modeled", "zipped",
					"zipstreamer", "zstded", "brotlied", "default", "other");
		assertThat(budgets().view()).containsKey("other").doesNotContainKey("client-1");
		assertThat(budgets().view().get("other").usage().requests()).isGreaterThanOrEqualTo(20);
	}

	@Test
	void genAiMetersFollowTheSemanticConventions() {
		post("metered", TenantGateways.chat("meters", true, ""));
		MeterRegistry meters = gateway.getBean(MeterRegistry.class);
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
			assertThat(meters.find("gen_ai.client.token.usage")
				.tags("gen_ai.token.type", "output", "gen_ai.request.model", "m", "gen_ai.operation.name", "chat",
						"tenant", "metered")
				.summary()).isNotNull();
			assertThat(meters.find("gen_ai.server.time_to_first_token").tags("tenant", "metered").timer()).isNotNull();
			assertThat(meters.find("gen_ai.server.request.duration").tags("tenant", "metered").timer()).isNotNull();
		});
		assertThat(meters.find("gen_ai.client.token.usage").tags("gen_ai.token.type", "input").summary()).isNotNull();
		for (Meter meter : meters.getMeters()) {
			String name = meter.getId().getName();
			if (name.startsWith("gen_ai.") || name.startsWith("dualmap.tenants.")) {
				assertThat(meter.getId().getDescription()).as(name).isNotBlank();
			}
		}
	}

	@Test
	void aGzipBodyIsAdmittedOnTheCapOfItsDecodedForm() throws Exception {
		// 300 a day: a cap of 7 fits, the default cap (1024) does not.
		EntityExchangeResult<String> capped = gzipped("zipped", TenantGateways.chat("zip", false, ",\"max_tokens\":7"));
		assertThat(capped.getStatus().value()).isEqualTo(200);
		long remaining = Long.parseLong(capped.getResponseHeaders().getFirst(RateLimitHeaders.REMAINING));
		assertThat(remaining).as("admitted on its prompt and 7").isBetween(250L, 299L);
		EntityExchangeResult<String> uncapped = gzipped("zipped", TenantGateways.chat("zip", false, ""));
		assertThat(uncapped.getStatus().value()).as("no cap: the default one, over budget").isEqualTo(429);
	}

	@Test
	void aGzipStreamIsSentDecodedWithItsUsageRequested() throws Exception {
		EntityExchangeResult<String> result = gzipped("zipstreamer", TenantGateways.chat("zipped stream", true, ""));
		assertThat(result.getStatus().value()).isEqualTo(200);
		assertThat(result.getResponseBody()).doesNotContain("usage").contains("[DONE]");
		assertThat(ENGINE.bodies).anySatisfy(
				b -> assertThat(b).contains("zipped stream").contains("\"stream_options\":{\"include_usage\":true}"));
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(view("zipstreamer").usage().cost()).isEqualTo(COST));
		assertThat(view("zipstreamer").usage().completionTokens()).isEqualTo(UsageEngine.COMPLETION_TOKENS);
	}

	@Test
	void zstdAndBrotliBodiesAreAdmittedOnTheCapOfTheirDecodedForm() throws Exception {
		for (String coding : new String[] { "zstd", "br" }) {
			String tenant = coding.equals("zstd") ? "zstded" : "brotlied";
			EntityExchangeResult<String> capped = encoded(coding, tenant,
					TenantGateways.chat("squeezed", false, ",\"max_tokens\":7"));
			assertThat(capped.getStatus().value()).as(coding).isEqualTo(200);
			long remaining = Long.parseLong(capped.getResponseHeaders().getFirst(RateLimitHeaders.REMAINING));
			assertThat(remaining).as("%s: admitted on its prompt and 7", coding).isBetween(250L, 299L);
			EntityExchangeResult<String> uncapped = encoded(coding, tenant, TenantGateways.chat("squeezed", false, ""));
			assertThat(uncapped.getStatus().value()).as("%s: no cap, the default one: over budget", coding)
				.isEqualTo(429);
		}
	}

	private static EntityExchangeResult<String> gzipped(String tenant, String body) throws Exception {
		return encoded("gzip", tenant, body);
	}

	private static EntityExchangeResult<String> encoded(String coding, String tenant, String body) throws Exception {
		byte[] plain = body.getBytes(StandardCharsets.UTF_8);
		byte[] sent;
		if (coding.equals("zstd")) {
			sent = com.github.luben.zstd.Zstd.compress(plain);
		}
		else if (coding.equals("br")) {
			com.aayushatharva.brotli4j.Brotli4jLoader.ensureAvailability();
			sent = com.aayushatharva.brotli4j.encoder.Encoder.compress(plain);
		}
		else {
			java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
			try (java.util.zip.GZIPOutputStream gzip = new java.util.zip.GZIPOutputStream(bytes)) {
				gzip.write(plain);
			}
			sent = bytes.toByteArray();
		}
		return client.post()
			.uri("/v1/chat/completions")
			.header("x-tenant-id", tenant)
			.header(HttpHeaders.CONTENT_ENCODING, coding)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(sent)
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	@Test
	void theActuatorShowsEachTenantsBudgetAndUsage() throws Exception {
		post("shown", TenantGateways.chat("actuator", false, ""));
		String body = WebTestClients.okBody(client, "/actuator/dualmap");
		JsonNode tenants = JsonMapper.shared().readTree(body).get("tenants");
		assertThat(tenants.get("mode").asString()).isEqualTo("enforce");
		assertThat(tenants.get("store").asString()).isEqualTo("local");
		JsonNode shown = tenants.get("tenants").get("shown");
		assertThat(shown.get("weight").asDouble()).isEqualTo(2.0);
		assertThat(shown.get("priority").asInt()).isZero();
		JsonNode budget = shown.get("budgets").get(0);
		assertThat(budget.get("window").asString()).isEqualTo("day");
		assertThat(budget.get("limit").asLong()).isEqualTo(1000);
		assertThat(budget.get("remaining").asLong()).isLessThan(1000);
		assertThat(budget.get("reset").asString()).isNotBlank();
		assertThat(shown.get("usage").get("requests").asLong()).isEqualTo(1);
		assertThat(tenants.get("tenants").has("default")).isTrue();
	}

}

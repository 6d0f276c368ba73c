package io.github.dualmap.tenant;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.dualmap.GatewayTestApplication;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Two tenants named by the header share one engine through the gateway's dispatch queue:
 * the engine takes one request at a time (one request in prefill, each answering its
 * first token after 150 ms), a noisy tenant sends a burst, a quiet one three requests
 * after it, and the quiet tenant's requests reach the engine between the noisy ones
 * instead of after all of them. {@code /actuator/dualmap} shows each tenant's share.
 */
class TenantFairnessIntegrationTests {

	static final UsageEngine ENGINE = new UsageEngine();

	static ConfigurableApplicationContext gateway;

	@BeforeAll
	static void start() throws Exception {
		ENGINE.delay.set(Duration.ofMillis(150));
		gateway = TenantGateways.start(GatewayTestApplication.class, ENGINE, "dualmap.dispatch.max-prefill-requests=1",
				"dualmap.dispatch.max-wait=20s", "dualmap.tenants.quiet.weight=1", "dualmap.tenants.noisy.weight=1");
	}

	@AfterAll
	static void stop() {
		if (gateway != null) {
			gateway.close();
		}
		ENGINE.stop();
	}

	@Test
	void aQuietTenantIsServedBetweenANoisyTenantsBurstAndTheActuatorShowsTheShares() throws Exception {
		String base = "http://127.0.0.1:" + gateway.getEnvironment().getProperty("local.server.port");
		HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
		// One request ends first: the queue then charges output at the pool's mean (5
		// tokens) rather than its initial estimate for a pool without history.
		assertThat(http.send(chat(base, "default", "warm-up"), HttpResponse.BodyHandlers.ofString()).statusCode())
			.isEqualTo(200);
		ENGINE.bodies.clear();
		List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
		List<String> sent = new ArrayList<>();
		for (int i = 0; i < 7; i++) {
			sent.add("noisy-" + i);
		}
		for (int i = 0; i < 3; i++) {
			sent.add("quiet-" + i);
		}
		for (String name : sent) {
			String tenant = name.substring(0, name.indexOf('-'));
			answers.add(http.sendAsync(chat(base, tenant, name), HttpResponse.BodyHandlers.ofString()));
			// Arrival order is the order sent.
			Thread.sleep(30);
		}
		for (int i = 0; i < answers.size(); i++) {
			HttpResponse<String> answer;
			try {
				answer = answers.get(i).get(30, TimeUnit.SECONDS);
			}
			catch (TimeoutException ex) {
				// A request still queued would have been answered 503 at max-wait (20 s):
				// one without an answer is in flight. Say where it is.
				throw new AssertionError(sent.get(i) + " got no answer in 30 s; the engine received " + received()
						+ "; " + base + "/actuator/dualmap: "
						+ http
							.send(HttpRequest.newBuilder(URI.create(base + "/actuator/dualmap")).build(),
									HttpResponse.BodyHandlers.ofString())
							.body(),
						ex);
			}
			assertThat(answer.statusCode()).as("%s: %s", sent.get(i), answer.body()).isEqualTo(200);
		}
		List<String> order = received();
		assertThat(order).containsExactlyInAnyOrderElementsOf(sent);
		System.out.println("ORDER " + order + " "
				+ http
					.send(HttpRequest.newBuilder(URI.create(base + "/actuator/dualmap")).build(),
							HttpResponse.BodyHandlers.ofString())
					.body());
		int lastQuiet = order.lastIndexOf("quiet-2");
		assertThat(lastQuiet).as("quiet's last request goes before noisy's last ones: %s", order)
			.isLessThan(order.indexOf("noisy-5"));
		assertThat(order.indexOf("quiet-0")).as("%s", order).isLessThanOrEqualTo(3);

		String body = http
			.send(HttpRequest.newBuilder(URI.create(base + "/actuator/dualmap")).build(),
					HttpResponse.BodyHandlers.ofString())
			.body();
		JsonNode tenants = JsonMapper.shared().readTree(body).get("tenants").get("tenants");
		// Budgets in memory: the pool's account is this gateway's own.
		JsonNode account = JsonMapper.shared().readTree(body).get("tenants").get("fairness").get("llm");
		assertThat(account.get("shared").asBoolean()).isFalse();
		assertThat(account.get("lastSyncAgeMs").isNull()).isTrue();
		JsonNode quiet = tenants.get("quiet").get("shares").get("llm");
		JsonNode noisy = tenants.get("noisy").get("shares").get("llm");
		// The warm-up's tenant was served in the window too: three tenants of weight 1.
		assertThat(quiet.get("fairShare").asDouble()).isCloseTo(1.0 / 3, within(1e-9));
		assertThat(noisy.get("fairShare").asDouble()).isCloseTo(1.0 / 3, within(1e-9));
		assertThat(quiet.get("share").asDouble() + noisy.get("share").asDouble()).isLessThan(1.0).isGreaterThan(0.8);
		assertThat(noisy.get("servedTokens").asDouble()).isGreaterThan(2 * quiet.get("servedTokens").asDouble());
		assertThat(quiet.get("queued").asInt()).isZero();
		assertThat(tenants.get("default").get("shares").get("llm").get("queued").asInt()).isZero();
	}

	/** The requests the engine received, in order, by name. */
	private static List<String> received() {
		return ENGINE.bodies.stream()
			.map(b -> b.replaceAll("(?s).*\"content\":\"((noisy|quiet)-\\d)\".*", "$1"))
			.toList();
	}

	private static HttpRequest chat(String base, String tenant, String content) {
		return HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
			.header("content-type", "application/json")
			.header("x-tenant-id", tenant)
			.timeout(Duration.ofSeconds(30))
			.POST(HttpRequest.BodyPublishers.ofString(TenantGateways.chat(content, true, "")))
			.build();
	}

}

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

import io.github.dualmap.GatewayTestApplication;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The SLO class a request names in its header sets its priority band: one engine taking
 * one request at a time (each answering its first token after a second), tenant {@code x}
 * sends requests of class {@code plain} (no band of its own: its tenant's, 0), then
 * tenant {@code y} (band 3) one of class {@code plain}, then tenant {@code x} one of
 * class {@code urgent} (band 5). Both classes have the same objective, so only the bands
 * tell them apart: {@code x}'s urgent request reaches the engine first, then {@code y}'s,
 * then {@code x}'s plain ones.
 */
class SloClassPriorityIntegrationTests {

	static final UsageEngine ENGINE = new UsageEngine();

	static ConfigurableApplicationContext gateway;

	@BeforeAll
	static void start() throws Exception {
		ENGINE.delay.set(Duration.ofSeconds(1));
		gateway = TenantGateways.start(GatewayTestApplication.class, ENGINE, "dualmap.dispatch.max-prefill-requests=1",
				"dualmap.dispatch.max-wait=30s", "dualmap.slo.classes.plain.ttft=30s",
				"dualmap.slo.classes.urgent.ttft=30s", "dualmap.slo.classes.urgent.priority=5",
				"dualmap.tenants.x.weight=1", "dualmap.tenants.y.priority=3");
	}

	@AfterAll
	static void stop() {
		if (gateway != null) {
			gateway.close();
		}
		ENGINE.stop();
	}

	@Test
	void theClassHeaderSelectsTheBandARequestIsReleasedIn() throws Exception {
		String base = "http://127.0.0.1:" + gateway.getEnvironment().getProperty("local.server.port");
		HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
		List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
		answers.add(http.sendAsync(chat(base, "x", "plain", "plain-0"), HttpResponse.BodyHandlers.ofString()));
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (ENGINE.bodies.isEmpty() && System.nanoTime() < deadline) {
			Thread.sleep(5);
		}
		assertThat(ENGINE.bodies).as("the first request reached the idle engine at once").hasSize(1);
		String[][] sent = { { "x", "plain", "plain-1" }, { "x", "plain", "plain-2" }, { "y", "plain", "vip-0" },
				{ "x", "urgent", "urgent-0" } };
		for (String[] s : sent) {
			answers.add(http.sendAsync(chat(base, s[0], s[1], s[2]), HttpResponse.BodyHandlers.ofString()));
			// All wait while the first one is in prefill.
			Thread.sleep(30);
		}
		for (CompletableFuture<HttpResponse<String>> a : answers) {
			assertThat(a.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		}
		List<String> order = ENGINE.bodies.stream()
			.map(b -> b.replaceAll("(?s).*\"content\":\"((plain|vip|urgent)-\\d)\".*", "$1"))
			.toList();
		assertThat(order).hasSize(5);
		assertThat(order.subList(0, 3)).as("%s", order).containsExactly("plain-0", "urgent-0", "vip-0");
		assertThat(order.subList(3, 5)).as("%s", order).containsExactlyInAnyOrder("plain-1", "plain-2");
	}

	private static HttpRequest chat(String base, String tenant, String sloClass, String content) {
		return HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
			.header("content-type", "application/json")
			.header("x-tenant-id", tenant)
			.header("x-slo-class", sloClass)
			.timeout(Duration.ofSeconds(30))
			.POST(HttpRequest.BodyPublishers.ofString(TenantGateways.chat(content, true, "")))
			.build();
	}

}

package io.github.dualmap.tenant;

import java.io.IOException;
import java.time.Duration;

import io.github.dualmap.GatewayTestApplication;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.embedded.RedisServer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Budgets shared through a real Redis server (the redis-server binary of embedded-redis,
 * started by the test on loopback): two gateways enforce one budget, and when Redis stops
 * the one that fails open serves unchecked while the one that fails closed answers 503,
 * both within the timeout, and both check budgets again once Redis is back.
 */
class RedisBudgetsIntegrationTests {

	static final UsageEngine ENGINE = new UsageEngine();

	static RedisServer redis;

	static int redisPort;

	static ConfigurableApplicationContext open;

	static ConfigurableApplicationContext closed;

	@BeforeAll
	static void start() throws IOException {
		redisPort = TenantGateways.freePort();
		redis = EmbeddedRedis.server(redisPort);
		redis.start();
		open = gateway("open");
		closed = gateway("closed");
	}

	private static ConfigurableApplicationContext gateway(String failureMode) throws IOException {
		return TenantGateways.start(GatewayTestApplication.class, ENGINE, "dualmap.tenants.store=redis",
				"dualmap.tenants.redis.failure-mode=" + failureMode, "dualmap.tenants.redis.timeout=300ms",
				"dualmap.tenants.cost.cached-prompt-weight=0.5", "spring.data.redis.host=127.0.0.1",
				"spring.data.redis.port=" + redisPort, "dualmap.tenants.shared.tokens-per-day=300",
				"dualmap.tenants.other-team.tokens-per-day=100000");
	}

	@AfterAll
	static void stop() throws IOException {
		for (ConfigurableApplicationContext context : new ConfigurableApplicationContext[] { open, closed }) {
			if (context != null) {
				context.close();
			}
		}
		if (redis != null && redis.isActive()) {
			redis.stop();
		}
		ENGINE.stop();
	}

	private static EntityExchangeResult<String> post(ConfigurableApplicationContext gateway, String tenant,
			String content) {
		return post(gateway, tenant, content, 10);
	}

	private static EntityExchangeResult<String> post(ConfigurableApplicationContext gateway, String tenant,
			String content, int maxTokens) {
		WebTestClient client = TenantGateways.client(gateway);
		return client.post()
			.uri("/v1/chat/completions")
			.header("x-tenant-id", tenant)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(TenantGateways.chat(content, false, ",\"max_tokens\":" + maxTokens))
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	@Test
	void twoGatewaysShareOneBudgetAndRedisGoingAwayNeverHangsARequest() throws Exception {
		// Through the first gateway: admitted on its estimate, then charged 115.
		EntityExchangeResult<String> first = post(open, "shared", "one");
		assertThat(first.getStatus().value()).isEqualTo(200);
		long estimate = 300 - Long.parseLong(first.getResponseHeaders().getFirst(RateLimitHeaders.REMAINING));
		// A few prompt tokens and max_tokens; less than the 115 it is charged.
		assertThat(estimate).isBetween(11L, 114L);
		await().atMost(Duration.ofSeconds(5))
			.until(() -> open.getBean(TokenBudgets.class).view().get("shared").usage().cost() == 115);
		// Through the second: it sees what the first charged (refill over the test is
		// under a token a minute at 300 a day).
		EntityExchangeResult<String> second = post(closed, "shared", "two");
		assertThat(second.getStatus().value()).isEqualTo(200);
		long remaining = Long.parseLong(second.getResponseHeaders().getFirst(RateLimitHeaders.REMAINING));
		assertThat(remaining).isBetween(300 - 115 - estimate - 1, 300 - 115 - estimate + 1);
		await().atMost(Duration.ofSeconds(5))
			.until(() -> closed.getBean(TokenBudgets.class).view().get("shared").usage().cost() == 115);
		// 70 tokens left together: the first gateway, which alone charged only 115 of
		// 300, refuses a request estimated at over 100.
		EntityExchangeResult<String> third = post(open, "shared", "three", 100);
		assertThat(third.getStatus().value()).isEqualTo(429);
		assertThat(third.getResponseBody()).contains("rate_limit_exceeded");

		redis.stop();
		long start = System.nanoTime();
		EntityExchangeResult<String> unchecked = post(open, "other-team", "while redis is down");
		assertThat(unchecked.getStatus().value()).isEqualTo(200);
		// Served unchecked: no budget to report.
		assertThat(unchecked.getResponseHeaders().getFirst(RateLimitHeaders.LIMIT)).isNull();
		EntityExchangeResult<String> unavailable = post(closed, "other-team", "while redis is down");
		assertThat(unavailable.getStatus().value()).isEqualTo(503);
		JsonNode error = JsonMapper.shared().readTree(unavailable.getResponseBody()).get("error");
		assertThat(error.get("code").asString()).isEqualTo("budget_store_unavailable");
		assertThat(unavailable.getResponseHeaders().getFirst("Retry-After")).isEqualTo("1");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
		assertThat(open.getBean(MeterRegistry.class)
			.get("dualmap.tenants.store.failures")
			.tag("failure-mode", "open")
			.counter()
			.count()).isPositive();
		assertThat(closed.getBean(MeterRegistry.class)
			.get("dualmap.tenants.requests")
			.tags("tenant", "other-team", "outcome", "unavailable")
			.counter()
			.count()).isEqualTo(1);

		// Back: budgets are checked again, and what the first gateway served unchecked is
		// charged now (the request refused 503 was never served, so it owes nothing).
		redis = EmbeddedRedis.server(redisPort);
		redis.start();
		await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
			EntityExchangeResult<String> checked = post(open, "other-team", "redis is back");
			assertThat(checked.getStatus().value()).isEqualTo(200);
			assertThat(checked.getResponseHeaders().getFirst(RateLimitHeaders.LIMIT)).isEqualTo("100000");
		});
		TokenBudgets openBudgets = open.getBean(TokenBudgets.class);
		await().atMost(Duration.ofSeconds(5)).until(() -> openBudgets.pendingTokens() == 0);
		// The last settlement lands in Redis shortly after its request's end.
		Thread.sleep(500);
		// Every request the first gateway served for the tenant (the unchecked ones too:
		// the first, and any the wait above sent before Redis answered), 115 each.
		long servedCost = openBudgets.view().get("other-team").usage().cost();
		assertThat(servedCost).isGreaterThanOrEqualTo(230).isEqualTo(servedCost / 115 * 115);
		EntityExchangeResult<String> seen = post(closed, "other-team", "one");
		long left = Long.parseLong(seen.getResponseHeaders().getFirst(RateLimitHeaders.REMAINING));
		assertThat(left).isBetween(100_000 - servedCost - estimate - 1, 100_000 - servedCost - estimate + 1);
	}

}

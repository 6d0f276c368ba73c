package io.github.dualmap.tenant;

import java.time.Duration;

import io.github.dualmap.GatewayTestApplication;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Shadow mode (over budget: counted and reported, never refused) and a tenant resolved by
 * a Spring Cloud Gateway {@link KeyResolver} bean named in the configuration.
 */
class TenantModesIntegrationTests {

	static final UsageEngine ENGINE = new UsageEngine();

	static ConfigurableApplicationContext shadow;

	static ConfigurableApplicationContext resolved;

	@BeforeAll
	static void start() throws Exception {
		shadow = TenantGateways.start(GatewayTestApplication.class, ENGINE, "dualmap.tenants.mode=shadow",
				"dualmap.tenants.tiny.tokens-per-minute=50");
		resolved = TenantGateways.start(ResolverApp.class, ENGINE, "dualmap.tenants.key-resolver=apiKeyTenant",
				"dualmap.tenants.team-a.tokens-per-day=500", "dualmap.tenants.default.tokens-per-day=900");
	}

	@AfterAll
	static void stop() {
		for (ConfigurableApplicationContext context : new ConfigurableApplicationContext[] { shadow, resolved }) {
			if (context != null) {
				context.close();
			}
		}
		ENGINE.stop();
	}

	private static EntityExchangeResult<String> post(ConfigurableApplicationContext gateway, String header,
			String value, int maxTokens) {
		WebTestClient client = TenantGateways.client(gateway);
		return client.post()
			.uri("/v1/chat/completions")
			.header(header, value)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(TenantGateways.chat("hi", false, ",\"max_tokens\":" + maxTokens))
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	@Test
	void shadowModeCountsAndReportsButNeverRefuses() {
		for (int i = 0; i < 3; i++) {
			EntityExchangeResult<String> result = post(shadow, "x-tenant-id", "tiny", 100);
			assertThat(result.getStatus().value()).isEqualTo(200);
			assertThat(result.getResponseHeaders().getFirst(RateLimitHeaders.LIMIT)).isEqualTo("50");
			assertThat(result.getResponseHeaders().getFirst(RateLimitHeaders.REMAINING)).isEqualTo("0");
		}
		TokenBudgets budgets = shadow.getBean(TokenBudgets.class);
		// The first found a full bucket; the next two were over budget.
		assertThat(budgets.view().get("tiny").usage().overInShadow()).isEqualTo(2);
		assertThat(budgets.view().get("tiny").usage().refused()).isZero();
		assertThat(shadow.getBean(MeterRegistry.class)
			.get("dualmap.tenants.requests")
			.tags("tenant", "tiny", "outcome", "over-in-shadow")
			.counter()
			.count()).isEqualTo(2);
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(budgets.view().get("tiny").usage().cost()).isEqualTo(3 * (120 + 5)));
	}

	@Test
	void aKeyResolverNamesTheTenant() {
		EntityExchangeResult<String> teamA = post(resolved, "x-api-key", "a", 1);
		assertThat(teamA.getStatus().value()).isEqualTo(200);
		assertThat(teamA.getResponseHeaders().getFirst(RateLimitHeaders.LIMIT)).isEqualTo("500");
		// The header is not read when a key resolver is set; no key: tenant default.
		EntityExchangeResult<String> none = post(resolved, "x-tenant-id", "team-a", 1);
		assertThat(none.getResponseHeaders().getFirst(RateLimitHeaders.LIMIT)).isEqualTo("900");
		TokenBudgets budgets = resolved.getBean(TokenBudgets.class);
		assertThat(budgets.view().get("team-a").usage().requests()).isEqualTo(1);
		assertThat(budgets.view().get("default").usage().requests()).isEqualTo(1);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class ResolverApp {

		/** The tenant of an API key, as an authenticating filter would resolve it. */
		@Bean
		KeyResolver apiKeyTenant() {
			return exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("x-api-key"))
				.map(key -> "team-" + key);
		}

	}

}

package io.github.dualmap.autoconfigure;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import io.github.dualmap.gateway.PromptRoutingFilter;
import io.github.dualmap.gateway.SloResolver;
import io.github.dualmap.gateway.TenantBudgetFilter;
import io.github.dualmap.gateway.TokenUsageFilter;
import io.github.dualmap.tenant.BudgetLine;
import io.github.dualmap.tenant.LocalBudgetStore;
import io.github.dualmap.tenant.RedisBudgetStore;
import io.github.dualmap.tenant.RedisFairnessSync;
import io.github.dualmap.tenant.TenantDirectory;
import io.github.dualmap.tenant.TenantProperties;
import io.github.dualmap.tenant.TokenBudgets;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.discovery.simple.reactive.SimpleReactiveDiscoveryClientAutoConfiguration;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.FileSystemResource;
import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code config-samples/tenants.yml} starts the tenant auto-configuration with budgets in
 * Redis and binds to the tenants it promises; without {@code dualmap.tenants.enabled}
 * nothing of it exists.
 */
class TenantsSampleTests {

	private static ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(DualMapAutoConfiguration.class, DualMapTenantsAutoConfiguration.class,
							DataRedisAutoConfiguration.class, DataRedisReactiveAutoConfiguration.class,
							UtilAutoConfiguration.class, SimpleReactiveDiscoveryClientAutoConfiguration.class))
			.withPropertyValues("dualmap.scrape.enabled=false");
	}

	@Test
	void tenantsWithRedis() {
		runner().withInitializer(context -> {
			try {
				List<PropertySource<?>> sources = new YamlPropertySourceLoader().load("tenants.yml",
						new FileSystemResource(Path.of("config-samples", "tenants.yml")));
				sources.forEach(s -> context.getEnvironment().getPropertySources().addFirst(s));
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}).withPropertyValues("REDIS_PASSWORD=from-a-secret").run(context -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(TenantBudgetFilter.class)
				.hasSingleBean(TokenUsageFilter.class)
				.hasSingleBean(RedisBudgetStore.class)
				.hasSingleBean(RedisFairnessSync.class);
			TenantProperties p = context.getBean(TenantProperties.class);
			assertThat(p.getMode()).isEqualTo(TenantProperties.TenantMode.ENFORCE);
			assertThat(p.getRedis().getTimeout()).isEqualTo(Duration.ofMillis(250));
			assertThat(p.getCost().getCachedPromptWeight()).isEqualTo(0.5);
			TenantDirectory directory = context.getBean(TenantDirectory.class);
			assertThat(directory.named()).containsOnlyKeys("search", "research");
			assertThat(directory.settings("search").weight()).isEqualTo(3.0);
			assertThat(directory.settings("search").priority()).isEqualTo(1);
			assertThat(directory.defaults().tokensPerMinute()).isEqualTo(20_000);
			assertThat(directory.lines("research", "meta-llama/Llama-3.1-70B-Instruct")).extracting(BudgetLine::limit)
				.containsExactly(50_000L, 5_000_000L, 1_000_000L);
			assertThat(context.getBean(TokenBudgets.class).storeKind()).isEqualTo("redis");
			SloResolver slos = context.getBean(SloResolver.class);
			HttpHeaders interactive = new HttpHeaders();
			interactive.add("x-slo-class", "interactive");
			assertThat(slos.resolve(interactive).priority()).isEqualTo(2);
			HttpHeaders batch = new HttpHeaders();
			batch.add("x-slo-class", "batch");
			assertThat(slos.resolve(batch).priority()).isEqualTo(-1);
		});
	}

	@Test
	void aGatewayWithoutRedisKeepsBudgetsInMemory() {
		runner().withClassLoader(new FilteredClassLoader("org.springframework.data.redis", "io.lettuce"))
			.withPropertyValues("dualmap.services=llm", "dualmap.tenants.enabled=true",
					"dualmap.tenants.acme.tokens-per-day=5")
			.run(context -> assertThat(context).hasNotFailed().hasSingleBean(LocalBudgetStore.class));
		runner().withClassLoader(new FilteredClassLoader("org.springframework.data.redis", "io.lettuce"))
			.withPropertyValues("dualmap.services=llm", "dualmap.tenants.enabled=true", "dualmap.tenants.store=redis")
			.run(context -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("spring-boot-starter-data-redis-reactive"));
	}

	@Test
	void thePromptFilterDecodesForTokenBudgetsOnlyWithThem() {
		runner().withPropertyValues("dualmap.tenants.enabled=true", "dualmap.tenants.store=local")
			.run(context -> assertThat(context).hasNotFailed()
				.getBean(PromptRoutingFilter.class)
				.hasFieldOrPropertyWithValue("tokenBudgets", true));
		runner().run(context -> assertThat(context).hasNotFailed()
			.getBean(PromptRoutingFilter.class)
			.hasFieldOrPropertyWithValue("tokenBudgets", false));
	}

	@Test
	void theFairnessAccountIsSharedThroughRedisUnlessFairnessIsOff() {
		runner()
			.withPropertyValues("dualmap.services=llm", "dualmap.tenants.enabled=true", "dualmap.tenants.store=redis",
					"dualmap.tenants.redis.fairness-sync-interval=250ms")
			.run(context -> assertThat(context).hasNotFailed().hasSingleBean(RedisFairnessSync.class));
		runner()
			.withPropertyValues("dualmap.services=llm", "dualmap.tenants.enabled=true", "dualmap.tenants.store=redis",
					"dualmap.tenants.fairness=false")
			.run(context -> assertThat(context).hasNotFailed()
				.hasSingleBean(RedisBudgetStore.class)
				.doesNotHaveBean(RedisFairnessSync.class));
		runner().withPropertyValues("dualmap.services=llm", "dualmap.tenants.enabled=true")
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RedisFairnessSync.class));
		runner()
			.withPropertyValues("dualmap.services=llm", "dualmap.tenants.enabled=true", "dualmap.tenants.store=redis",
					"dualmap.tenants.redis.fairness-sync-interval=0s")
			.run(context -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("dualmap.tenants.redis.fairness-sync-interval must be at least 10ms"));
	}

	@Test
	void offUnlessEnabled() {
		runner().withPropertyValues("dualmap.services=llm", "dualmap.tenants.acme.tokens-per-day=5")
			.run(context -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(TenantBudgetFilter.class)
				.doesNotHaveBean(TokenBudgets.class));
	}

	@Test
	void aBadTenantFailsTheStartupNamingIt() {
		runner()
			.withPropertyValues("dualmap.services=llm", "dualmap.tenants.enabled=true",
					"dualmap.tenants.acme.tokens-per-minut=5")
			.run(context -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("dualmap.tenants.acme.tokens-per-minut is no tenant setting"));
	}

}

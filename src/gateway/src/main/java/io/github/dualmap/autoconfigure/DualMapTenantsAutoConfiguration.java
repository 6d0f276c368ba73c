package io.github.dualmap.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.dualmap.core.DispatchQueues;

import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.TenantBudgetFilter;
import io.github.dualmap.gateway.TokenUsageFilter;
import io.github.dualmap.tenant.BudgetStore;
import io.github.dualmap.tenant.GenAiMeters;
import io.github.dualmap.tenant.LocalBudgetStore;
import io.github.dualmap.tenant.NamedTenants;
import io.github.dualmap.tenant.RedisBudgetStore;
import io.github.dualmap.tenant.RedisFairnessSync;
import io.github.dualmap.tenant.TenantDirectory;
import io.github.dualmap.tenant.TenantProperties;
import io.github.dualmap.tenant.TokenBudgets;
import io.lettuce.core.ClientOptions;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Tenants on DualMap routes when {@code dualmap.tenants.enabled=true}: the directory of
 * configured tenants, their token budgets (in memory, or in Redis with
 * {@code dualmap.tenants.store=redis}, with one fairness account per pool shared by every
 * replica), the admission and usage filters and the GenAI meters.
 */
@AutoConfiguration(after = DualMapAutoConfiguration.class,
		afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration")
@ConditionalOnBean(DualMapRegistry.class)
@ConditionalOnSwitch(TenantProperties.PREFIX + ".enabled")
@EnableConfigurationProperties(TenantProperties.class)
public class DualMapTenantsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	TenantDirectory dualMapTenantDirectory(TenantProperties properties, Environment environment) {
		Map<String, Object> tenants = Binder.get(environment)
			.bind(TenantProperties.PREFIX, Bindable.mapOf(String.class, Object.class))
			.orElse(Map.of());
		return new TenantDirectory(NamedTenants.read(tenants), properties.getDefault(), properties.getMaxNameLength());
	}

	@Bean
	@ConditionalOnMissingBean
	GenAiMeters dualMapGenAiMeters(ObjectProvider<MeterRegistry> registry) {
		// Without a registry, meters go nowhere: a composite with no member drops them.
		return new GenAiMeters(registry.getIfAvailable(CompositeMeterRegistry::new));
	}

	@Bean
	@ConditionalOnMissingBean(BudgetStore.class)
	@ConditionalOnProperty(prefix = TenantProperties.PREFIX, name = "store", havingValue = "local",
			matchIfMissing = true)
	LocalBudgetStore dualMapLocalBudgetStore(TenantProperties properties, TenantDirectory directory) {
		// Up to four budget lines per tenant: per minute and per day, tenant and model.
		return new LocalBudgetStore(4L * properties.getMaxTracked(), System::currentTimeMillis,
				directory::configuredKey);
	}

	@Bean
	@ConditionalOnMissingBean
	TokenBudgets dualMapTokenBudgets(TenantDirectory directory, BudgetStore store, TenantProperties properties,
			GenAiMeters meters) {
		TenantProperties.Redis redis = properties.getRedis();
		return new TokenBudgets(directory, store, properties.getMode(), redis.getTimeout(), redis.getFailureMode(),
				properties.getCost(), meters, System::currentTimeMillis);
	}

	@Bean
	TenantBudgetFilter dualMapTenantBudgetFilter(DualMapRegistry registry, TokenBudgets budgets,
			TenantProperties properties, BeanFactory beans) {
		String resolver = properties.getKeyResolver();
		KeyResolver keyResolver = resolver == null || resolver.isBlank() ? null
				: beans.getBean(resolver, KeyResolver.class);
		return new TenantBudgetFilter(registry, budgets, properties.getHeader(), keyResolver,
				properties.getDefaultMaxTokens(), properties.isFairness());
	}

	@Bean
	TokenUsageFilter dualMapTokenUsageFilter(DualMapRegistry registry, TokenBudgets budgets, GenAiMeters meters,
			TenantProperties properties) {
		return new TokenUsageFilter(registry, budgets, meters,
				(int) Math.min(Integer.MAX_VALUE, properties.getMaxUsageBodySize().toBytes()));
	}

	/** Budgets in Redis, through the application's reactive Redis connection. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(ReactiveStringRedisTemplate.class)
	@ConditionalOnProperty(prefix = TenantProperties.PREFIX, name = "store", havingValue = "redis")
	static class RedisStoreConfiguration {

		@Bean
		@ConditionalOnMissingBean(BudgetStore.class)
		RedisBudgetStore dualMapRedisBudgetStore(ReactiveRedisConnectionFactory connections,
				TenantProperties properties) {
			return new RedisBudgetStore(new ReactiveStringRedisTemplate(connections),
					properties.getRedis().getKeyPrefix());
		}

		/** One fairness account per pool for every replica, unless fairness is off. */
		@Bean
		@ConditionalOnMissingBean
		@ConditionalOnSwitch(value = TenantProperties.PREFIX + ".fairness", matchIfMissing = true)
		RedisFairnessSync dualMapRedisFairnessSync(ReactiveRedisConnectionFactory connections,
				TenantProperties properties, DualMapRegistry registry, ObjectProvider<MeterRegistry> meters) {
			Map<String, DispatchQueues> pools = new LinkedHashMap<>();
			registry.services().forEach((service, pool) -> pools.put(service, pool.queues()));
			return new RedisFairnessSync(new ReactiveStringRedisTemplate(connections), pools,
					properties.getRedis().getKeyPrefix(), properties.getRedis().getFairnessSyncInterval(),
					meters.getIfAvailable(CompositeMeterRegistry::new));
		}

	}

	/**
	 * With the budgets in Redis, Lettuce refuses commands while it is disconnected
	 * instead of queueing them until it reconnects: a budget check then fails at once
	 * (and the failure mode applies), and no check or charge queued while Redis was down
	 * runs late against budgets it no longer concerns.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "io.lettuce.core.ClientOptions",
			"org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer" })
	@ConditionalOnProperty(prefix = TenantProperties.PREFIX, name = "store", havingValue = "redis")
	static class LettuceConfiguration {

		@Bean
		LettuceClientOptionsBuilderCustomizer dualMapRejectCommandsWhileDisconnected() {
			return options -> options.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
		}

	}

	/** {@code dualmap.tenants.store=redis} without Spring Data Redis: a clear failure. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnMissingClass("org.springframework.data.redis.core.ReactiveStringRedisTemplate")
	@ConditionalOnProperty(prefix = TenantProperties.PREFIX, name = "store", havingValue = "redis")
	static class RedisStoreMissingConfiguration {

		@Bean
		BudgetStore dualMapRedisBudgetStore() {
			throw new IllegalStateException("dualmap.tenants.store=redis needs Spring Data Redis's reactive client "
					+ "on the classpath: add org.springframework.boot:spring-boot-starter-data-redis-reactive");
		}

	}

}

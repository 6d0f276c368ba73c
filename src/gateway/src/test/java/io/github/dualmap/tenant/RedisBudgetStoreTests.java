package io.github.dualmap.tenant;

import java.io.IOException;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.embedded.RedisServer;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The token budgets' Redis script on a real Redis server, at the edges of its arithmetic.
 */
class RedisBudgetStoreTests {

	static RedisServer redis;

	static LettuceConnectionFactory connections;

	static ReactiveStringRedisTemplate template;

	@BeforeAll
	static void start() throws IOException {
		int port = TenantGateways.freePort();
		redis = RedisServer.newRedisServer()
			.bind("127.0.0.1")
			.port(port)
			.setting("save \"\"")
			.setting("appendonly no")
			.build();
		redis.start();
		connections = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port));
		connections.afterPropertiesSet();
		connections.start();
		template = new ReactiveStringRedisTemplate(connections);
	}

	@AfterAll
	static void stop() throws IOException {
		if (connections != null) {
			connections.destroy();
		}
		if (redis != null && redis.isActive()) {
			redis.stop();
		}
	}

	/**
	 * A client's absurd max_tokens is its estimate: the debt it leaves would expire in
	 * more milliseconds than Redis reads as an integer. Its key still expires, and the
	 * budget keeps working (it had failed every call since, unchecked or 503).
	 */
	@Test
	void anAbsurdEstimateLeavesADebtThatStillExpiresAndTheBudgetKeepsWorking() {
		RedisBudgetStore store = new RedisBudgetStore(template, "t:");
		List<BudgetLine> lines = List.of(new BudgetLine("{victim}:d", 50_000, BudgetLine.DAY_MILLIS),
				new BudgetLine("{victim}:m", 2_000, BudgetLine.MINUTE_MILLIS));
		BudgetStore.Levels first = store.charge(lines, 1e16, BudgetStore.Charge.IF_ADMITTED).block();
		assertThat(first.admitted()).isTrue();
		assertThat(first.levels()[0]).isLessThan(-9e15);
		for (String key : List.of("t:{victim}:d", "t:{victim}:m")) {
			assertThat(template.getExpire(key).block().toMillis()).as(key).isPositive();
		}
		// Refused while in debt, and given back what the engine refused to run.
		assertThat(store.charge(lines, 10, BudgetStore.Charge.IF_ADMITTED).block().admitted()).isFalse();
		BudgetStore.Levels refunded = store.charge(lines, -1e16, BudgetStore.Charge.ALWAYS).block();
		assertThat(refunded.levels()[1]).isEqualTo(2_000);
		assertThat(store.charge(lines, 10, BudgetStore.Charge.IF_ADMITTED).block().admitted()).isTrue();
	}

}

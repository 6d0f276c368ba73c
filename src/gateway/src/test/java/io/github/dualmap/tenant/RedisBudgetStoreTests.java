package io.github.dualmap.tenant;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The token budgets' Redis script on a real Redis server, at the edges of its arithmetic.
 */
class RedisBudgetStoreTests {

	static EmbeddedRedis redis;

	static ReactiveStringRedisTemplate template;

	static int port;

	@BeforeAll
	static void start() throws IOException {
		redis = EmbeddedRedis.start();
		template = redis.template;
		port = redis.port;
	}

	@AfterAll
	static void stop() throws IOException {
		if (redis != null) {
			redis.close();
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

	@Test
	void aNamedChargeIsTakenBackOnceAndOneRevokedBeforeItArrivesTakesNothing() {
		RedisBudgetStore store = new RedisBudgetStore(template, "t:");
		List<BudgetLine> lines = List.of(new BudgetLine("{named}:d", 1_000, BudgetLine.DAY_MILLIS));
		assertThat(store.charge(lines, 300, BudgetStore.Charge.IF_ADMITTED, "r1").block().levels()[0]).isEqualTo(700);
		store.revoke(lines, "r1").block();
		store.revoke(lines, "r1").block();
		assertThat(store.charge(lines, 0, BudgetStore.Charge.ALWAYS).block().levels()[0]).isEqualTo(1_000);
		// Revoked first (the gateway gave up on it before Redis ran it): it takes
		// nothing.
		store.revoke(lines, "r2").block();
		BudgetStore.Levels late = store.charge(lines, 300, BudgetStore.Charge.IF_ADMITTED, "r2").block();
		assertThat(late.levels()[0]).isEqualTo(1_000);
		// Unnamed charges are not remembered.
		assertThat(store.charge(lines, 100, BudgetStore.Charge.ALWAYS).block().levels()[0]).isEqualTo(900);
		assertThat(template.hasKey("t:{named}:op:r1").block()).isTrue();
		assertThat(template.getExpire("t:{named}:op:r1").block().toMillis()).isPositive()
			.isLessThanOrEqualTo(RedisBudgetStore.REMEMBER_MILLIS);
	}

	/**
	 * A Redis slower than the timeout answers an admission after the gateway served the
	 * request unchecked: the estimate it took then is given back, and the request is
	 * charged its usage once, not its estimate besides.
	 */
	@Test
	void anAdmissionRedisRunsAfterTheGatewayGaveUpIsTakenBackAndTheUsageChargedOnce() throws Exception {
		TenantProperties.Tenant slow = new TenantProperties.Tenant();
		slow.setTokensPerDay(10_000L);
		TenantDirectory directory = new TenantDirectory(Map.of("slow", slow), new TenantProperties.Tenant(), 64);
		TokenBudgets budgets = new TokenBudgets(directory, new RedisBudgetStore(template, "s:"),
				TenantProperties.TenantMode.ENFORCE, Duration.ofMillis(250), TenantProperties.FailureMode.OPEN,
				new TenantProperties.Cost(), new GenAiMeters(new SimpleMeterRegistry()), System::currentTimeMillis);
		// Redis busy for 0.8 s: every call waits behind it.
		Thread sleeper = new Thread(() -> {
			try (RedisClient client = RedisClient.create("redis://127.0.0.1:" + port);
					StatefulRedisConnection<String, String> connection = client.connect()) {
				connection.sync()
					.dispatch(CommandType.DEBUG, new StatusOutput<>(StringCodec.UTF8),
							new CommandArgs<>(StringCodec.UTF8).add("SLEEP").add("0.8"));
			}
		});
		sleeper.start();
		Thread.sleep(100);
		Admission admission = budgets.admit("slow", null, 500).block();
		assertThat(admission.outcome()).isEqualTo(Admission.Outcome.UNCHECKED);
		sleeper.join();
		budgets.settle(admission, 516, new TokenUsage(16, 0, 500));
		// The next admission finds Redis answering and charges what was owed.
		Admission next = budgets.admit("slow", null, 26).block();
		assertThat(next.outcome()).isEqualTo(Admission.Outcome.ADMITTED);
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(new RedisBudgetStore(template, "s:")
				.charge(directory.lines("slow", null), 0, BudgetStore.Charge.ALWAYS)
				.block()
				.levels()[0]).isBetween(10_000 - 516 - 26 - 0.0, 10_000 - 516 - 26 + 2.0));
	}

}

package io.github.dualmap.tenant;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fairness account's Redis script on a real Redis server: it adds a batch once
 * however often it is sent, answers the pool's totals, expires, and drops a hash grown
 * past its bound (tenant names churned by clients) for a new epoch.
 */
class RedisFairnessScriptTests {

	@SuppressWarnings("rawtypes")
	static final RedisScript<List> SCRIPT = RedisScript.of(RedisFairnessSync.SCRIPT, List.class);

	static EmbeddedRedis redis;

	static ReactiveStringRedisTemplate template;

	@BeforeAll
	static void start() throws IOException {
		redis = EmbeddedRedis.start();
		template = redis.template;
	}

	@AfterAll
	static void stop() throws IOException {
		if (redis != null) {
			redis.close();
		}
	}

	private static List<Object> run(String key, int maxFields, String replica, long sequence,
			String... tenantsAndService) {
		List<String> args = new ArrayList<>(
				List.of("60000", Integer.toString(maxFields), "#r:" + replica, Long.toString(sequence)));
		args.addAll(List.of(tenantsAndService));
		List<?> result = template.execute(SCRIPT, List.of(key), args).next().block();
		return new ArrayList<>(result);
	}

	@Test
	void aBatchIsAddedOnceAndEveryReplicaReadsThePoolsTotals() {
		List<Object> first = run("k1", 100, "one", 1, "a", "100.5", "b", "0");
		String epoch = String.valueOf(first.get(0));
		assertThat(first).containsExactly((Object) epoch, "100.5", "");
		// Sent again (its answer was lost): not added twice.
		assertThat(run("k1", 100, "one", 1, "a", "100.5", "b", "0")).containsExactly((Object) epoch, "100.5", "");
		// Another replica adds its own, and reads the first's.
		assertThat(run("k1", 100, "two", 1, "a", "10", "b", "-2.5")).containsExactly((Object) epoch, "110.5", "-2.5");
		assertThat(run("k1", 100, "one", 2, "a", "0", "b", "0")).containsExactly((Object) epoch, "110.5", "-2.5");
		Long ttl = template.getExpire("k1").block().toMillis();
		assertThat(ttl).isBetween(1L, 60_000L);
	}

	@Test
	void aHashGrownPastItsBoundStartsAnewUnderANewEpoch() throws InterruptedException {
		String[] many = new String[40];
		for (int i = 0; i < 20; i++) {
			many[2 * i] = "tenant-" + i;
			many[2 * i + 1] = "1";
		}
		List<Object> first = run("k2", 10, "one", 1, many);
		assertThat(template.opsForHash().size("k2").block()).isEqualTo(22);
		// Epochs are Redis's clock in microseconds: a later one differs.
		Thread.sleep(2);
		List<Object> next = run("k2", 10, "one", 2, "tenant-0", "1");
		assertThat(next.get(0)).isNotEqualTo(first.get(0));
		assertThat(next.get(1)).isEqualTo("1");
		assertThat(template.opsForHash().size("k2").block()).isEqualTo(3);
	}

}

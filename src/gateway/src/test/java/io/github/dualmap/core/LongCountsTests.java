package io.github.dualmap.core;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class LongCountsTests {

	@Test
	void keepsTheSameCountsAsAMap() {
		LongCounts counts = new LongCounts();
		Map<Long, Integer> truth = new HashMap<>();
		SplittableRandom random = new SplittableRandom(11);
		for (int i = 0; i < 100_000; i++) {
			long key = random.nextLong(5_000) * 0x10000L;
			switch (random.nextInt(4)) {
				case 0, 1 -> {
					counts.increment(key);
					truth.merge(key, 1, Integer::sum);
				}
				case 2 -> {
					counts.decrement(key);
					truth.computeIfPresent(key, (k, n) -> n == 1 ? null : n - 1);
				}
				default -> {
					counts.remove(key);
					truth.remove(key);
				}
			}
		}
		assertThat(counts.size()).isEqualTo(truth.size());
		for (long k = 0; k < 5_000; k++) {
			assertThat(counts.contains(k * 0x10000L)).isEqualTo(truth.containsKey(k * 0x10000L));
		}
	}

}

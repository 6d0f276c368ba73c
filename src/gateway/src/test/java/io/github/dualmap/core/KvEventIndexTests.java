package io.github.dualmap.core;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class KvEventIndexTests {

	@Test
	void matchesTheSetItWasToldAboutThroughGrowthAndRemovals() {
		KvEventIndex index = new KvEventIndex();
		Set<Long> truth = new HashSet<>();
		SplittableRandom random = new SplittableRandom(7);
		for (int i = 0; i < 50_000; i++) {
			long h = random.nextLong(20_000);
			if (random.nextInt(3) == 0) {
				index.removed("x", h);
				truth.remove(h);
			}
			else {
				index.stored("x", h);
				truth.add(h);
			}
		}
		assertThat(index.blocks("x")).isEqualTo(truth.size());
		for (long h = 0; h < 20_000; h++) {
			assertThat(index.overlapBlocks("x", new long[] { h }) == 1).as("block %d", h).isEqualTo(truth.contains(h));
		}
		assertThat(index.overlapBlocks("unknown", new long[] { 1 })).isZero();
		index.removed("unknown", 1);
		assertThat(index.blocks("unknown")).isZero();
	}

}

package io.github.dualmap.engine;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class EngineKvEventsTests {

	@Test
	void theEventsTellExactlyWhatTheCacheHolds() {
		// A cache of 4,000 tokens (250 blocks) under prompts of up to 1,600 tokens that
		// share prefixes: blocks are stored and evicted all the time.
		Engine engine = new Engine(EngineProfile.h100_8b().withKvCapacityTokens(4_000));
		Set<Long> held = new HashSet<>();
		int[] counts = new int[2];
		engine.kvEvents(new KvEventListener() {
			@Override
			public void stored(long blockHash) {
				assertThat(held.add(blockHash)).as("stored twice").isTrue();
				counts[0]++;
			}

			@Override
			public void removed(long blockHash) {
				assertThat(held.remove(blockHash)).as("removed unknown").isTrue();
				counts[1]++;
			}
		});
		SplittableRandom random = new SplittableRandom(5);
		long now = 0;
		for (int i = 0; i < 300; i++) {
			long[] chain = chain(random.nextInt(12), 20 + random.nextInt(80));
			int prompt = chain.length * 16 + random.nextInt(16);
			boolean probe = i % 10 == 9;
			int expected = 0;
			while (expected < chain.length && held.contains(chain[expected])) {
				expected++;
			}
			expected = Math.min(expected, (prompt - 1) / 16) * 16;
			engine.submit(new EngineRequest("r" + i, chain, prompt, 4), now);
			int seen = -1;
			while (engine.hasWork()) {
				StepResult step = engine.step(now);
				now = step.endNanos();
				for (RequestProgress p : step.emitted()) {
					if (p.outputTokens() == 1 && p.id().equals("r" + i)) {
						seen = p.cachedTokens();
					}
				}
			}
			if (probe) {
				// Alone in the engine: what it found cached is what the events said.
				assertThat(seen).as("request %d", i).isEqualTo(expected);
			}
		}
		assertThat(counts[0]).isGreaterThan(1_000);
		assertThat(counts[1]).isGreaterThan(500);
		assertThat(held).hasSizeLessThanOrEqualTo(250);
	}

	/** The first {@code blocks} chained hashes of conversation {@code family}. */
	private static long[] chain(int family, int blocks) {
		long[] chain = new long[blocks];
		long parent = 0;
		for (int b = 0; b < blocks; b++) {
			parent = BlockChains.next(parent, family, b);
			chain[b] = parent;
		}
		return chain;
	}

}

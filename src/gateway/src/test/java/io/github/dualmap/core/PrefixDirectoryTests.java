package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.openhft.hashing.LongHashFunction;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class PrefixDirectoryTests {

	@Test
	void ownerOfTheDeepestRecordedBlockAndTheLatestRecordWins() {
		PrefixDirectory d = new PrefixDirectory(100);
		assertThat(d.owner(new long[] { 1, 2, 3 })).isNull();
		d.record(new long[] { 1, 2 }, "a");
		d.record(new long[] { 1, 2, 3, 4 }, "b");
		assertThat(d.owner(new long[] { 1, 2, 3, 4, 5 })).isEqualTo("b");
		assertThat(d.owner(new long[] { 1 })).isEqualTo("b");
		d.record(new long[] { 1, 2 }, "a");
		// Block 2 went to a last, blocks 3 and 4 only to b: b holds the longer prefix.
		assertThat(d.owner(new long[] { 1, 2, 3 })).isEqualTo("b");
		assertThat(d.owner(new long[] { 1, 2, 9 })).isEqualTo("a");
		assertThat(d.owner(new long[] { 7, 8 })).isNull();
		assertThat(d.owner(new long[0])).isNull();
		assertThat(d.size()).isEqualTo(4);
	}

	@Test
	void evictsTheLeastRecentlyRecordedTailsFirst() {
		PrefixDirectory d = new PrefixDirectory(4);
		d.record(new long[] { 1, 2, 3 }, "a");
		d.record(new long[] { 7, 8 }, "b");
		// Blocks 3 then 2 were the eldest: a keeps its head.
		assertThat(d.size()).isEqualTo(4);
		assertThat(d.owner(new long[] { 1, 2, 3 })).isEqualTo("a");
		assertThat(d.owner(new long[] { 7, 8 })).isEqualTo("b");
		d.capacity(2);
		assertThat(d.capacity()).isEqualTo(2);
		assertThat(d.size()).isEqualTo(2);
		assertThat(d.owner(new long[] { 1 })).isNull();
		assertThat(d.owner(new long[] { 7, 8 })).isEqualTo("b");
		assertThatIllegalArgumentException().isThrownBy(() -> d.capacity(0)).withMessageContaining("capacity");
		assertThatIllegalArgumentException().isThrownBy(() -> new PrefixDirectory(-1));
	}

	@Test
	void forgettingAnInstanceRemovesWhatWasLastSentThereAcrossSlices() {
		int blocks = PrefixDirectory.FORGET_SLICE * 2 + 100;
		PrefixDirectory d = new PrefixDirectory(2 * blocks);
		long[] gone = new long[blocks];
		long[] kept = new long[blocks];
		for (int i = 0; i < blocks; i++) {
			// Interleaved, so both instances have entries in every slice.
			gone[i] = 2L * i + 1_000_000;
			kept[i] = 2L * i + 1_000_001;
		}
		for (int i = 0; i < blocks; i += 1000) {
			d.record(java.util.Arrays.copyOfRange(gone, i, Math.min(blocks, i + 1000)), "gone");
			d.record(java.util.Arrays.copyOfRange(kept, i, Math.min(blocks, i + 1000)), "kept");
		}
		assertThat(d.size()).isEqualTo(2 * blocks);

		assertThat(d.forget("gone")).isEqualTo(blocks);

		assertThat(d.size()).isEqualTo(blocks);
		assertThat(d.owner(new long[] { gone[0] })).isNull();
		assertThat(d.owner(new long[] { gone[blocks - 1] })).isNull();
		assertThat(d.owner(new long[] { kept[blocks - 1] })).isEqualTo("kept");
		assertThat(d.forget("gone")).isZero();
		assertThat(d.forget("never")).isZero();
	}

	@Test
	void forgettingKeepsTheHeadOfAChainThatWentElsewhereLast() {
		PrefixDirectory d = new PrefixDirectory(100);
		d.record(new long[] { 1, 2, 3, 4 }, "a");
		d.record(new long[] { 1, 2 }, "b");
		d.forget("a");
		assertThat(d.size()).isEqualTo(2);
		assertThat(d.owner(new long[] { 1, 2, 3, 4 })).isEqualTo("b");
		// The room the forgotten blocks took goes to new records, not to evicting b's.
		d.capacity(4);
		d.record(new long[] { 7, 8 }, "c");
		assertThat(d.owner(new long[] { 1, 2 })).isEqualTo("b");
		assertThat(d.owner(new long[] { 7, 8 })).isEqualTo("c");
	}

	@Test
	void aChainLongerThanOneLockHoldIsRecordedTailFirstAsAWhole() {
		int blocks = PrefixDirectory.RECORD_CHUNK * 2 + 22;
		long[] chain = new long[blocks];
		for (int i = 0; i < blocks; i++) {
			chain[i] = 1_000 + i;
		}
		PrefixDirectory d = new PrefixDirectory(100);
		d.record(chain, "a");
		// The bound kept the head: the 100 blocks recorded last.
		assertThat(d.size()).isEqualTo(100);
		assertThat(d.owner(chain)).isEqualTo("a");
		assertThat(d.owner(new long[] { chain[99] })).isEqualTo("a");
		assertThat(d.owner(new long[] { chain[100] })).isNull();
	}

	@Test
	void aChainOneBlockLongerThanALockHoldIsRecordedDownToItsHead() {
		// The last hold writes block 0 alone.
		long[] chain = new long[PrefixDirectory.RECORD_CHUNK + 1];
		for (int i = 0; i < chain.length; i++) {
			chain[i] = 5_000 + i;
		}
		PrefixDirectory d = new PrefixDirectory(1_000);
		d.record(chain, "a");
		assertThat(d.size()).isEqualTo(chain.length);
		assertThat(d.owner(new long[] { chain[0] })).isEqualTo("a");
		assertThat(d.owner(chain)).isEqualTo("a");
	}

	@Test
	void readingAndSettingTheBoundLetOtherThreadsRecordAfterwards() throws Exception {
		PrefixDirectory d = new PrefixDirectory(100);
		d.capacity(50);
		assertThat(d.capacity()).isEqualTo(50);
		d.record(new long[] { 7 }, "a");
		assertThat(d.forget("a")).isOne();
		ExecutorService other = Executors.newSingleThreadExecutor();
		try {
			// All three calls let go of their locks: a record on another thread goes
			// through.
			other.submit(() -> d.record(new long[] { 1, 2, 3 }, "b")).get(5, TimeUnit.SECONDS);
		}
		finally {
			other.shutdownNow();
		}
		assertThat(d.owner(new long[] { 1, 2, 3 })).isEqualTo("b");
	}

	@Test
	void concurrentRecordsAndLookupsStayWithinTheBound() throws Exception {
		PrefixDirectory d = new PrefixDirectory(500);
		int threads = 4;
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int seed = t;
				done.add(pool.submit(() -> {
					SplittableRandom random = new SplittableRandom(seed);
					for (int n = 0; n < 2_000; n++) {
						long[] chain = new long[1 + random.nextInt(300)];
						long h = random.nextInt(50);
						for (int i = 0; i < chain.length; i++) {
							h = h * 31 + (i < 3 ? 0 : random.nextInt(1_000));
							chain[i] = h;
						}
						if (random.nextBoolean()) {
							d.record(chain, "i" + seed);
						}
						else {
							String owner = d.owner(chain);
							assertThat(owner == null || owner.startsWith("i")).isTrue();
						}
					}
					return null;
				}));
			}
			for (Future<?> f : done) {
				f.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(d.size()).isLessThanOrEqualTo(500);
	}

	/**
	 * Chained block hashes (each covers the blocks before it), random conversations
	 * extending each other, a small bound: bisection finds what walking the chain block
	 * by block finds.
	 */
	@Property(tries = 300)
	void bisectionAgreesWithAWalkOverChainedHashes(
			@ForAll @Size(min = 1, max = 60) List<@IntRange(min = 0, max = 999) Integer> steps,
			@ForAll @IntRange(min = 1, max = 40) int capacity) {
		PrefixDirectory d = new PrefixDirectory(capacity);
		List<long[]> chains = new ArrayList<>();
		for (int step : steps) {
			long[] chain;
			if (chains.isEmpty() || step % 3 == 0) {
				chain = chained(null, step, 1 + step % 5);
			}
			else {
				long[] base = chains.get(step % chains.size());
				chain = chained(base, step, 1 + step % 4);
			}
			chains.add(chain);
			String owner = d.owner(chain);
			assertThat(owner).isEqualTo(walk(d, chain));
			d.record(chain, "i" + step % 4);
		}
		for (long[] chain : chains) {
			assertThat(d.owner(chain)).isEqualTo(walk(d, chain));
		}
	}

	/**
	 * A sample jqwik found (seed 5313511628961479691): with a linear recurrence for the
	 * blocks, two different prefixes reached the same block hash (steps 28 and 183), so
	 * the generated chains were not chained and the property failed by chance.
	 */
	@Test
	void bisectionAgreesWithAWalkOnASampleThatOnceCollided() {
		bisectionAgreesWithAWalkOverChainedHashes(
				List.of(188, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 28, 183), 2);
	}

	/**
	 * {@code base} (a prefix of some length by {@code seed}) plus {@code more} blocks.
	 */
	private static long[] chained(long[] base, int seed, int more) {
		int keep = base == null ? 0 : 1 + seed % base.length;
		long[] chain = new long[keep + more];
		long h = 17;
		for (int i = 0; i < chain.length; i++) {
			// Hashed with the previous block's hash as seed, as PrefixHasher does: a
			// linear recurrence here let different prefixes meet at one hash.
			h = i < keep ? base[i] : LongHashFunction.xx3(h).hashLong(seed * 1_000_003L + i);
			chain[i] = h;
		}
		return chain;
	}

	/** The owner found by walking the chain from its head while blocks are known. */
	private static String walk(PrefixDirectory d, long[] chain) {
		String owner = null;
		for (long block : chain) {
			String o = d.owner(new long[] { block });
			if (o == null) {
				break;
			}
			owner = o;
		}
		return owner;
	}

}

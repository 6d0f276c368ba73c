package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class LongLruMapTests {

	@Test
	void evictsTheLeastRecentlyUsedWhenANewKeyPassesTheBound() {
		LongLruMap<String> m = new LongLruMap<>(3);
		m.put(1, "a");
		m.put(2, "b");
		m.put(3, "c");
		assertThat(m.touch(1)).isTrue();
		m.put(4, "d");
		assertThat(m.containsKey(2)).isFalse();
		assertThat(m.newest(10)).containsExactly(4, 1, 3);
		// A present key takes its new value and becomes the newest, evicting nothing.
		m.put(3, "c2");
		assertThat(m.size()).isEqualTo(3);
		assertThat(m.get(3)).isEqualTo("c2");
		assertThat(m.newest(2)).containsExactly(3, 4);
		// Reads do not reorder.
		assertThat(m.get(1)).isEqualTo("a");
		assertThat(m.containsKey(1)).isTrue();
		assertThat(m.newest(10)).containsExactly(3, 4, 1);
		assertThat(m.touch(99)).isFalse();
		assertThat(m.get(99)).isNull();
	}

	@Test
	void shrinkingEvictsEldestFirstAndGrowingKeepsEverything() {
		LongLruMap<Boolean> m = new LongLruMap<>(100);
		for (long k = 0; k < 100; k++) {
			m.put(k, Boolean.TRUE);
		}
		m.capacity(10);
		assertThat(m.size()).isEqualTo(10);
		assertThat(m.newest(100)).containsExactly(99, 98, 97, 96, 95, 94, 93, 92, 91, 90);
		m.capacity(1000);
		for (long k = 1000; k < 1500; k++) {
			m.put(k, Boolean.TRUE);
		}
		assertThat(m.size()).isEqualTo(510);
		assertThat(m.containsKey(90)).isTrue();
		m.clear();
		assertThat(m.size()).isZero();
		assertThat(m.newest(5)).isEmpty();
		m.put(7, Boolean.TRUE);
		assertThat(m.newest(5)).containsExactly(7);
	}

	@Test
	void keysThatCollideInTheTableSurviveRemovalsAroundThem() {
		// Multiples of a large power of two share low bits before mixing; many share a
		// probe run after it too in a small table. Evicting some must not lose others.
		LongLruMap<Long> m = new LongLruMap<>(64);
		for (long i = 0; i < 1000; i++) {
			m.put(i << 32, i);
		}
		for (long i = 1000 - 64; i < 1000; i++) {
			assertThat(m.get(i << 32)).isEqualTo(i);
		}
		assertThat(m.containsKey(0)).isFalse();
	}

	@Test
	void removingValuesKeepsTheOthersInTheirOrderAndTheirEntryNumbers() {
		LongLruMap<String> m = new LongLruMap<>(8);
		for (long k = 0; k < 8; k++) {
			m.put(k, k % 2 == 0 ? "even" : "odd");
		}
		m.touch(2);
		assertThat(m.entrySpan()).isEqualTo(8);
		// A slice beyond the entries handed out, and an empty one, remove nothing.
		assertThat(m.removeValues("odd"::equals, 8, 100)).isZero();
		assertThat(m.removeValues("odd"::equals, 0, 0)).isZero();
		assertThat(m.removeValues("odd"::equals, 0, 4)).isEqualTo(2);
		assertThat(m.newest(10)).containsExactly(2, 7, 6, 5, 4, 0);
		assertThat(m.removeValues("odd"::equals, 4, Integer.MAX_VALUE)).isEqualTo(2);
		assertThat(m.newest(10)).containsExactly(2, 6, 4, 0);
		assertThat(m.size()).isEqualTo(4);
		// Freed entries are reused before new ones are handed out, and nothing evicts
		// until the bound is reached again.
		for (long k = 10; k < 14; k++) {
			m.put(k, "new");
		}
		assertThat(m.entrySpan()).isEqualTo(8);
		assertThat(m.newest(10)).containsExactly(13, 12, 11, 10, 2, 6, 4, 0);
		assertThat(m.get(1)).isNull();
		assertThat(m.get(6)).isEqualTo("even");
	}

	@Test
	void rejectsABoundBelowOneAndNullValues() {
		assertThatIllegalArgumentException().isThrownBy(() -> new LongLruMap<>(0));
		LongLruMap<String> m = new LongLruMap<>(1);
		assertThatIllegalArgumentException().isThrownBy(() -> m.capacity(-1));
		assertThatIllegalArgumentException().isThrownBy(() -> m.put(1, null));
	}

	/**
	 * Any sequence of operations leaves the same entries in the same order as a
	 * {@code LinkedHashMap} in insertion order whose puts and touches re-insert and whose
	 * bound evicts the eldest after a new key is added (what the shadow indexes and the
	 * prefix directory used before).
	 */
	@Property(tries = 400)
	void behavesAsALinkedHashMapWithRemoveEldestEntry(@ForAll long seed, @ForAll @IntRange(min = 1, max = 40) int bound,
			@ForAll @IntRange(min = 1, max = 120) int keySpace) {
		SplittableRandom random = new SplittableRandom(seed);
		LongLruMap<Integer> actual = new LongLruMap<>(bound);
		Reference expected = new Reference(bound);
		for (int step = 0; step < 2000; step++) {
			// Keys spread over the whole long range but drawn from a small set, so they
			// repeat: mostly small, sometimes huge or negative.
			long key = random.nextInt(keySpace) * (random.nextBoolean() ? 1L : 0x9E3779B97F4A7C15L);
			int op = random.nextInt(100);
			if (op < 45) {
				int value = random.nextInt(1000);
				actual.put(key, value);
				expected.put(key, value);
			}
			else if (op < 70) {
				assertThat(actual.touch(key)).isEqualTo(expected.touch(key));
			}
			else if (op < 85) {
				assertThat(actual.get(key)).isEqualTo(expected.map.get(key));
				assertThat(actual.containsKey(key)).isEqualTo(expected.map.containsKey(key));
			}
			else if (op < 95) {
				int max = random.nextInt(bound + 5);
				assertThat(actual.newest(max)).containsExactly(expected.newest(max));
			}
			else if (op < 97) {
				int c = 1 + random.nextInt(2 * bound);
				actual.capacity(c);
				expected.capacity(c);
			}
			else if (op < 99) {
				// Every value with a given remainder, scanned in slices of any size.
				int mod = 2 + random.nextInt(3);
				int rem = random.nextInt(mod);
				int slice = 1 + random.nextInt(bound + 2);
				int before = actual.size();
				int removed = 0;
				for (int from = 0; from < actual.entrySpan(); from += slice) {
					removed += actual.removeValues(v -> v % mod == rem, from, slice);
				}
				expected.map.values().removeIf(v -> v % mod == rem);
				assertThat(removed).isEqualTo(before - expected.map.size());
			}
			else {
				actual.clear();
				expected.map.clear();
			}
			assertThat(actual.size()).isEqualTo(expected.map.size());
		}
		assertThat(actual.newest(Integer.MAX_VALUE)).containsExactly(expected.newest(Integer.MAX_VALUE));
	}

	private static final class Reference {

		private int bound;

		final LinkedHashMap<Long, Integer> map = new LinkedHashMap<>(16, 0.75f, false) {
			@Override
			protected boolean removeEldestEntry(Map.Entry<Long, Integer> eldest) {
				return size() > Reference.this.bound;
			}
		};

		Reference(int bound) {
			this.bound = bound;
		}

		void put(long key, int value) {
			if (this.map.containsKey(key)) {
				this.map.remove(key);
				// Re-inserting a present key must not evict: lift the bound for it.
				int b = this.bound;
				this.bound = Integer.MAX_VALUE;
				this.map.put(key, value);
				this.bound = b;
			}
			else {
				this.map.put(key, value);
			}
		}

		boolean touch(long key) {
			Integer v = this.map.remove(key);
			if (v == null) {
				return false;
			}
			put(key, v);
			return true;
		}

		void capacity(int c) {
			this.bound = c;
			var it = this.map.entrySet().iterator();
			while (this.map.size() > c) {
				it.next();
				it.remove();
			}
		}

		long[] newest(int max) {
			List<Long> keys = new ArrayList<>(this.map.keySet());
			int n = Math.max(0, Math.min(max, keys.size()));
			long[] out = new long[n];
			for (int i = 0; i < n; i++) {
				out[i] = keys.get(keys.size() - 1 - i);
			}
			return out;
		}

	}

}

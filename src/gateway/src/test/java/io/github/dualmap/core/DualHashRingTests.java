package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.within;

class DualHashRingTests {

	private static final int KEYS = 100_000;

	private static List<RingMember> members(int n) {
		List<RingMember> list = new ArrayList<>();
		for (int i = 0; i < n; i++) {
			list.add(new RingMember("inst-" + i, 1.0));
		}
		return list;
	}

	private static long[] keys(long seed) {
		Random random = new Random(seed);
		long[] keys = new long[KEYS];
		for (int i = 0; i < KEYS; i++) {
			keys[i] = random.nextLong();
		}
		return keys;
	}

	private static String home(DualHashRing ring, int r, long key) {
		return ring.walk(r, key, id -> true);
	}

	@Test
	void eachInstanceGetsAFairShareOnBothRings() {
		DualHashRing ring = DualHashRing.of(members(8), 160);
		long[] keys = keys(1);
		for (int r = 0; r < 2; r++) {
			Map<String, Integer> counts = new HashMap<>();
			for (long k : keys) {
				counts.merge(home(ring, r, k), 1, Integer::sum);
			}
			assertThat(counts).hasSize(8);
			double fair = KEYS / 8.0;
			for (var e : counts.entrySet()) {
				assertThat((double) e.getValue()).as("share of %s on ring %d", e.getKey(), r)
					.isBetween(0.75 * fair, 1.25 * fair);
			}
		}
	}

	@ParameterizedTest
	@ValueSource(ints = { 8, 16, 32 })
	void addingOneInstanceMovesAboutOneNthOfKeysPerRingAndRarelyBothHomes(int n) {
		DualHashRing before = DualHashRing.of(members(n), 160);
		DualHashRing after = DualHashRing.of(members(n + 1), 160);
		long[] keys = keys(n);
		int[] moved = new int[2];
		int lostBothHomes = 0;
		for (long k : keys) {
			boolean[] movedHere = new boolean[2];
			for (int r = 0; r < 2; r++) {
				movedHere[r] = !home(before, r, k).equals(home(after, r, k));
				if (movedHere[r]) {
					moved[r]++;
				}
			}
			if (movedHere[0] && movedHere[1]) {
				lostBothHomes++;
			}
			// Both homes moving means both moved to the new instance; the second
			// candidate
			// then falls back to the old ring-2 home, so one warm candidate always stays.
			Candidates c0 = before.candidates(k);
			Candidates c1 = after.candidates(k);
			assertThat(Set.of(c0.first(), c0.second())).containsAnyOf(c1.first(), c1.second());
		}
		for (int r = 0; r < 2; r++) {
			assertThat((double) moved[r] / KEYS).as("moved on ring %d", r).isBetween(0.5 / n, 1.6 / n);
		}
		assertThat((double) lostBothHomes / KEYS).as("lost both homes").isBetween(0.3 / (n * n), 2.0 / (n * n));
	}

	@ParameterizedTest
	@ValueSource(ints = { 8, 16, 32 })
	void removingOneInstanceMovesOnlyItsKeys(int n) {
		DualHashRing before = DualHashRing.of(members(n), 160);
		List<RingMember> fewer = members(n);
		RingMember removed = fewer.remove(n / 2);
		DualHashRing after = DualHashRing.of(fewer, 160);
		long[] keys = keys(100 + n);
		for (int r = 0; r < 2; r++) {
			int moved = 0;
			for (long k : keys) {
				String was = home(before, r, k);
				String is = home(after, r, k);
				if (!was.equals(is)) {
					moved++;
					assertThat(was).isEqualTo(removed.id());
				}
			}
			assertThat((double) moved / KEYS).as("moved on ring %d", r).isBetween(0.5 / n, 1.6 / n);
		}
	}

	@Test
	void discoveryOrderDoesNotMatter() {
		List<RingMember> list = members(12);
		DualHashRing reference = DualHashRing.of(list, 160);
		Random random = new Random(7);
		for (int round = 0; round < 5; round++) {
			List<RingMember> shuffled = new ArrayList<>(list);
			Collections.shuffle(shuffled, random);
			DualHashRing ring = DualHashRing.of(shuffled, 160);
			for (long k : keys(round)) {
				assertThat(ring.candidates(k)).isEqualTo(reference.candidates(k));
			}
		}
	}

	@Test
	void aDoubleWeightInstanceGetsAboutTwiceTheShare() {
		List<RingMember> list = members(4);
		list.add(new RingMember("big", 2.0));
		DualHashRing ring = DualHashRing.of(list, 160);
		assertThat(ring.virtualNodesOf("big")).isEqualTo(320);
		for (int r = 0; r < 2; r++) {
			Map<String, Integer> counts = new HashMap<>();
			for (long k : keys(3)) {
				counts.merge(home(ring, r, k), 1, Integer::sum);
			}
			double others = (KEYS - counts.get("big")) / 4.0;
			assertThat(counts.get("big") / others).as("ratio on ring %d", r).isBetween(1.6, 2.4);
		}
	}

	@ParameterizedTest
	@ValueSource(ints = { 2, 3, 5 })
	void theTwoCandidatesDifferWithTwoOrMoreInstances(int n) {
		DualHashRing ring = DualHashRing.of(members(n), 160);
		for (long k : keys(n)) {
			Candidates c = ring.candidates(k);
			assertThat(c.first()).isNotEqualTo(c.second());
		}
	}

	@Test
	void aSingleInstanceIsBothCandidates() {
		DualHashRing ring = DualHashRing.of(members(1), 160);
		assertThat(ring.candidates(42)).isEqualTo(new Candidates("inst-0", "inst-0"));
	}

	@Test
	void walkVisitsEachInstanceOnce() {
		DualHashRing ring = DualHashRing.of(members(10), 160);
		for (int r = 0; r < 2; r++) {
			List<String> visited = new ArrayList<>();
			assertThat(ring.walk(r, 99, id -> !visited.add(id))).isNull();
			assertThat(visited).hasSize(10).doesNotHaveDuplicates();
			assertThat(new HashSet<>(visited))
				.containsExactlyInAnyOrderElementsOf(members(10).stream().map(RingMember::id).toList());
		}
	}

	@Test
	void aWalkStopsAtTheFirstInstanceTakenHoweverLongItGoes() {
		// Short walks end in the first steps, long ones visit every instance: both find
		// each instance once, in the same order.
		for (int n : new int[] { 2, 3, 64 }) {
			DualHashRing ring = DualHashRing.of(members(n), 160);
			for (int r = 0; r < 2; r++) {
				List<String> order = new ArrayList<>();
				assertThat(ring.walk(r, 7, id -> !order.add(id))).isNull();
				assertThat(order).hasSize(n).doesNotHaveDuplicates();
				for (int k = 0; k < n; k++) {
					String wanted = order.get(k);
					List<String> seen = new ArrayList<>();
					assertThat(ring.walk(r, 7, id -> seen.add(id) && id.equals(wanted))).isEqualTo(wanted);
					assertThat(seen).isEqualTo(order.subList(0, k + 1));
					List<String> fromStart = new ArrayList<>();
					assertThat(ring.walkFrom(r, ring.walkStart(r, 7), id -> fromStart.add(id) && id.equals(wanted)))
						.as("from the start walkStart gives")
						.isEqualTo(wanted);
					assertThat(fromStart).isEqualTo(seen);
				}
			}
		}
	}

	@Test
	void theLargestWeightBuildsAllItsVirtualNodes() {
		DualHashRing ring = DualHashRing
			.of(List.of(new RingMember("big", RingMember.MAX_WEIGHT), new RingMember("small", 1)), 160);
		assertThat(ring.virtualNodesOf("big")).isEqualTo(160 * (int) RingMember.MAX_WEIGHT);
		assertThat(ring.virtualNodesOf("small")).isEqualTo(160);
	}

	@ParameterizedTest
	@ValueSource(doubles = { 100.5, 20_000, 2e7, 1e300, Double.POSITIVE_INFINITY })
	void aWeightAboveTheMaximumIsRejected(double weight) {
		assertThatIllegalArgumentException().isThrownBy(() -> new RingMember("a", weight))
			.withMessageContaining("'a'")
			.withMessageContaining("100");
	}

	/**
	 * Virtual nodes times weight beyond what an int holds once gave every such instance
	 * one virtual node: the counts are scaled down to the ring's bound instead, keeping
	 * the instances' proportions. (Counted without building: a ring at the bound takes
	 * seconds.)
	 */
	@Test
	void nodeCountsBeyondTheBoundAreScaledDownAndNeverCollapseToOne() {
		int[] counts = DualHashRing.nodeCounts(List.of(new RingMember("a", RingMember.MAX_WEIGHT),
				new RingMember("b", RingMember.MAX_WEIGHT / 2), new RingMember("c", 1e-9)), Integer.MAX_VALUE);
		assertThat(counts[0] + counts[1] + counts[2]).isBetween(DualHashRing.MAX_RING_NODES - 2,
				DualHashRing.MAX_RING_NODES + 1);
		assertThat((double) counts[0] / counts[1]).isCloseTo(2.0, within(0.001));
		assertThat(counts[2]).isOne();
		// Below the bound every instance gets exactly virtual nodes x weight.
		assertThat(DualHashRing.nodeCounts(List.of(new RingMember("a", RingMember.MAX_WEIGHT), new RingMember("b", 0.5),
				new RingMember("c", 1e-9)), 160))
			.containsExactly(16_000, 80, 1);
	}

	@Test
	void badInputIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> DualHashRing.of(members(2), 0))
			.withMessageContaining("virtualNodes");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> DualHashRing.of(List.of(new RingMember("a", 1), new RingMember("a", 2)), 10))
			.withMessageContaining("'a'");
		assertThatIllegalArgumentException().isThrownBy(() -> DualHashRing.of(members(2), 10).walk(2, 1, id -> true))
			.withMessageContaining("2");
		assertThatIllegalStateException().isThrownBy(() -> DualHashRing.empty().candidates(1));
		assertThat(DualHashRing.empty().walk(0, 1, id -> true)).isNull();
	}

	@Test
	void aWalkMeetsTheMembersInTheOrderOfTheirStepsFromItsStart() {
		List<RingMember> members = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			members.add(new RingMember("m" + i, 1 + i % 3));
		}
		DualHashRing ring = DualHashRing.of(members, 16);
		Random random = new Random(3);
		for (int k = 0; k < 200; k++) {
			int r = k % 2;
			int start = ring.walkStart(r, random.nextLong());
			List<String> met = new ArrayList<>();
			ring.walkFrom(r, start, id -> !met.add(id));
			List<String> bySteps = new ArrayList<>(members.stream().map(RingMember::id).toList());
			bySteps.sort((a, b) -> Integer.compare(ring.stepsTo(r, start, a), ring.stepsTo(r, start, b)));
			assertThat(met).isEqualTo(bySteps);
		}
		assertThat(ring.stepsTo(0, 0, "not-a-member")).isEqualTo(Integer.MAX_VALUE);
	}

}

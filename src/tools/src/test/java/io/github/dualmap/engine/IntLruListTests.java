package io.github.dualmap.engine;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link IntLruList}: least recently added first, O(1) removal anywhere, growth. */
class IntLruListTests {

	@Test
	void idsComeOutLeastRecentlyAddedFirstAndARemovedIdLeavesItsPlace() {
		IntLruList list = new IntLruList(4);
		assertThat(list.first()).isEqualTo(IntLruList.NONE);
		for (int id : new int[] { 3, 0, 2, 1 }) {
			list.addLast(id);
		}
		list.remove(2);
		list.addLast(2);
		list.remove(3);
		assertThat(drain(list)).containsExactly(0, 1, 2);
		assertThat(list.size()).isZero();
		assertThat(list.first()).isEqualTo(IntLruList.NONE);
	}

	@Test
	void removingTheOnlyTheFirstOrTheLastIdKeepsBothEndsRight() {
		IntLruList list = new IntLruList(1);
		list.addLast(0);
		list.remove(0);
		assertThat(list.first()).isEqualTo(IntLruList.NONE);
		for (int id = 0; id < 4; id++) {
			list.addLast(id);
		}
		list.remove(3);
		list.remove(0);
		list.addLast(0);
		assertThat(drain(list)).containsExactly(1, 2, 0);
	}

	@Test
	void growsForIdsBeyondItsInitialCapacity() {
		IntLruList list = new IntLruList(2);
		list.addLast(1_000);
		list.addLast(1);
		assertThat(list.contains(1_000)).isTrue();
		assertThat(list.contains(999)).isFalse();
		assertThat(list.contains(5_000)).isFalse();
		assertThat(drain(list)).containsExactly(1_000, 1);
	}

	@Test
	void refusesAnIdTwiceANegativeIdAndRemovingOneNotListed() {
		IntLruList list = new IntLruList(4);
		list.addLast(1);
		assertThatThrownBy(() -> list.addLast(1)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("already listed");
		assertThatThrownBy(() -> list.addLast(-1)).isInstanceOf(IllegalArgumentException.class);
		assertThatThrownBy(() -> list.remove(2)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("not listed");
		assertThat(list.size()).isEqualTo(1);
	}

	private static List<Integer> drain(IntLruList list) {
		List<Integer> out = new ArrayList<>();
		while (list.first() != IntLruList.NONE) {
			out.add(list.first());
			list.remove(list.first());
		}
		return out;
	}

}

package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.function.ToLongFunction;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ResumingPass}: a pass from an element wraps around to those before it, the next
 * pass starts after where the last one stopped.
 */
class ResumingPassTests {

	private static final ToLongFunction<Long> ORDINAL = Long::longValue;

	/** Every element a pass from {@code from} meets, in order. */
	private static List<Long> pass(TreeSet<Long> set, Long from, long end) {
		List<Long> met = new ArrayList<>();
		for (Long e = ResumingPass.firstFrom(set, from, end, ORDINAL); e != null; e = ResumingPass.nextFrom(set, e,
				from, end, ORDINAL)) {
			met.add(e);
		}
		return met;
	}

	@Test
	void aPassFromAnElementMeetsTheRestBelowTheEndThenWrapsAroundToThoseBeforeIt() {
		TreeSet<Long> set = new TreeSet<>(List.of(1L, 3L, 5L, 7L, 9L));

		assertThat(pass(set, null, 100)).containsExactly(1L, 3L, 5L, 7L, 9L);
		assertThat(pass(set, 5L, 100)).containsExactly(5L, 7L, 9L, 1L, 3L);
		// A start that left the set: from the next after it.
		assertThat(pass(set, 4L, 100)).containsExactly(5L, 7L, 9L, 1L, 3L);
		// Elements from the end on joined after the pass began: never met.
		assertThat(pass(set, 5L, 8)).containsExactly(5L, 7L, 1L, 3L);
		assertThat(pass(set, 9L, 8)).containsExactly(1L, 3L, 5L, 7L);
		assertThat(pass(new TreeSet<>(), 5L, 100)).isEmpty();
	}

	@Test
	void theNextPassStartsAfterWhereTheLastStoppedWrappingAround() {
		TreeSet<Long> set = new TreeSet<>(List.of(1L, 3L, 5L));

		assertThat(ResumingPass.after(set, 1L, 100, ORDINAL)).isEqualTo(3L);
		assertThat(ResumingPass.after(set, 5L, 100, ORDINAL)).isEqualTo(1L);
		// It stopped at one that has since left the set.
		assertThat(ResumingPass.after(set, 4L, 100, ORDINAL)).isEqualTo(5L);
		assertThat(ResumingPass.after(set, 3L, 5, ORDINAL)).isEqualTo(1L);
		// The only one: itself.
		assertThat(ResumingPass.after(new TreeSet<>(List.of(3L)), 3L, 100, ORDINAL)).isEqualTo(3L);
		assertThat(ResumingPass.after(new TreeSet<>(), 3L, 100, ORDINAL)).isNull();
	}

	@Test
	void anElementThatJoinsBeforeTheStartDuringThePassIsMetAfterTheWrap() {
		TreeSet<Long> set = new TreeSet<>(List.of(1L, 5L, 7L));
		List<Long> met = new ArrayList<>();
		for (Long e = ResumingPass.firstFrom(set, 5L, 100, ORDINAL); e != null; e = ResumingPass.nextFrom(set, e, 5L,
				100, ORDINAL)) {
			met.add(e);
			if (e == 7L) {
				set.add(3L);
				set.remove(1L);
			}
		}

		assertThat(met).containsExactly(5L, 7L, 3L);
	}

	@Test
	void aStoppedPassLeavesTheNextToBeginAfterItsElementAndAFinishedOneFromTheFirst() {
		TreeSet<Long> set = new TreeSet<>(List.of(1L, 3L, 5L));
		ResumingPass<Long> pass = new ResumingPass<>(set, ORDINAL);

		assertThat(pass.begin(100)).isEqualTo(1L);
		assertThat(pass.next(1L)).isEqualTo(3L);
		pass.stopAt(3L);

		assertThat(pass.begin(100)).isEqualTo(5L);
		assertThat(pass.next(5L)).isEqualTo(1L);
		assertThat(pass.next(1L)).isEqualTo(3L);
		assertThat(pass.next(3L)).isNull();

		assertThat(pass.begin(100)).isEqualTo(1L);
	}

}

package io.github.dualmap.core;

import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SharedPrefixTreeTests {

	private static final long SECOND = 1_000_000_000L;

	private final SharedPrefixTree tree = new SharedPrefixTree(4, 10 * SECOND);

	@Test
	void aChainMatchesOnlyOnTheInstanceItWasRecordedFor() {
		tree.record("a", new long[] { 1, 2, 3 }, 0);
		assertThat(tree.matchedBlocks("a", new long[] { 1, 2, 9 })).isEqualTo(2);
		assertThat(tree.matchedBlocks("b", new long[] { 1, 2, 3 })).isZero();
		tree.record("b", new long[] { 1 }, 0);
		assertThat(tree.matchedBlocks("b", new long[] { 1, 2, 3 })).isEqualTo(1);
		assertThat(tree.blocks("a")).isEqualTo(3);
		assertThat(tree.blocks("b")).isEqualTo(1);
		assertThat(tree.size()).isEqualTo(4);
	}

	@Test
	void aPassTrimsTheLeastRecentlyUsedBlocksOfAnyInstanceTailsFirst() {
		tree.record("a", new long[] { 1, 2, 3 }, 0);
		tree.record("b", new long[] { 4, 5, 6 }, SECOND);
		// Recording a's chain again makes it the most recently used.
		tree.record("a", new long[] { 1, 2, 3 }, 2 * SECOND);
		assertThat(tree.size()).isEqualTo(6);
		// Not yet due: 9.9 s after the first record.
		tree.record("a", new long[] { 1 }, 9 * SECOND + SECOND / 10);
		assertThat(tree.size()).isEqualTo(6);
		tree.record("c", new long[] { 7 }, 10 * SECOND);
		// Trimmed to 4 before c's block came: b's tail (6, 5) went first, its head stays.
		assertThat(tree.blocks("b")).isEqualTo(1);
		assertThat(tree.matchedBlocks("b", new long[] { 4, 5, 6 })).isEqualTo(1);
		assertThat(tree.blocks("a")).isEqualTo(3);
		assertThat(tree.blocks("c")).isEqualTo(1);
		assertThat(tree.size()).isEqualTo(5);
	}

	@Test
	void passesKeepTheirScheduleAfterAQuietSpell() {
		tree.record("a", new long[] { 1, 2, 3, 4, 5 }, 0);
		// 35 s later: the passes due at 10, 20 and 30 s collapse into one; the next is at
		// 40.
		tree.record("b", new long[] { 6 }, 35 * SECOND);
		assertThat(tree.size()).isEqualTo(5);
		tree.record("b", new long[] { 7, 8 }, 39 * SECOND);
		assertThat(tree.size()).isEqualTo(7);
		tree.record("b", new long[] { 9 }, 40 * SECOND);
		assertThat(tree.size()).isEqualTo(5);
	}

	@Test
	void aRemovedInstanceLeavesNothingBehind() {
		tree.record("a", new long[] { 1, 2 }, 0);
		tree.record("b", new long[] { 1, 2 }, 0);
		tree.retain(Set.of("b"));
		assertThat(tree.blocks("a")).isZero();
		assertThat(tree.matchedBlocks("a", new long[] { 1, 2 })).isZero();
		assertThat(tree.matchedBlocks("b", new long[] { 1, 2 })).isEqualTo(2);
		assertThat(tree.size()).isEqualTo(2);
	}

	@Test
	void refusesNonPositiveBounds() {
		assertThatIllegalArgumentException().isThrownBy(() -> new SharedPrefixTree(0, SECOND));
		assertThatIllegalArgumentException().isThrownBy(() -> new SharedPrefixTree(1, 0));
	}

}

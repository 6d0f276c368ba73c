package io.github.dualmap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ShadowKvIndexTests {

	@Test
	void longestChainPrefixIsTheHit() {
		ShadowKvIndex index = new ShadowKvIndex(100);
		index.record(new long[] { 1, 2, 3 });
		assertThat(index.peekMatchedBlocks(new long[] { 1, 2, 3, 4 })).isEqualTo(3);
		assertThat(index.peekMatchedBlocks(new long[] { 1, 2, 9 })).isEqualTo(2);
		// A deeper block without its head is no hit: the prefix must match from the root.
		assertThat(index.peekMatchedBlocks(new long[] { 9, 2, 3 })).isZero();
		assertThat(index.matchedBlocks(new long[] { 1, 2 })).isEqualTo(2);
	}

	@Test
	void lruEvictsTheLeastRecentlyUsedChainTailFirst() {
		ShadowKvIndex index = new ShadowKvIndex(4);
		index.record(new long[] { 1, 2, 3 });
		index.record(new long[] { 10, 11 });
		// Over capacity by one: the tail of the older chain goes, its head stays useful.
		assertThat(index.size()).isEqualTo(4);
		assertThat(index.peekMatchedBlocks(new long[] { 1, 2, 3 })).isEqualTo(2);
		assertThat(index.peekMatchedBlocks(new long[] { 10, 11 })).isEqualTo(2);
	}

	@Test
	void matchingTouchesButPeekingDoesNot() {
		ShadowKvIndex touched = new ShadowKvIndex(3);
		touched.record(new long[] { 1 });
		touched.record(new long[] { 2 });
		touched.record(new long[] { 3 });
		touched.matchedBlocks(new long[] { 1 });
		touched.record(new long[] { 4 });
		assertThat(touched.peekMatchedBlocks(new long[] { 1 })).isEqualTo(1);
		assertThat(touched.peekMatchedBlocks(new long[] { 2 })).isZero();

		ShadowKvIndex peeked = new ShadowKvIndex(3);
		peeked.record(new long[] { 1 });
		peeked.record(new long[] { 2 });
		peeked.record(new long[] { 3 });
		peeked.peekMatchedBlocks(new long[] { 1 });
		peeked.record(new long[] { 4 });
		assertThat(peeked.peekMatchedBlocks(new long[] { 1 })).isZero();
	}

	@Test
	void recentBlocksRecordedElsewhereReproduceTheLruOrder() {
		ShadowKvIndex source = new ShadowKvIndex(100);
		source.record(new long[] { 1, 2, 3 });
		source.record(new long[] { 7, 8 });
		source.matchedBlocks(new long[] { 1 });
		// Most recent first: 1 was touched last, then 7 (head of the last record), 8, ...
		assertThat(source.recent(10)).containsExactly(1, 7, 8, 2, 3);
		assertThat(source.recent(2)).containsExactly(1, 7);
		assertThat(source.recent(0)).isEmpty();

		// A copy of capacity 3 keeps the three most recent, and evicts as the source
		// would.
		ShadowKvIndex copy = new ShadowKvIndex(3);
		copy.record(source.recent(10));
		assertThat(copy.recent(10)).containsExactly(1, 7, 8);
		copy.record(new long[] { 9 });
		assertThat(copy.recent(10)).containsExactly(9, 1, 7);
	}

	@Test
	void resizeEvictsDownAndRejectsNonsense() {
		ShadowKvIndex index = new ShadowKvIndex(10);
		index.record(new long[] { 1, 2, 3, 4, 5, 6 });
		index.resize(3);
		assertThat(index.size()).isEqualTo(3);
		assertThat(index.capacityBlocks()).isEqualTo(3);
		assertThat(index.peekMatchedBlocks(new long[] { 1, 2, 3, 4 })).isEqualTo(3);
		assertThatIllegalArgumentException().isThrownBy(() -> index.resize(0)).withMessageContaining("0");
		assertThatIllegalArgumentException().isThrownBy(() -> new ShadowKvIndex(-2)).withMessageContaining("-2");
		index.clear();
		assertThat(index.size()).isZero();
	}

	@Test
	void evictsTheTailOfAPrefixBeforeItsHead() {
		ShadowKvIndex index = new ShadowKvIndex(3);
		index.record(new long[] { 1, 2, 3 });
		index.record(new long[] { 9 });
		assertThat(index.peekMatchedBlocks(new long[] { 1, 2, 3 })).isEqualTo(2);
		assertThat(index.size()).isEqualTo(3);
	}

	@Test
	void aMatchKeepsTheMatchedHeadYoungest() {
		ShadowKvIndex index = new ShadowKvIndex(4);
		index.record(new long[] { 1, 2 });
		index.record(new long[] { 5, 6 });
		index.matchedBlocks(new long[] { 1, 2 });
		index.record(new long[] { 7 });
		assertThat(index.peekMatchedBlocks(new long[] { 5, 6 })).isEqualTo(1);
		assertThat(index.peekMatchedBlocks(new long[] { 1, 2 })).isEqualTo(2);
	}

}

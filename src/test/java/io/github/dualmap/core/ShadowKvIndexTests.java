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

}

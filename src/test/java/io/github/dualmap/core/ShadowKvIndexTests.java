package io.github.dualmap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ShadowKvIndexTests {

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

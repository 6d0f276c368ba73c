package io.github.dualmap.engine;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class KvBlockCacheTests {

	@Test
	void freedTailBlocksAreEvictedBeforeTheirPrefix() {
		KvBlockCache cache = new KvBlockCache(4);
		int[] blocks = { cache.allocate(), cache.allocate(), cache.allocate() };
		long[] chain = { 11, 12, 13 };
		for (int i = 0; i < 3; i++) {
			cache.register(blocks[i], chain[i]);
		}
		cache.release(blocks, 3);
		assertThat(cache.cachedPrefix(chain, 3)).isEqualTo(3);
		// the never-used block goes first, then the request's tail
		cache.allocate();
		cache.allocate();
		assertThat(cache.cachedPrefix(chain, 3)).isEqualTo(2);
		assertThat(cache.evictions()).isEqualTo(1);
		cache.allocate();
		assertThat(cache.cachedPrefix(chain, 3)).isEqualTo(1);
	}

	@Test
	void touchingACachedBlockTakesItOutOfTheFreeQueue() {
		KvBlockCache cache = new KvBlockCache(2);
		int[] a = { cache.allocate() };
		cache.register(a[0], 99);
		cache.release(a, 1);
		assertThat(cache.freeBlocks()).isEqualTo(2);
		int again = cache.touch(99);
		assertThat(again).isEqualTo(a[0]);
		assertThat(cache.freeBlocks()).isEqualTo(1);
		cache.allocate();
		assertThat(cache.allocate()).isEqualTo(-1);
		assertThat(cache.cachedPrefix(new long[] { 99 }, 1)).isEqualTo(1);
	}

	@Test
	void indexSurvivesManyInsertsAndRemovals() {
		BlockHashIndex index = new BlockHashIndex(1000);
		for (int i = 0; i < 1000; i++) {
			assertThat(index.putIfAbsent(i * 7919L, i)).isTrue();
		}
		for (int i = 0; i < 1000; i += 2) {
			index.remove(i * 7919L);
		}
		for (int i = 0; i < 1000; i++) {
			assertThat(index.get(i * 7919L)).isEqualTo(i % 2 == 0 ? -1 : i);
		}
		assertThat(index.size()).isEqualTo(500);
	}

}

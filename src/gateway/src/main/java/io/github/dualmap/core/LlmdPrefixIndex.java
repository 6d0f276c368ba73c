package io.github.dualmap.core;

import java.util.Arrays;

/**
 * llm-d's approximate prefix producer ({@code approx-prefix-cache-producer}): per
 * instance, an LRU index of the prompt blocks this router sent there, updated after the
 * pick (the producer's {@code PreRequest}); a match runs from the first block of the
 * considered prefix and stops at the first block the index does not hold. At most
 * {@code maxPrefixTokens} of a prompt are considered. Each index holds
 * {@code indexCapacityTokens} until the engine's KV capacity is scraped, then that
 * capacity (the producer's {@code autoTune}).
 */
final class LlmdPrefixIndex {

	private final int maxPrefixTokens;

	private final int blockTokens;

	private final PerInstance<ShadowKvIndex> indexes;

	/**
	 * @param blockTokens tokens per block of the prompt chains this index sees, > 0
	 * @param maxPrefixTokens prompt tokens considered, > 0 ({@link Integer#MAX_VALUE}:
	 * the whole prompt)
	 * @param indexCapacityTokens tokens per instance until the engine's capacity is
	 * known, > 0
	 */
	LlmdPrefixIndex(int blockTokens, int maxPrefixTokens, long indexCapacityTokens) {
		if (blockTokens <= 0) {
			throw new IllegalArgumentException("blockTokens must be > 0 but was " + blockTokens);
		}
		if (maxPrefixTokens <= 0) {
			throw new IllegalArgumentException("maxPrefixTokens must be > 0 but was " + maxPrefixTokens);
		}
		if (indexCapacityTokens <= 0) {
			throw new IllegalArgumentException("indexCapacityTokens must be > 0 but was " + indexCapacityTokens);
		}
		this.maxPrefixTokens = maxPrefixTokens;
		this.blockTokens = blockTokens;
		int indexCapacityBlocks = capacityBlocks(indexCapacityTokens, blockTokens);
		this.indexes = new PerInstance<>(() -> new ShadowKvIndex(indexCapacityBlocks));
	}

	/**
	 * The blocks of {@code blocks} a match considers: at most the first maxPrefixTokens.
	 */
	long[] considered(PromptBlocks blocks) {
		int max = Math.max(1, maxPrefixTokens / blocks.blockTokens());
		return blocks.depth() <= max ? blocks.chain() : Arrays.copyOf(blocks.chain(), max);
	}

	/**
	 * Blocks of {@code considered} the index of {@code instanceId} holds, from the first.
	 */
	int matched(String instanceId, long[] considered) {
		return considered.length == 0 ? 0 : indexes.get(instanceId).peekMatchedBlocks(considered);
	}

	/** Whether no accepting instance's index holds a block of {@code considered}. */
	boolean cold(long[] considered, InstancePool pool) {
		for (InstanceState s : pool.acceptingInstances()) {
			if (matched(s.id(), considered) > 0) {
				return false;
			}
		}
		return true;
	}

	/**
	 * {@code considered} enters the index of {@code s}, sized to the engine's scraped KV
	 * capacity when known.
	 */
	void record(InstanceState s, long[] considered, InstancePool pool) {
		ShadowKvIndex index = indexes.get(s.id());
		EngineSnapshot e = s.freshEngine(pool.now(), pool.settings().staleAfterNanos());
		if (e != null && e.kvCapacityTokens() > 0) {
			index.resize(capacityBlocks(e.kvCapacityTokens(), blockTokens));
		}
		index.record(considered);
	}

	/** A removed instance's index goes with it. */
	void retainMembers(InstancePool pool) {
		indexes.retainMembers(pool);
	}

	/** Blocks held in the index of {@code instanceId} (0 for an unknown instance). */
	int size(String instanceId) {
		ShadowKvIndex index = indexes.find(instanceId);
		return index == null ? 0 : index.size();
	}

	private static int capacityBlocks(long tokens, int blockTokens) {
		return (int) Math.max(1, Math.min(Integer.MAX_VALUE, tokens / blockTokens));
	}

}

package io.github.dualmap.core;

import java.util.Arrays;

/**
 * A prompt cut into blocks, each identified by a chained 64-bit hash: equal hash at index
 * {@code k} means equal first {@code k + 1} blocks (and equal model). The last block may
 * be partial.
 *
 * @param chain chained block hashes, never empty
 * @param blockTokens estimated tokens per full block
 * @param promptTokens estimated tokens of the whole prompt
 */
public record PromptBlocks(long[] chain, int blockTokens, int promptTokens) {

	public PromptBlocks {
		if (chain.length == 0) {
			throw new IllegalArgumentException("chain must not be empty");
		}
		if (blockTokens <= 0) {
			throw new IllegalArgumentException("blockTokens must be > 0 but was " + blockTokens);
		}
		if (promptTokens < 0) {
			throw new IllegalArgumentException("promptTokens must be >= 0 but was " + promptTokens);
		}
	}

	public int depth() {
		return chain.length;
	}

	/**
	 * Chain hash of the first {@code depth} blocks (1-based depth, clamped to the chain).
	 */
	public long keyAt(int depth) {
		int d = Math.max(1, Math.min(depth, chain.length));
		return chain[d - 1];
	}

	/**
	 * Tokens covered by the first {@code blocks} blocks, capped at prompt length minus
	 * one.
	 */
	public int tokensFor(int blocks) {
		long t = (long) blocks * blockTokens;
		return (int) Math.max(0, Math.min(t, promptTokens - 1L));
	}

	@Override
	public boolean equals(Object o) {
		return o instanceof PromptBlocks p && p.blockTokens == blockTokens && p.promptTokens == promptTokens
				&& Arrays.equals(p.chain, chain);
	}

	@Override
	public int hashCode() {
		return 31 * Arrays.hashCode(chain) + blockTokens * 17 + promptTokens;
	}

	@Override
	public String toString() {
		return "PromptBlocks[depth=" + chain.length + ", blockTokens=" + blockTokens + ", promptTokens=" + promptTokens
				+ "]";
	}

}

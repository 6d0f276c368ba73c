package io.github.dualmap.core;

import net.openhft.hashing.LongHashFunction;

/**
 * Cuts a prompt into blocks and gives each block a chained 64-bit xxHash3: block
 * {@code i} is hashed with the hash of block {@code i - 1} as seed, and the model name
 * seeds the chain, so equal hashes at depth k mean equal model and equal first k blocks.
 * Immutable and thread-safe.
 */
public final class PrefixHasher {

	private final int blockChars;

	private final double charsPerToken;

	private final int blockTokens;

	public PrefixHasher(int blockChars, double charsPerToken, int blockTokens) {
		if (blockChars <= 0) {
			throw new IllegalArgumentException("blockChars must be > 0 but was " + blockChars);
		}
		if (!(charsPerToken > 0) || Double.isInfinite(charsPerToken)) {
			throw new IllegalArgumentException("charsPerToken must be > 0 but was " + charsPerToken);
		}
		if (blockTokens <= 0) {
			throw new IllegalArgumentException("blockTokens must be > 0 but was " + blockTokens);
		}
		this.blockChars = blockChars;
		this.charsPerToken = charsPerToken;
		this.blockTokens = blockTokens;
	}

	/** 256 characters per block, 4 characters per token, 64 tokens per id block. */
	public static PrefixHasher ofDefaults() {
		return new PrefixHasher(256, 4.0, 64);
	}

	private static long seed(String model) {
		return LongHashFunction.xx3().hashChars(model);
	}

	/** Blocks of {@code blockChars} characters of canonical prompt text. */
	public PromptBlocks ofText(String model, CharSequence text) {
		// One String for the whole prompt; blocks are hashed as views into it.
		String chars = text.toString();
		int n = Math.max(1, (chars.length() + blockChars - 1) / blockChars);
		long[] chain = new long[n];
		long h = seed(model);
		for (int i = 0; i < n; i++) {
			int from = i * blockChars;
			int len = Math.min(blockChars, chars.length() - from);
			h = LongHashFunction.xx3(h).hashChars(chars, from, Math.max(0, len));
			chain[i] = h;
		}
		int promptTokens = (int) Math.ceil(chars.length() / charsPerToken);
		int perBlock = Math.max(1, (int) Math.round(blockChars / charsPerToken));
		return new PromptBlocks(chain, perBlock, promptTokens);
	}

	/** Blocks of {@code blockTokens} token ids. */
	public PromptBlocks ofTokens(String model, int[] tokenIds) {
		int n = Math.max(1, (tokenIds.length + blockTokens - 1) / blockTokens);
		long[] chain = new long[n];
		long h = seed(model);
		for (int i = 0; i < n; i++) {
			int from = i * blockTokens;
			int len = Math.min(blockTokens, tokenIds.length - from);
			h = LongHashFunction.xx3(h).hashInts(tokenIds, from, Math.max(0, len));
			chain[i] = h;
		}
		return new PromptBlocks(chain, blockTokens, tokenIds.length);
	}

	/** One block per pre-hashed id (trace formats), chained like any other block. */
	public PromptBlocks ofHashIds(String model, long[] hashIds, int tokensPerId, int promptTokens) {
		int n = Math.max(1, hashIds.length);
		long[] chain = new long[n];
		long h = seed(model);
		for (int i = 0; i < n; i++) {
			h = hashIds.length == 0 ? LongHashFunction.xx3(h).hashVoid() : LongHashFunction.xx3(h).hashLong(hashIds[i]);
			chain[i] = h;
		}
		return new PromptBlocks(chain, tokensPerId, promptTokens);
	}

}

package io.github.dualmap.core;

import net.openhft.hashing.LongHashFunction;

/**
 * Cuts a prompt into blocks and gives each block a chained 64-bit xxHash3: block
 * {@code i} is hashed with the hash of block {@code i - 1} as seed, and the chain starts
 * from the hash of the model name, so equal hash at depth {@code k} means equal model and
 * equal first {@code k} blocks. Stateless and thread-safe; any two routers with the same
 * parameters compute the same chain.
 */
public final class PrefixHasher {

	/** Default characters per text block. */
	public static final int DEFAULT_BLOCK_CHARS = 256;

	/** Default characters per token when only text is known. */
	public static final double DEFAULT_CHARS_PER_TOKEN = 4.0;

	/** Default token ids per block when the prompt is an id array. */
	public static final int DEFAULT_BLOCK_TOKENS = 64;

	private static final LongHashFunction MODEL_HASH = LongHashFunction.xx3();

	private final int blockChars;

	private final double charsPerToken;

	private final int blockTokens;

	private final int textBlockTokens;

	public PrefixHasher(int blockChars, double charsPerToken, int blockTokens) {
		if (blockChars <= 0) {
			throw new IllegalArgumentException("blockChars must be > 0 but was " + blockChars);
		}
		if (!(charsPerToken > 0) || Double.isInfinite(charsPerToken)) {
			throw new IllegalArgumentException("charsPerToken must be > 0 and finite but was " + charsPerToken);
		}
		if (blockTokens <= 0) {
			throw new IllegalArgumentException("blockTokens must be > 0 but was " + blockTokens);
		}
		long rounded = Math.round(blockChars / charsPerToken);
		if (rounded < 1 || rounded > Integer.MAX_VALUE) {
			throw new IllegalArgumentException("blockChars / charsPerToken must round to a token count in [1, "
					+ Integer.MAX_VALUE + "] but blockChars=" + blockChars + " and charsPerToken=" + charsPerToken
					+ " give " + rounded);
		}
		this.blockChars = blockChars;
		this.charsPerToken = charsPerToken;
		this.blockTokens = blockTokens;
		this.textBlockTokens = (int) rounded;
	}

	/** A hasher with 256-character text blocks, 4 characters per token, 64-id blocks. */
	public static PrefixHasher ofDefaults() {
		return new PrefixHasher(DEFAULT_BLOCK_CHARS, DEFAULT_CHARS_PER_TOKEN, DEFAULT_BLOCK_TOKENS);
	}

	/**
	 * Blocks of {@code blockChars} characters of canonical prompt text (the last one may
	 * be partial); token counts are estimated from {@code charsPerToken}.
	 */
	public PromptBlocks ofText(String model, CharSequence canonicalText) {
		int chars = canonicalText.length();
		long[] chain = new long[blocksFor(chars, blockChars)];
		long seed = MODEL_HASH.hashChars(model);
		// The library hashes a String or StringBuilder range in place: one conversion at
		// most for other CharSequences, never a String per block.
		if (canonicalText instanceof StringBuilder sb) {
			for (int i = 0; i < chain.length; i++) {
				int off = i * blockChars;
				seed = LongHashFunction.xx3(seed).hashChars(sb, off, Math.min(blockChars, chars - off));
				chain[i] = seed;
			}
		}
		else {
			String text = canonicalText.toString();
			for (int i = 0; i < chain.length; i++) {
				int off = i * blockChars;
				seed = LongHashFunction.xx3(seed).hashChars(text, off, Math.min(blockChars, chars - off));
				chain[i] = seed;
			}
		}
		long tokens = (long) Math.ceil(chars / charsPerToken);
		return new PromptBlocks(chain, textBlockTokens, (int) Math.min(Integer.MAX_VALUE, tokens));
	}

	/** Blocks of {@code blockTokens} token ids (the last one may be partial). */
	public PromptBlocks ofTokens(String model, int[] tokenIds) {
		int n = tokenIds.length;
		long[] chain = new long[blocksFor(n, blockTokens)];
		long seed = MODEL_HASH.hashChars(model);
		for (int i = 0; i < chain.length; i++) {
			int off = i * blockTokens;
			seed = LongHashFunction.xx3(seed).hashInts(tokenIds, off, Math.min(blockTokens, n - off));
			chain[i] = seed;
		}
		return new PromptBlocks(chain, blockTokens, n);
	}

	/**
	 * One block per pre-hashed id, as in traces that publish block ids instead of text
	 * (Mooncake {@code hash_ids}, 512 tokens each). The ids are chained too, so two
	 * prompts share a key only when they share every id up to it.
	 * @param tokensPerId tokens one id stands for
	 * @param promptTokens the prompt's length in tokens
	 */
	public PromptBlocks ofHashIds(String model, long[] hashIds, int tokensPerId, int promptTokens) {
		if (tokensPerId <= 0) {
			throw new IllegalArgumentException("tokensPerId must be > 0 but was " + tokensPerId);
		}
		if (promptTokens < 0) {
			throw new IllegalArgumentException("promptTokens must be >= 0 but was " + promptTokens);
		}
		long seed = MODEL_HASH.hashChars(model);
		if (hashIds.length == 0) {
			return new PromptBlocks(new long[] { emptyBlock(seed) }, tokensPerId, promptTokens);
		}
		long[] chain = new long[hashIds.length];
		for (int i = 0; i < chain.length; i++) {
			seed = LongHashFunction.xx3(seed).hashLong(hashIds[i]);
			chain[i] = seed;
		}
		return new PromptBlocks(chain, tokensPerId, promptTokens);
	}

	// An empty prompt is one empty block, so the chain is never empty and empty prompts
	// of one model share a key.
	private static long emptyBlock(long seed) {
		return LongHashFunction.xx3(seed).hashChars("");
	}

	private static int blocksFor(int length, int perBlock) {
		return (int) Math.max(1, ((long) length + perBlock - 1) / perBlock);
	}

	public int blockChars() {
		return blockChars;
	}

	public double charsPerToken() {
		return charsPerToken;
	}

	public int blockTokens() {
		return blockTokens;
	}

	/** Estimated tokens of one full text block. */
	public int textBlockTokens() {
		return textBlockTokens;
	}

}

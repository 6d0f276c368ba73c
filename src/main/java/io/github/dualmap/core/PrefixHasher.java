package io.github.dualmap.core;

import java.nio.charset.StandardCharsets;

import net.openhft.hashing.LongHashFunction;

/**
 * Cuts a prompt into fixed-size blocks and chains their xxHash3 hashes, seeded by the
 * model, so equal hash at depth {@code k} means same model and equal first {@code k}
 * blocks. The last partial block is included; an empty prompt is one (empty) block.
 */
public final class PrefixHasher {

	private static final LongHashFunction MODEL_HASH = LongHashFunction.xx3();

	private final int blockChars;

	private final double charsPerToken;

	private final int blockTokens;

	public PrefixHasher(int blockChars, double charsPerToken, int blockTokens) {
		if (blockChars <= 0) {
			throw new IllegalArgumentException("blockChars must be > 0 but was " + blockChars);
		}
		if (!(charsPerToken > 0) || Double.isInfinite(charsPerToken)) {
			throw new IllegalArgumentException("charsPerToken must be a positive number but was " + charsPerToken);
		}
		if (blockTokens <= 0) {
			throw new IllegalArgumentException("blockTokens must be > 0 but was " + blockTokens);
		}
		this.blockChars = blockChars;
		this.charsPerToken = charsPerToken;
		this.blockTokens = blockTokens;
	}

	/** 256 characters per text block, 4 characters per token, 64 ids per token block. */
	public static PrefixHasher ofDefaults() {
		return new PrefixHasher(256, 4.0, 64);
	}

	/** Blocks of {@code blockChars} characters of canonical prompt text. */
	public PromptBlocks ofText(String model, CharSequence canonicalText) {
		int len = canonicalText.length();
		int blocks = Math.max(1, (len + blockChars - 1) / blockChars);
		long[] chain = new long[blocks];
		long parent = seed(model);
		for (int i = 0; i < blocks; i++) {
			int from = i * blockChars;
			int to = Math.min(len, from + blockChars);
			parent = LongHashFunction.xx3(parent).hashChars(canonicalText.subSequence(from, to).toString());
			chain[i] = parent;
		}
		int textBlockTokens = Math.max(1, (int) Math.round(blockChars / charsPerToken));
		int promptTokens = (int) Math.ceil(len / charsPerToken);
		return new PromptBlocks(chain, textBlockTokens, promptTokens);
	}

	/** Blocks of {@code blockTokens} token ids. */
	public PromptBlocks ofTokens(String model, int[] tokenIds) {
		int len = tokenIds.length;
		int blocks = Math.max(1, (len + blockTokens - 1) / blockTokens);
		long[] chain = new long[blocks];
		long parent = seed(model);
		for (int i = 0; i < blocks; i++) {
			int from = i * blockTokens;
			int to = Math.min(len, from + blockTokens);
			parent = LongHashFunction.xx3(parent).hashInts(tokenIds, from, to - from);
			chain[i] = parent;
		}
		return new PromptBlocks(chain, blockTokens, len);
	}

	/**
	 * Chains trace hash ids (one id per {@code tokensPerId} tokens, equal id means equal
	 * prefix up to there).
	 */
	public PromptBlocks ofHashIds(String model, long[] hashIds, int tokensPerId, int promptTokens) {
		if (tokensPerId <= 0) {
			throw new IllegalArgumentException("tokensPerId must be > 0 but was " + tokensPerId);
		}
		long[] chain = new long[Math.max(1, hashIds.length)];
		long parent = seed(model);
		if (hashIds.length == 0) {
			chain[0] = LongHashFunction.xx3(parent).hashVoid();
		}
		for (int i = 0; i < hashIds.length; i++) {
			parent = LongHashFunction.xx3(parent).hashLong(hashIds[i]);
			chain[i] = parent;
		}
		return new PromptBlocks(chain, tokensPerId, promptTokens);
	}

	private static long seed(String model) {
		return MODEL_HASH.hashBytes(model.getBytes(StandardCharsets.UTF_8));
	}

}

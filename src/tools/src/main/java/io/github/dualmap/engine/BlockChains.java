package io.github.dualmap.engine;

import net.openhft.hashing.LongHashFunction;
import org.jspecify.annotations.Nullable;

/**
 * Chained hashes of full KV blocks, computed once per request: the hash of block
 * {@code i} covers the hash of block {@code i - 1} and the block's own tokens, so equal
 * hashes at {@code i} mean equal first {@code i + 1} blocks. Only full blocks get a hash
 * (vLLM caches only full blocks).
 */
public final class BlockChains {

	private static final LongHashFunction HASH = LongHashFunction.xx3(0x5DEECE66DL);

	private BlockChains() {
	}

	/** Chain of the full {@code blockTokens}-token blocks of {@code tokens}. */
	public static long[] ofTokens(int[] tokens, int blockTokens) {
		return ofTokens(tokens, blockTokens, null);
	}

	/**
	 * Chain of the full {@code blockTokens}-token blocks of {@code tokens} under vLLM's
	 * {@code cache_salt}: the salt enters the first block's hash (as in vLLM), so equal
	 * prompts with different salts share no block. {@code null}: no salt.
	 */
	public static long[] ofTokens(int[] tokens, int blockTokens, @Nullable String cacheSalt) {
		if (blockTokens <= 0) {
			throw new IllegalArgumentException("blockTokens must be > 0 but was " + blockTokens);
		}
		int blocks = tokens.length / blockTokens;
		long[] chain = new long[blocks];
		// Parent hash (two ints) followed by the block's tokens: one scratch buffer per
		// call, no allocation per block.
		int[] scratch = new int[blockTokens + 2];
		long parent = cacheSalt == null ? 0 : HASH.hashChars(cacheSalt);
		for (int b = 0; b < blocks; b++) {
			scratch[0] = (int) parent;
			scratch[1] = (int) (parent >>> 32);
			System.arraycopy(tokens, b * blockTokens, scratch, 2, blockTokens);
			parent = HASH.hashInts(scratch);
			chain[b] = parent;
		}
		return chain;
	}

	/** The next chain hash after {@code parent} for a block identified by two values. */
	static long next(long parent, long a, long b) {
		return HASH.hashLong(parent ^ HASH.hashLong(a * 0x9E3779B97F4A7C15L + b));
	}

}

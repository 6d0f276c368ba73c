package io.github.dualmap.engine;

/**
 * Turns a trace's {@code hash_ids} (one id per block of {@code traceBlockTokens} tokens,
 * equal id at position {@code k} meaning equal prompt up to there, as in the Mooncake
 * trace) into the engine's chain of {@code engineBlockTokens}-token block hashes.
 * Deterministic: equal hash-id prefixes expand to equal chain prefixes.
 */
public final class HashIdExpander {

	/** Block size of the Mooncake traces. */
	public static final int MOONCAKE_BLOCK_TOKENS = 512;

	private final int traceBlockTokens;

	private final int engineBlockTokens;

	public HashIdExpander(int traceBlockTokens, int engineBlockTokens) {
		if (engineBlockTokens <= 0 || traceBlockTokens <= 0 || traceBlockTokens % engineBlockTokens != 0) {
			throw new IllegalArgumentException("traceBlockTokens (" + traceBlockTokens
					+ ") must be a positive multiple of engineBlockTokens (" + engineBlockTokens + ")");
		}
		this.traceBlockTokens = traceBlockTokens;
		this.engineBlockTokens = engineBlockTokens;
	}

	/**
	 * The chain of full engine blocks of a prompt of {@code promptTokens} tokens
	 * described by {@code hashIds}. The last trace block may be partial; its full engine
	 * blocks are kept.
	 * @throws IllegalArgumentException when the ids do not cover the prompt
	 */
	public long[] expand(long[] hashIds, int promptTokens) {
		if (promptTokens < 0) {
			throw new IllegalArgumentException("promptTokens must be >= 0 but was " + promptTokens);
		}
		if ((long) hashIds.length * traceBlockTokens < promptTokens) {
			throw new IllegalArgumentException(hashIds.length + " hash ids of " + traceBlockTokens
					+ " tokens do not describe a prompt of " + promptTokens + " tokens");
		}
		int blocks = promptTokens / engineBlockTokens;
		int perId = traceBlockTokens / engineBlockTokens;
		long[] chain = new long[blocks];
		long parent = 0;
		for (int b = 0; b < blocks; b++) {
			parent = BlockChains.next(parent, hashIds[b / perId], b % perId);
			chain[b] = parent;
		}
		return chain;
	}

}

package io.github.dualmap.core;

/**
 * Prefill work in the two units its cost grows with: uncached tokens, and attention pairs
 * (query token x context token). A request of {@code u} uncached tokens behind {@code k}
 * cached ones computes {@code u} tokens and {@code u*(k + u/2)} pairs; a backlog is the
 * sum over its requests, so its cost under any coefficients is exact.
 *
 * @param tokens uncached tokens
 * @param pairs attention pairs of those tokens
 */
public record PrefillWork(long tokens, long pairs) {

	/** No work. */
	public static final PrefillWork NONE = new PrefillWork(0, 0);

	/**
	 * The work of a request with {@code cached} tokens cached and {@code uncached} not.
	 */
	public static PrefillWork of(long cached, long uncached) {
		long u = Math.max(0, uncached);
		return new PrefillWork(u, pairs(cached, u));
	}

	/**
	 * Attention pairs of {@code uncached} tokens behind {@code cached}:
	 * {@code u*(k + u/2)}.
	 */
	public static long pairs(long cached, long uncached) {
		long u = Math.max(0, uncached);
		long k = Math.max(0, cached);
		return u * k + u * u / 2;
	}

	/** This work without {@code other}, never below zero in either unit. */
	public PrefillWork minus(PrefillWork other) {
		return new PrefillWork(Math.max(0, tokens - other.tokens), Math.max(0, pairs - other.pairs));
	}

}

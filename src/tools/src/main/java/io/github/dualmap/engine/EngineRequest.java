package io.github.dualmap.engine;

/**
 * One generation request as the engine sees it.
 *
 * @param id unique id
 * @param blockHashes chained hashes of the prompt's full KV blocks (see
 * {@link BlockChains}, {@link HashIdExpander})
 * @param promptTokens prompt length in tokens
 * @param maxOutputTokens tokens to generate (the emulator never stops early)
 */
public record EngineRequest(String id, long[] blockHashes, int promptTokens, int maxOutputTokens) {

	public EngineRequest {
		if (promptTokens <= 0) {
			throw new IllegalArgumentException("promptTokens must be > 0 but was " + promptTokens);
		}
		if (maxOutputTokens <= 0) {
			throw new IllegalArgumentException("maxOutputTokens must be > 0 but was " + maxOutputTokens);
		}
	}

	/** A request for {@code tokens}, hashed into {@code blockTokens}-token blocks. */
	public static EngineRequest ofTokens(String id, int[] tokens, int maxOutputTokens, int blockTokens) {
		return new EngineRequest(id, BlockChains.ofTokens(tokens, blockTokens), tokens.length, maxOutputTokens);
	}

	/** A request from a trace line: {@code hashIds} expanded by {@code expander}. */
	public static EngineRequest ofHashIds(String id, long[] hashIds, int promptTokens, int maxOutputTokens,
			HashIdExpander expander) {
		return new EngineRequest(id, expander.expand(hashIds, promptTokens), promptTokens, maxOutputTokens);
	}

	@Override
	public boolean equals(Object o) {
		return o instanceof EngineRequest r && r.id.equals(id);
	}

	@Override
	public int hashCode() {
		return id.hashCode();
	}

	@Override
	public String toString() {
		return "EngineRequest[" + id + ", prompt=" + promptTokens + ", maxOutput=" + maxOutputTokens + "]";
	}

}

package io.github.dualmap.engine;

/**
 * Read-only view of a request inside the engine, as reported by a {@link StepResult}.
 * Views are live: read them before the next {@link Engine#step(long)}.
 */
public interface RequestProgress {

	EngineRequest request();

	default String id() {
		return request().id();
	}

	/** When the request was submitted, on the engine's time line. */
	long arrivalNanos();

	/** Prompt tokens found in the prefix cache when the request was (last) admitted. */
	int cachedTokens();

	/** Tokens generated so far. */
	int outputTokens();

	/** When the first token was produced, -1 before. */
	long firstTokenNanos();

	/** Whether all requested tokens have been generated. */
	boolean finished();

}

package io.github.dualmap.sim.trace;

/**
 * One request of a workload trace.
 *
 * @param timestampMillis arrival time in milliseconds since the trace's start
 * @param inputTokens prompt length in tokens
 * @param outputTokens tokens to generate
 * @param hashIds prefix block ids over blocks of the trace's block size: an equal id at
 * index {@code k} means equal first {@code k + 1} blocks; {@code ceil(inputTokens /
 * blockTokens)} of them
 * @param session the conversation the request belongs to, where the workload records one
 * (the synthetic sessions do; trace files do not): requests with the same session are
 * turns of one conversation; {@link #NO_SESSION} where none is recorded
 */
public record TraceRequest(double timestampMillis, int inputTokens, int outputTokens, long[] hashIds, long session) {

	/** {@link #session()} of a request whose workload records no conversation. */
	public static final long NO_SESSION = -1;

	public TraceRequest {
		if (!(timestampMillis >= 0) || Double.isInfinite(timestampMillis)) {
			throw new IllegalArgumentException("timestampMillis must be >= 0 but was " + timestampMillis);
		}
		if (inputTokens <= 0) {
			throw new IllegalArgumentException("inputTokens must be > 0 but was " + inputTokens);
		}
		if (outputTokens <= 0) {
			throw new IllegalArgumentException("outputTokens must be > 0 but was " + outputTokens);
		}
		if (hashIds.length == 0) {
			throw new IllegalArgumentException("hashIds must not be empty");
		}
		if (session < NO_SESSION) {
			throw new IllegalArgumentException("session must be >= 0, or NO_SESSION, but was " + session);
		}
	}

	/** A request whose workload records no conversation. */
	public TraceRequest(double timestampMillis, int inputTokens, int outputTokens, long[] hashIds) {
		this(timestampMillis, inputTokens, outputTokens, hashIds, NO_SESSION);
	}

}

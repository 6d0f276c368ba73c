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
 */
public record TraceRequest(double timestampMillis, int inputTokens, int outputTokens, long[] hashIds) {

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
	}

}

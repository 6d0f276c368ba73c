package io.github.dualmap.engine;

import java.util.List;

/**
 * One engine iteration: when it ran and what happened at its end.
 *
 * @param startNanos when the step started
 * @param endNanos when it ended; its events happen then
 * @param prefillTokens prompt (or recompute) tokens processed
 * @param decodeSeqs sequences that decoded one token
 * @param emitted requests that produced a token at the end of the step (a first token
 * when {@code outputTokens() == 1})
 * @param finished requests that produced their last token (also in {@code emitted})
 * @param preempted requests preempted (moved back to waiting, KV dropped)
 */
public record StepResult(long startNanos, long endNanos, int prefillTokens, int decodeSeqs,
		List<RequestProgress> emitted, List<RequestProgress> finished, List<RequestProgress> preempted) {

	public long durationNanos() {
		return endNanos - startNanos;
	}

}

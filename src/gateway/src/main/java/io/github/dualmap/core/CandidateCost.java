package io.github.dualmap.core;

import org.jspecify.annotations.Nullable;

/**
 * What sending one request to one instance would cost, as the router believes it: the
 * prefix expected cached there by the time the request is prefilled, the tokens left to
 * prefill and the TTFT estimate. {@code rank} is the estimate the choice compares, which
 * slow start may inflate; {@code estimate} is the unscaled one reported in the decision.
 * {@code cachedNow} is the part of the prefix the shadow index holds now; it differs from
 * {@code cachedTokens} only when the queues count the prompts they hold there
 * ({@link QueueSettings#countQueuedPrefixes()}), and it is what the decision carries: the
 * queues order, account and move a request by what is cached, and a prompt still queued
 * is not cached yet.
 */
record CandidateCost(InstanceState instance, int cachedTokens, int uncachedTokens, long estimate, long rank,
		int cachedNow) {

	/**
	 * The placement of {@code blocks} (null: unparsed body, nothing cached) on {@code s}.
	 */
	static CandidateCost of(InstancePool pool, InstanceState s, @Nullable PromptBlocks blocks) {
		int cached = 0;
		int cachedNow = 0;
		int prompt = 0;
		if (blocks != null) {
			int matched = s.shadow().peekMatchedBlocks(blocks.chain());
			cachedNow = blocks.tokensFor(matched);
			cached = blocks.tokensFor(Math.max(matched, s.queuedPrefixes().matchedBlocks(blocks.chain())));
			prompt = blocks.promptTokens();
		}
		int uncached = prompt - cached;
		long estimate = pool.estimateTtft(s, cached, uncached);
		return new CandidateCost(s, cached, uncached, estimate, estimate, cachedNow);
	}

	CandidateCost withRank(long rank) {
		return new CandidateCost(instance, cachedTokens, uncachedTokens, estimate, rank, cachedNow);
	}

	String id() {
		return instance.id();
	}

	Decision decide(Reason reason) {
		return decision(reason, estimate);
	}

	/** A decision of a policy without a TTFT model: cache belief for accounting only. */
	Decision decideWithoutModel(Reason reason) {
		return decision(reason, -1);
	}

	// The prompt the shadow index does not hold now is what the decision counts uncached.
	private Decision decision(Reason reason, long estimate) {
		return new Decision(instance.id(), reason, cachedNow, uncachedTokens + cachedTokens - cachedNow, estimate);
	}

}

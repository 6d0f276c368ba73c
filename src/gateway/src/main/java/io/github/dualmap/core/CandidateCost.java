package io.github.dualmap.core;

import org.jspecify.annotations.Nullable;

/**
 * What sending one request to one instance would cost, as the router believes it: the
 * prefix the shadow index expects cached there, the tokens left to prefill and the TTFT
 * estimate. {@code rank} is the estimate the choice compares, which slow start may
 * inflate; {@code estimate} is the unscaled one reported in the decision.
 */
record CandidateCost(InstanceState instance, int cachedTokens, int uncachedTokens, long estimate, long rank) {

	/**
	 * The placement of {@code blocks} (null: unparsed body, nothing cached) on {@code s}.
	 */
	static CandidateCost of(InstancePool pool, InstanceState s, @Nullable PromptBlocks blocks) {
		int cached = 0;
		int prompt = 0;
		if (blocks != null) {
			cached = blocks.tokensFor(s.shadow().peekMatchedBlocks(blocks.chain()));
			prompt = blocks.promptTokens();
		}
		int uncached = prompt - cached;
		long estimate = pool.estimateTtft(s, cached, uncached);
		return new CandidateCost(s, cached, uncached, estimate, estimate);
	}

	CandidateCost withRank(long rank) {
		return new CandidateCost(instance, cachedTokens, uncachedTokens, estimate, rank);
	}

	String id() {
		return instance.id();
	}

	Decision decide(Reason reason) {
		return new Decision(instance.id(), reason, cachedTokens, uncachedTokens, estimate);
	}

	/** A decision of a policy without a TTFT model: cache belief for accounting only. */
	Decision decideWithoutModel(Reason reason) {
		return new Decision(instance.id(), reason, cachedTokens, uncachedTokens, -1);
	}

}

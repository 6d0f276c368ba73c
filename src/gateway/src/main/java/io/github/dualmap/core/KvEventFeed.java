package io.github.dualmap.core;

import org.jspecify.annotations.Nullable;

/**
 * What a router that listens to the engines' KV events has besides the events: the index
 * they feed, its own hashing of a request's prompt into the engine's blocks (Dynamo and
 * llm-d tokenize the prompt and hash it with the engine's block size and hash function),
 * and the engines' per-step token budget ({@code max_num_batched_tokens}, published by
 * every engine with its model card).
 *
 * @param index blocks each instance holds, from the events
 * @param engineBlocks the chained hashes of a request's full prompt blocks at the
 * engine's block size, or {@code null} when the body was not parsed
 * @param blockTokens tokens per engine block, > 0
 * @param maxBatchedTokens the engines' {@code max_num_batched_tokens}, > 0
 */
public record KvEventFeed(KvEventIndex index, EngineBlocks engineBlocks, int blockTokens, int maxBatchedTokens) {

	public KvEventFeed {
		if (blockTokens <= 0) {
			throw new IllegalArgumentException("blockTokens must be > 0 but was " + blockTokens);
		}
		if (maxBatchedTokens <= 0) {
			throw new IllegalArgumentException("maxBatchedTokens must be > 0 but was " + maxBatchedTokens);
		}
	}

	/**
	 * The decision for {@code request} on {@code instanceId}, whose engine holds
	 * {@code overlapBlocks} of the prompt's blocks from the first: that many blocks'
	 * tokens cached (at most the prompt), the rest to prefill; none cached for a body
	 * that was not parsed.
	 */
	public Decision decision(String instanceId, Reason reason, int overlapBlocks, RoutingRequest request) {
		if (request.blocks() == null) {
			return Decision.of(instanceId, reason, request);
		}
		int promptTokens = request.promptTokens();
		int cached = (int) Math.min(promptTokens, (long) overlapBlocks * blockTokens);
		return new Decision(instanceId, reason, cached, promptTokens - cached, -1);
	}

	/** The router's hashing of a request's prompt into engine blocks. */
	@FunctionalInterface
	public interface EngineBlocks {

		long @Nullable [] of(RoutingRequest request);

	}

	/**
	 * A policy that routes on the engines' KV events. It cannot run without them, so only
	 * a host that delivers them (the simulator) creates one; the gateway receives no KV
	 * events.
	 */
	/**
	 * {@code feed}, which policy {@code policy} was attached to.
	 * @throws IllegalStateException when it was never attached
	 */
	static KvEventFeed attached(@Nullable KvEventFeed feed, String policy) {
		if (feed == null) {
			throw new IllegalStateException(policy + " routes on engine KV events and has no event feed");
		}
		return feed;
	}

	public interface Consumer {

		/** Connects the feed; called once, before the first request. */
		void attach(KvEventFeed feed);

	}

}

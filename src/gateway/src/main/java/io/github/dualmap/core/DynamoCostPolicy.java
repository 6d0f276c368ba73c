package io.github.dualmap.core;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * NVIDIA Dynamo's KV router cost function with its default temperature 0: the instance
 * with the lowest {@code overlapWeight x prefillBlocks + decodeBlocks} wins, where
 * prefill blocks are the instance's active prefill tokens plus the prompt's tokens not
 * covered by its cached overlap, in blocks, and decode blocks are the distinct blocks of
 * the instance's active requests plus the prompt's blocks not already among them. Active
 * requests are tracked in-router from dispatch to finish; the cached overlap comes from
 * the pool's shadow index (this router's own routing, sized by the engine's KV capacity)
 * where Dynamo listens to KV events from the workers.
 */
public final class DynamoCostPolicy implements RoutingPolicy {

	/** The registry name. */
	public static final String NAME = "dynamo-cost";

	/** {@code --kv-overlap-score-weight} default. */
	public static final double DEFAULT_OVERLAP_WEIGHT = 1.0;

	private final double overlapWeight;

	private final ActiveBlocks active = new ActiveBlocks();

	private final TieBreaker ties = new TieBreaker();

	public DynamoCostPolicy() {
		this(DEFAULT_OVERLAP_WEIGHT);
	}

	/**
	 * @param overlapWeight weight of the prefill term, >= 0 (0 = pure decode balance)
	 */
	public DynamoCostPolicy(double overlapWeight) {
		if (!(overlapWeight >= 0) || Double.isInfinite(overlapWeight)) {
			throw new IllegalArgumentException("overlapWeight must be >= 0 and finite but was " + overlapWeight);
		}
		this.overlapWeight = overlapWeight;
	}

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		List<InstanceState> accepting = pool.acceptingInstances();
		if (accepting.isEmpty()) {
			return null;
		}
		PromptBlocks blocks = request.blocks();
		int blockSize = blocks == null ? pool.settings().blockTokens() : blocks.blockTokens();
		Map<InstanceState, Integer> overlaps = new HashMap<>();
		Map<InstanceState, Double> costs = new HashMap<>();
		int longest = 0;
		for (InstanceState s : accepting) {
			int overlap = blocks == null ? 0 : s.shadow().peekMatchedBlocks(blocks.chain());
			long newTokens = blocks == null ? 0 : blocks.promptTokens() - blocks.tokensFor(overlap);
			double prefillBlocks = (double) (s.prefillTokens() + newTokens) / blockSize;
			double decodeBlocks = active.distinct(s.id())
					+ (blocks == null ? 0 : active.missing(s.id(), blocks.chain()));
			overlaps.put(s, overlap);
			costs.put(s, overlapWeight * prefillBlocks + decodeBlocks);
			longest = Math.max(longest, overlap);
		}
		InstanceState chosen = ties.lowest(accepting, costs::get);
		int overlap = overlaps.get(chosen);
		Reason reason = overlap > 0 && overlap == longest ? Reason.AFFINITY : Reason.LOAD;
		if (blocks == null) {
			return Decision.of(chosen.id(), reason, request);
		}
		int cached = blocks.tokensFor(overlap);
		return new Decision(chosen.id(), reason, cached, blocks.promptTokens() - cached, -1);
	}

	@Override
	public void onDispatched(RoutingRequest request, Decision decision, InstancePool pool) {
		PromptBlocks blocks = request.blocks();
		if (blocks == null || pool.instance(decision.instanceId()) == null) {
			return;
		}
		active.dispatched(request.id(), decision.instanceId(), blocks.chain());
	}

	@Override
	public void onFinished(RoutingRequest request, String instanceId, InstancePool pool) {
		active.finished(request.id());
	}

	@Override
	public void onMembershipChanged(InstancePool pool) {
		active.retainMembers(pool);
	}

	/** Distinct blocks of the requests active on {@code instanceId}. */
	public int activeBlocks(String instanceId) {
		return active.distinct(instanceId);
	}

}

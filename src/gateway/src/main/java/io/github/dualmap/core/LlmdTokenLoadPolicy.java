package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * llm-d's {@code optimized-baseline} guide as its router values deploy it: the
 * prefix-cache affinity filter, then the token-load scorer, picked by maximum score
 * (llm-d/llm-d-router
 * {@code pkg/epp/framework/plugins/scheduling/filter/prefixcacheaffinity},
 * {@code scheduling/scorer/tokenload} and
 * {@code requestcontrol/dataproducer/inflightload}, each at its defaults).
 * <p>
 * The filter keeps the instances whose approximate prefix index ({@link LlmdPrefixIndex},
 * as {@code llmd-optimized-baseline} has it) holds at least {@value #AFFINITY_THRESHOLD}
 * of the considered prompt, unless the least loaded of them would wait more than
 * {@value #MAX_TTFT_PENALTY_MS} ms longer than the least loaded other instance, each wait
 * estimated as its in-flight tokens at {@value #PEAK_PREFILL_THROUGHPUT} tokens/s; with
 * none that holds that much, every instance stays. The scorer takes the instance with the
 * fewest in-flight tokens plus the request's own uncached tokens there, counted up to
 * {@value #QUEUE_THRESHOLD_TOKENS} (beyond it every instance scores alike). In flight are
 * this router's requests sent there without a first token, each counted by its uncached
 * tokens there when it was sent (the decision's uncached tokens), and with replica sync
 * its peers' as they publish them ({@link InstanceState#sharedPrefillTokens()}: the
 * in-flight load producer adds up every replica's when a cross-replica syncer is
 * configured). Ties by a hash of the request id (llm-d shuffles).
 */
public final class LlmdTokenLoadPolicy implements RoutingPolicy {

	/** The registry name. */
	public static final String NAME = "llmd-token-load";

	/** The filter's {@code affinityThreshold} default. */
	public static final double AFFINITY_THRESHOLD = 0.80;

	/** The filter's {@code maxTTFTPenaltyMs} default. */
	public static final double MAX_TTFT_PENALTY_MS = 18_000;

	/** The filter's {@code peakPrefillThroughput} default, tokens per second. */
	public static final double PEAK_PREFILL_THROUGHPUT = 15_928;

	/** The token-load scorer's {@code queueThresholdTokens} default. */
	public static final long QUEUE_THRESHOLD_TOKENS = 4_194_304;

	private final LlmdPrefixIndex index;

	private final TieBreaker ties = new TieBreaker();

	/**
	 * The guide's defaults, indexes counted in blocks of {@code settings.blockTokens()}.
	 */
	public LlmdTokenLoadPolicy(SchedulerSettings settings) {
		this.index = new LlmdPrefixIndex(settings.blockTokens(), LlmdScorerPolicy.CURRENT_MAX_PREFIX_TOKENS,
				LlmdScorerPolicy.DEFAULT_INDEX_CAPACITY_TOKENS);
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
		long[] considered = blocks == null ? new long[0] : index.considered(blocks);
		Map<InstanceState, Integer> matched = new HashMap<>();
		List<InstanceState> sticky = new ArrayList<>();
		List<InstanceState> others = new ArrayList<>();
		int longest = 0;
		for (InstanceState s : accepting) {
			int m = index.matched(s.id(), considered);
			matched.put(s, m);
			longest = Math.max(longest, m);
			boolean holds = considered.length > 0 && (double) m / considered.length >= AFFINITY_THRESHOLD;
			(holds ? sticky : others).add(s);
		}
		List<InstanceState> candidates = accepting.size() > 1 && !sticky.isEmpty() && !stickinessBroken(sticky, others)
				? sticky : accepting;
		InstanceState chosen = ties.lowest(candidates,
				s -> Math.min(QUEUE_THRESHOLD_TOKENS, s.sharedPrefillTokens() + uncached(blocks, matched.get(s))),
				request);
		int m = matched.get(chosen);
		Reason reason = m > 0 && m == longest ? Reason.AFFINITY : Reason.LOAD;
		if (blocks == null) {
			return Decision.of(chosen.id(), reason, request);
		}
		int cached = blocks.tokensFor(m);
		return new Decision(chosen.id(), reason, cached, blocks.promptTokens() - cached, -1);
	}

	/**
	 * The filter's load gate: whether the least loaded sticky instance would wait more
	 * than {@link #MAX_TTFT_PENALTY_MS} longer than the least loaded other one.
	 */
	private static boolean stickinessBroken(List<InstanceState> sticky, List<InstanceState> others) {
		if (others.isEmpty()) {
			return false;
		}
		return bestTtftMillis(sticky) - bestTtftMillis(others) > MAX_TTFT_PENALTY_MS;
	}

	private static double bestTtftMillis(List<InstanceState> instances) {
		double best = Double.MAX_VALUE;
		for (InstanceState s : instances) {
			best = Math.min(best, s.sharedPrefillTokens() / PEAK_PREFILL_THROUGHPUT * 1000);
		}
		return best;
	}

	/** The request's uncached tokens where {@code matched} of its blocks are held. */
	private static long uncached(@Nullable PromptBlocks blocks, int matched) {
		return blocks == null ? 0 : blocks.promptTokens() - blocks.tokensFor(matched);
	}

	/**
	 * After the pick the prompt's considered blocks enter the chosen instance's index.
	 */
	@Override
	public void onDispatched(RoutingRequest request, Decision decision, InstancePool pool) {
		PromptBlocks blocks = request.blocks();
		InstanceState s = pool.instance(decision.instanceId());
		if (blocks != null && s != null) {
			index.record(s, index.considered(blocks), pool);
		}
	}

	@Override
	public void onMembershipChanged(InstancePool pool) {
		index.retainMembers(pool);
	}

	/**
	 * Blocks held in the prefix index of {@code instanceId} (0 for an unknown instance).
	 */
	public int indexBlocks(String instanceId) {
		return index.size(instanceId);
	}

}

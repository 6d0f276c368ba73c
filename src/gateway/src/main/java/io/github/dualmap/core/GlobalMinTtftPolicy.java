package io.github.dualmap.core;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * A reference, not a peer: scans every instance that accepts work, estimates its TTFT
 * from the pool's shadow index (exact for a single router in the simulator) and its
 * pending tokens, and takes the minimum. O(instances x prompt depth) per request; it
 * bounds what any TTFT-driven policy on the same model could reach.
 */
public final class GlobalMinTtftPolicy implements RoutingPolicy {

	/** The registry name. */
	public static final String NAME = "global-min-ttft";

	private final TieBreaker ties = new TieBreaker();

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
		Map<InstanceState, Integer> cached = new HashMap<>();
		Map<InstanceState, Long> ttft = new HashMap<>();
		int longest = 0;
		for (InstanceState s : accepting) {
			int c = blocks == null ? 0 : blocks.tokensFor(s.shadow().peekMatchedBlocks(blocks.chain()));
			cached.put(s, c);
			ttft.put(s, pool.estimateTtft(s, c, request.promptTokens() - c));
			longest = Math.max(longest, c);
		}
		InstanceState chosen = ties.lowest(accepting, s -> ttft.get(s));
		int c = cached.get(chosen);
		Reason reason = c > 0 && c == longest ? Reason.AFFINITY : Reason.LOAD;
		return new Decision(chosen.id(), reason, c, request.promptTokens() - c, ttft.get(chosen));
	}

}

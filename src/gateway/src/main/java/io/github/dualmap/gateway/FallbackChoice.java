package io.github.dualmap.gateway;

import java.util.Set;

import io.github.dualmap.core.Candidates;
import io.github.dualmap.core.Decision;
import io.github.dualmap.core.DualHashRing;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.core.Reason;
import io.github.dualmap.core.RoutingRequest;
import org.jspecify.annotations.Nullable;

/**
 * Where a repeated placement of a request goes ({@link PinAndRetryPolicy}: a
 * connect-failure retry, a breaker that refused, a route's retry filter): off the
 * instances already tried, to the key's other candidate, then the next accepting instance
 * clockwise on the first ring, so the prefix cache still counts; by load alone for a
 * request without a prompt. Its decisions are {@link Reason#FALLBACK}.
 */
final class FallbackChoice {

	private final InstancePool pool;

	FallbackChoice(InstancePool pool) {
		this.pool = pool;
	}

	/**
	 * The choice for {@code request} off the {@code refused} instances, or {@code null}
	 * when none of the others accepts work.
	 */
	@Nullable Decision choose(RoutingRequest request, Set<String> refused) {
		PromptBlocks blocks = request.blocks();
		// One reading of the rings: discovery may change the membership meanwhile.
		DualHashRing rings = this.pool.rings();
		if (blocks == null || rings.isEmpty()) {
			InstanceState best = null;
			for (InstanceState s : this.pool.instances()) {
				if (usable(s.id(), refused)
						&& (best == null || this.pool.pendingTokens(s) < this.pool.pendingTokens(best))) {
					best = s;
				}
			}
			return best == null ? null : Decision.of(best.id(), Reason.FALLBACK, request);
		}
		long key = blocks.keyAt(this.pool.hotPrefixes().peekDepth(blocks));
		Candidates candidates = rings.candidates(key);
		String id = usable(candidates.first(), refused) ? candidates.first() : usable(candidates.second(), refused)
				? candidates.second() : rings.walk(0, key, i -> usable(i, refused));
		InstanceState s = id == null ? null : this.pool.instance(id);
		if (s == null) {
			return null;
		}
		int cached = blocks.tokensFor(s.shadow().peekMatchedBlocks(blocks.chain()));
		int uncached = blocks.promptTokens() - cached;
		return new Decision(s.id(), Reason.FALLBACK, cached, uncached, this.pool.estimateTtft(s, cached, uncached));
	}

	/**
	 * Whether an instance outside {@code refused} accepts work: where a retry could go.
	 */
	boolean acceptsAnyBut(Set<String> refused) {
		for (InstanceState s : this.pool.instances()) {
			if (usable(s.id(), refused)) {
				return true;
			}
		}
		return false;
	}

	private boolean usable(String id, Set<String> refused) {
		InstanceState s = this.pool.instance(id);
		return s != null && s.acceptsNewWork() && !refused.contains(id);
	}

}

package io.github.dualmap.core;

import org.jspecify.annotations.Nullable;

/**
 * The DualMap decision: two ring candidates per routing key, the one with the longer
 * cached prefix first, away from a hotspot, and switched per request to the candidate
 * with the lower TTFT estimate when the affinity choice would exceed the switch budget of
 * the request's SLO. Stateless beyond the pool, so it is safe for concurrent calls.
 */
public final class DualMapPolicy implements RoutingPolicy {

	private final SchedulerSettings settings;

	public DualMapPolicy(SchedulerSettings settings) {
		this.settings = settings;
	}

	@Override
	public String name() {
		return "dualmap";
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		PromptBlocks blocks = request.blocks();
		if (blocks == null) {
			return leastLoaded(request, pool);
		}
		long key = pool.routingKey(blocks);
		if (pool.rings().isEmpty()) {
			return null;
		}
		Candidates cands = pool.rings().candidates(key);
		InstanceState a = accepting(pool, cands.first());
		InstanceState b = accepting(pool, cands.second());
		if (a == null && b == null) {
			String id = pool.rings().walk(0, key, i -> accepting(pool, i) != null);
			return id == null ? null : evaluate(pool, pool.instance(id), blocks, Reason.FALLBACK);
		}
		if (a == null || b == null || a == b) {
			return evaluate(pool, a != null ? a : b, blocks,
					a == null || b == null ? Reason.FALLBACK : Reason.AFFINITY);
		}
		Decision da = evaluate(pool, a, blocks, Reason.AFFINITY);
		Decision db = evaluate(pool, b, blocks, Reason.AFFINITY);
		boolean aFirst = da.cachedTokens() != db.cachedTokens() ? da.cachedTokens() > db.cachedTokens()
				: da.ttftEstimateNanos() <= db.ttftEstimateNanos();
		Decision chosen = aFirst ? da : db;
		Decision other = aFirst ? db : da;
		InstanceState chosenState = aFirst ? a : b;
		InstanceState otherState = aFirst ? b : a;
		if (pool.isHotspot(chosenState) && !pool.isHotspot(otherState)) {
			return with(other, Reason.HOTSPOT);
		}
		if (chosen.ttftEstimateNanos() > settings.switchFactor() * request.sloTtftNanos()
				&& other.ttftEstimateNanos() < chosen.ttftEstimateNanos()) {
			return with(other, Reason.SLO_SWITCH);
		}
		return chosen;
	}

	private static @Nullable InstanceState accepting(InstancePool pool, String id) {
		InstanceState s = pool.instance(id);
		return s != null && s.acceptsNewWork() ? s : null;
	}

	private static Decision evaluate(InstancePool pool, @Nullable InstanceState s, PromptBlocks blocks, Reason reason) {
		if (s == null) {
			throw new IllegalStateException("instance left the pool during the decision");
		}
		int cached = blocks.tokensFor(s.shadow().peekMatchedBlocks(blocks.chain()));
		int uncached = blocks.promptTokens() - cached;
		return new Decision(s.id(), reason, cached, uncached, pool.estimateTtft(s, uncached));
	}

	private static Decision with(Decision d, Reason reason) {
		return new Decision(d.instanceId(), reason, d.cachedTokens(), d.uncachedTokens(), d.ttftEstimateNanos());
	}

	private static @Nullable Decision leastLoaded(RoutingRequest request, InstancePool pool) {
		InstanceState best = null;
		long bestPending = Long.MAX_VALUE;
		for (InstanceState s : pool.instances()) {
			long p = pool.pendingTokens(s);
			if (s.acceptsNewWork() && p < bestPending) {
				best = s;
				bestPending = p;
			}
		}
		return best == null ? null : Decision.of(best.id(), Reason.LOAD, request);
	}

}

package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The DualMap choice between the two ring candidates of a request's routing key: cache
 * affinity first, switched to the faster candidate when the affinity choice would eat
 * more than {@code switchFactor} of the SLO and the other is faster by more than
 * {@code switchHitCharge} x the prefill time of the cached prefix it gives up (reported
 * as a hotspot step when the affinity choice is a hotspot of the pool) unless the other
 * holds less of the prompt and its KV cache is above
 * {@link SchedulerSettings#switchMaxKvUsage()}, and optionally a bounded third choice
 * when both would miss it. Each decision looks at two candidates (at most four with the
 * third choice), so it costs O(log n) ring lookups plus the pool's load view.
 * <p>
 * <b>Cold requests</b> ({@link SchedulerSettings#spreadsCold()}): the first
 * {@link SchedulerSettings#coldCandidatesMax()} distinct instances walking both rings
 * from the key ({@link DualHashRing#spread}, the two candidates first) are looked up in
 * their shadow indexes. When none holds {@link SchedulerSettings#coldCachedShare()} of
 * the prompt, the request has no cache worth following and goes to the least occupied
 * (requests in flight and queued, {@link #occupancy}) of the first d of them whose TTFT
 * estimate is within the switch budget ({@code switchFactor} x SLO: where the SLO switch
 * would not move it away), else to the one with the lowest estimate; d = 2 plus one per
 * {@link SchedulerSettings#coldLoadStepTokens()} of the pool's mean pending tokens, at
 * most the maximum; ties go to ring order. A warm request keeps the choice between its
 * two candidates, joined by any further ring instance that holds that share (a
 * conversation whose first turn went there by occupancy). The instances and their order
 * are a function of the key and the membership, so replicas without shared state agree on
 * them; only d follows each replica's load view.
 * <p>
 * <b>Slow start</b> ({@link SchedulerSettings#slowStartNanos()} &gt; 0): an instance
 * younger than the period looks proportionally more loaded in the choice: its TTFT
 * estimate is multiplied by {@code 1 / max(0.1, age / period)}, so it wins ties and load
 * comparisons less often at first and its share ramps up as it warms. The decision still
 * reports the unscaled estimate.
 * <p>
 * The {@link Variant}s are the ablations of the paper plus the third choice; each is
 * registered in {@link RoutingPolicies} under {@link Variant#policyName()}. Stateless
 * apart from the pool, so safe for concurrent calls.
 */
public final class DualMapPolicy implements RoutingPolicy {

	/** Turns among equally loaded instances for requests routed by load alone. */
	private final TieBreaker loadTies = new TieBreaker();

	private final Variant variant;

	private final SchedulerSettings settings;

	public DualMapPolicy(Variant variant, SchedulerSettings settings) {
		this.variant = variant;
		this.settings = settings;
	}

	/** The full DualMap policy. */
	public static DualMapPolicy of(SchedulerSettings settings) {
		return new DualMapPolicy(Variant.FULL, settings);
	}

	public Variant variant() {
		return variant;
	}

	@Override
	public String name() {
		return variant.policyName();
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		DualHashRing rings = pool.rings();
		if (rings.isEmpty()) {
			return null;
		}
		PromptBlocks blocks = request.blocks();
		if (blocks == null) {
			return LeastLoadedPolicy.leastPending(pool, request, this.loadTies);
		}
		long key = pool.routingKey(blocks);
		Candidates cands = rings.candidates(key);
		InstanceState a = accepting(pool, cands.first());
		InstanceState b = accepting(pool, cands.second());
		if (variant == Variant.DIRECTORY) {
			Decision d = withDirectory(request, pool, blocks, a, b);
			if (d != null) {
				return d;
			}
		}
		CandidateCost pa = a == null ? null : costOn(pool, a, blocks);
		CandidateCost pb = b == null ? null : b == a ? pa : costOn(pool, b, blocks);
		if (settings.spreadsCold() && variant.spreadsCold() && rings.members().size() > 2) {
			Decision d = coldOrFurtherHolder(request, pool, rings, key, blocks, pa, pb);
			if (d != null) {
				return d;
			}
		}
		if (pa == null && pb == null) {
			String id = rings.walk(0, key, other -> accepting(pool, other) != null);
			InstanceState s = id == null ? null : pool.instance(id);
			return s == null ? null : costOn(pool, s, blocks).decide(Reason.FALLBACK);
		}
		if (pa == null || pb == null || a == b) {
			CandidateCost p = pa != null ? pa : pb;
			Reason reason = a == b ? Reason.AFFINITY : Reason.FALLBACK;
			return p.decide(reason);
		}
		if (variant == Variant.LEAST_LOADED) {
			boolean second = pool.pendingTokens(b) < pool.pendingTokens(a);
			return (second ? pb : pa).decide(Reason.LOAD);
		}
		long slo = sloOf(request);
		Decision decision = affinityThenSwitch(List.of(pa, pb), null, slo, pool);
		if (thirdChoiceEnabled() && pa.rank() > slo && pb.rank() > slo) {
			CandidateCost third = thirdChoice(pool, rings, key, cands, blocks, Math.min(pa.rank(), pb.rank()));
			if (third != null) {
				return third.decide(Reason.THIRD_CHOICE);
			}
		}
		return decision;
	}

	/**
	 * The cold rule, or a warm request's choice when an instance beyond its two
	 * candidates holds its prompt; {@code null} when the choice between the two
	 * candidates applies unchanged (a warm request held only there, or no ring instance
	 * accepts work).
	 */
	private @Nullable Decision coldOrFurtherHolder(RoutingRequest request, InstancePool pool, DualHashRing rings,
			long key, PromptBlocks blocks, @Nullable CandidateCost pa, @Nullable CandidateCost pb) {
		String[] ids = new String[settings.coldCandidatesMax()];
		int n = rings.spread(key, ids);
		CandidateCost[] options = new CandidateCost[n];
		int maxCached = 0;
		for (int i = 0; i < n; i++) {
			CandidateCost p;
			if (i < 2) {
				p = i == 0 ? pa : pb;
			}
			else {
				InstanceState s = accepting(pool, ids[i]);
				p = s == null ? null : costOn(pool, s, blocks);
			}
			options[i] = p;
			if (p != null) {
				maxCached = Math.max(maxCached, p.cachedTokens());
			}
		}
		double warmTokens = settings.coldCachedShare() * blocks.promptTokens();
		if (maxCached >= warmTokens && maxCached > 0) {
			List<CandidateCost> warm = new ArrayList<>(n);
			boolean further = false;
			for (int i = 0; i < n; i++) {
				CandidateCost p = options[i];
				if (p != null && (i < 2 || p.cachedTokens() >= warmTokens)) {
					warm.add(p);
					further |= i >= 2;
				}
			}
			return further ? affinityThenSwitch(warm, null, sloOf(request), pool) : null;
		}
		int d = coldCandidates(pool, n);
		long budget = (long) (settings.switchFactor() * sloOf(request));
		CandidateCost best = null;
		double bestLoad = Double.MAX_VALUE;
		CandidateCost fastest = null;
		for (int i = 0; i < d; i++) {
			CandidateCost p = options[i];
			if (p == null) {
				continue;
			}
			if (fastest == null || p.rank() < fastest.rank()) {
				fastest = p;
			}
			InstanceState s = p.instance();
			double load = (occupancy(pool, s) + 1) / pool.warmth(s);
			if (p.rank() <= budget && load < bestLoad) {
				best = p;
				bestLoad = load;
			}
		}
		CandidateCost chosen = best != null ? best : fastest;
		return chosen == null ? null : chosen.decide(Reason.COLD);
	}

	/**
	 * How many ring instances a cold request considers now: two, plus one per
	 * {@link SchedulerSettings#coldLoadStepTokens()} of pending tokens on the pool's mean
	 * instance (O(1): the pool keeps the mean as running totals), at most {@code found}.
	 */
	int coldCandidates(InstancePool pool, int found) {
		double steps = pool.meanPendingTokens() / settings.coldLoadStepTokens();
		int d = 2 + (int) Math.min(settings.coldCandidatesMax(), Math.max(0, steps));
		return Math.min(Math.min(d, settings.coldCandidatesMax()), found);
	}

	/**
	 * Requests on {@code s}: this router's queued there plus those in the engine, which
	 * is this router's in flight or the engine's scraped running and waiting count when
	 * that is larger and fresh (other routers' requests show only there).
	 */
	int occupancy(InstancePool pool, InstanceState s) {
		int inEngine = s.inFlight();
		EngineSnapshot e = s.freshEngine(pool.now(), settings.staleAfterNanos());
		if (e != null) {
			inEngine = Math.max(inEngine, Math.max(0, e.running()) + Math.max(0, e.waiting()));
		}
		return s.queuedRequests() + inEngine;
	}

	private long sloOf(RoutingRequest request) {
		return request.sloTtftNanos() > 0 ? request.sloTtftNanos() : settings.defaultSloNanos();
	}

	/**
	 * Affinity, then the SLO switch, over the candidates {@code options} (in ring order,
	 * {@code directory}'s pick last when there is one): the one holding the most cached
	 * tokens, ties to the lower estimate, then to ring order (or to ring order alone,
	 * {@link #tieToRingOrder}); then, when that one's estimate eats more than the switch
	 * budget, the other whose estimate plus the charge for the cached prefix it gives up
	 * is lowest, if that is lower still.
	 * <p>
	 * The hotspot step is relative to the candidates: leaving the cache only pays when
	 * the affinity choice would eat the switch budget and another candidate is faster.
	 * Steering off a pool-mean hotspot whose estimate is still within budget gives up the
	 * cached prefix for nothing (and under late binding the queue's migration and idle
	 * pull shed a hotspot per request, with the measured gain). "Faster" is net of the
	 * cached prefix given up: the other candidate's estimate already counts this
	 * request's longer prefill, but not the delay that prefill adds for every request
	 * queued behind it there.
	 */
	private Decision affinityThenSwitch(List<CandidateCost> options, @Nullable CandidateCost directory, long slo,
			InstancePool pool) {
		CandidateCost chosen = options.get(0);
		for (CandidateCost p : options) {
			if (p.cachedTokens() > chosen.cachedTokens() || (p.cachedTokens() == chosen.cachedTokens()
					&& p.rank() < chosen.rank() && !tieToRingOrder(pool, chosen, p))) {
				chosen = p;
			}
		}
		Reason reason = chosen == directory ? Reason.DIRECTORY : Reason.AFFINITY;
		if (variant.switchesOnSlo() && chosen.rank() > settings.switchFactor() * slo) {
			CandidateCost best = null;
			long bestCost = Long.MAX_VALUE;
			for (CandidateCost p : options) {
				long cost = p == chosen || kvBound(pool, chosen, p) ? Long.MAX_VALUE
						: p.rank() + lostHitNanos(pool, chosen, p);
				if (cost < bestCost) {
					best = p;
					bestCost = cost;
				}
			}
			if (best != null && bestCost < chosen.rank()) {
				reason = variant.rebalances() && pool.isHotspot(chosen.instance()) ? Reason.HOTSPOT : Reason.SLO_SWITCH;
				chosen = best;
			}
		}
		return chosen.decide(reason);
	}

	/**
	 * Whether a tie on cached tokens between {@code a} and {@code b} goes to ring order
	 * rather than to the lower estimate ({@link SchedulerSettings#tieBreak()}): always,
	 * never, or ({@link TieBreak#AUTO}) while either one's engine, as last scraped and
	 * still fresh, holds requests this gateway did not send and no peer publishes its
	 * load there. Replicas that cannot see each other's load then agree on where a prompt
	 * neither candidate is known to hold goes, and a conversation whose turns reach
	 * different replicas stays on one instance.
	 */
	private boolean tieToRingOrder(InstancePool pool, CandidateCost a, CandidateCost b) {
		return switch (settings.tieBreak()) {
			case RING_ORDER -> true;
			case ESTIMATE -> false;
			case AUTO -> otherSender(pool, a.instance()) || otherSender(pool, b.instance());
		};
	}

	/**
	 * Whether the engine of {@code s}, as last scraped and still fresh, held requests
	 * this gateway did not send while no peer publishes its load there
	 * ({@link InstanceState#unseenSendersAt}): under replica sync with shared load the
	 * lower estimate stays the better choice.
	 */
	private static boolean otherSender(InstancePool pool, InstanceState s) {
		return s.unseenSendersAt(pool.now(), pool.settings().staleAfterNanos());
	}

	/**
	 * The choice among the ring candidates and the instance the prefix directory names
	 * for the request's longest recorded prefix, when that instance accepts work and is
	 * neither candidate; {@code null} otherwise (the two-candidate choice applies). The
	 * same rules over three: most cached tokens (by each one's shadow index), then the
	 * lower estimate, then ring order; the SLO switch to the other with the lowest
	 * estimate plus the charge for the cached prefix it gives up.
	 */
	private @Nullable Decision withDirectory(RoutingRequest request, InstancePool pool, PromptBlocks blocks,
			@Nullable InstanceState a, @Nullable InstanceState b) {
		String owner = pool.directory().owner(blocks.chain());
		InstanceState d = owner == null ? null : accepting(pool, owner);
		if (d == null || d == a || d == b) {
			return null;
		}
		List<CandidateCost> options = new ArrayList<>(3);
		if (a != null) {
			options.add(costOn(pool, a, blocks));
		}
		if (b != null && b != a) {
			options.add(costOn(pool, b, blocks));
		}
		CandidateCost pd = costOn(pool, d, blocks);
		options.add(pd);
		return affinityThenSwitch(options, pd, sloOf(request), pool);
	}

	/**
	 * Whether {@code other} holds less of the prompt than {@code chosen} and its engine,
	 * as last scraped (and still fresh), uses more of its KV cache than
	 * {@link SchedulerSettings#switchMaxKvUsage()}: no SLO switch goes there.
	 */
	private boolean kvBound(InstancePool pool, CandidateCost chosen, CandidateCost other) {
		return other.cachedTokens() < chosen.cachedTokens()
				&& other.instance().kvUsedAbove(settings.switchMaxKvUsage(), pool.now(), settings.staleAfterNanos());
	}

	/**
	 * The charge for switching from {@code chosen} to {@code other}:
	 * {@link SchedulerSettings#switchHitCharge()} x the prefill time, on {@code other},
	 * of the tokens {@code chosen} has cached and {@code other} has not (with the
	 * attention model, the request's prefill there less what it would be with
	 * {@code chosen}'s cached prefix).
	 */
	private long lostHitNanos(InstancePool pool, CandidateCost chosen, CandidateCost other) {
		if (other.uncachedTokens() <= chosen.uncachedTokens()) {
			return 0;
		}
		InstanceState s = other.instance();
		long lost = pool.prefillNanos(s, other.cachedTokens(), other.uncachedTokens())
				- pool.prefillNanos(s, chosen.cachedTokens(), chosen.uncachedTokens());
		return (long) (settings.switchHitCharge() * Math.max(0, lost));
	}

	/**
	 * The best of the next distinct accepting instance after the key on each ring, when
	 * it beats {@code bestRank}; at most two extra lookups.
	 */
	private @Nullable CandidateCost thirdChoice(InstancePool pool, DualHashRing rings, long key, Candidates cands,
			PromptBlocks blocks, long bestRank) {
		CandidateCost best = null;
		for (int ring = 0; ring < 2; ring++) {
			String id = rings.walk(ring, key, other -> !other.equals(cands.first()) && !other.equals(cands.second())
					&& accepting(pool, other) != null);
			InstanceState s = id == null ? null : pool.instance(id);
			if (s == null || (best != null && best.id().equals(id))) {
				continue;
			}
			CandidateCost p = costOn(pool, s, blocks);
			if (p.rank() < bestRank && (best == null || p.rank() < best.rank())) {
				best = p;
			}
		}
		return best;
	}

	private boolean thirdChoiceEnabled() {
		// dualmap-directory is the full policy plus the directory's candidate: it honours
		// dualmap.third-choice as dualmap does.
		return variant == Variant.THIRD_CHOICE
				|| ((variant == Variant.FULL || variant == Variant.DIRECTORY) && settings.thirdChoice());
	}

	private CandidateCost costOn(InstancePool pool, InstanceState s, PromptBlocks blocks) {
		CandidateCost p = CandidateCost.of(pool, s, blocks);
		long rank = pool.warmthScaled(s, p.estimate());
		return rank == p.estimate() ? p : p.withRank(rank);
	}

	// The membership may change between reading the rings and the states: an id without
	// state is gone and accepts nothing.
	private static @Nullable InstanceState accepting(InstancePool pool, String id) {
		InstanceState s = pool.instance(id);
		return s != null && s.acceptsNewWork() ? s : null;
	}

	/**
	 * The directory variant has its pool keep a directory from the first membership on,
	 * so it learns every release, also those no decision of this policy made (a retry
	 * placed off the failed instances, a pinned continuation).
	 */
	@Override
	public void onMembershipChanged(InstancePool pool) {
		if (variant == Variant.DIRECTORY) {
			pool.directory();
		}
	}

	@Override
	public String toString() {
		return "DualMapPolicy[" + variant.policyName() + "]";
	}

	/** The DualMap ablations, each a registered policy. */
	public enum Variant {

		/**
		 * Affinity, SLO switch with hotspot steps, queue rebalancing; third choice if
		 * configured.
		 */
		FULL("dualmap"),
		/**
		 * No hotspot step: the SLO switch alone (its queue moves nothing either:
		 * {@link RoutingPolicies#queueSettingsFor}).
		 */
		NO_REBALANCE("dualmap-no-rebalance"),
		/** Cache affinity only: no SLO switch, no hotspot step. */
		CACHE_AFFINITY("dualmap-cache-affinity"),
		/**
		 * Power of two choices on pending tokens over the two candidates; cache ignored.
		 */
		LEAST_LOADED("dualmap-least-loaded"),
		/** {@link #FULL} with the bounded third choice always on. */
		THIRD_CHOICE("dualmap-third-choice"),
		/**
		 * {@link #FULL} with a third candidate from the pool's prefix directory: the
		 * instance last sent the request's longest recorded prefix, wherever it is.
		 */
		DIRECTORY("dualmap-directory");

		private final String policyName;

		Variant(String policyName) {
			this.policyName = policyName;
		}

		/** The name it is registered under. */
		public String policyName() {
			return policyName;
		}

		boolean rebalances() {
			return this == FULL || this == THIRD_CHOICE || this == DIRECTORY;
		}

		/**
		 * Whether cold requests go by occupancy when the settings say so: the variants
		 * with the full choice.
		 */
		boolean spreadsCold() {
			return this == FULL || this == THIRD_CHOICE || this == DIRECTORY;
		}

		boolean switchesOnSlo() {
			return this == FULL || this == NO_REBALANCE || this == THIRD_CHOICE || this == DIRECTORY;
		}

		/** The variant registered as {@code name}. */
		public static Variant ofPolicyName(String name) {
			for (Variant v : values()) {
				if (v.policyName.equals(name)) {
					return v;
				}
			}
			throw new IllegalArgumentException("unknown DualMap variant '" + name + "'; known: "
					+ Arrays.stream(values()).map(Variant::policyName).toList());
		}

	}

}

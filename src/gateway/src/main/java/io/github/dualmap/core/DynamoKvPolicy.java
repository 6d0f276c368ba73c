package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * NVIDIA Dynamo's KV router as deployed with its KV events on (the default,
 * {@code --router-kv-events}): the cached overlap of each worker comes from the engines'
 * stored and removed block events ({@link KvEventIndex}, exact up to their delivery
 * delay, the same for every router replica), and the worker with the lowest
 * {@code prefillLoadScale x max(activePrefillBlocks + promptBlocks - overlapCredit x
 * overlapBlocks, 0) + decodeBlocks} wins (temperature 0). Blocks are the engine's. Active
 * prefill tokens are the uncached prompt tokens of the requests this router (and, with
 * replica sync, its peers) sent that have no first token yet; decode blocks the distinct
 * blocks of the requests active on the worker plus the prompt's blocks not among them.
 * <p>
 * Admission: with a queue threshold, an arrival waits in the router's FCFS queue while
 * every worker's active prefill tokens exceed {@code threshold x max_num_batched_tokens}
 * ({@link AdmissionHold}); busy thresholds, when set, take workers over them out of the
 * candidates, and a request finding every worker busy is rejected (Dynamo's 503). Equal
 * costs go to the worker a hash of the request's id picks (Dynamo samples among the
 * best), so router replicas do not pick in lockstep.
 */
public final class DynamoKvPolicy implements RoutingPolicy, AdmissionHold, KvEventFeed.Consumer {

	/** The simulator's row name. */
	public static final String NAME = "dynamo-kv";

	/** {@code --router-prefill-load-scale} default. */
	public static final double DEFAULT_PREFILL_LOAD_SCALE = 1.0;

	/** {@code --router-kv-overlap-score-credit} default. */
	public static final double DEFAULT_OVERLAP_CREDIT = 1.0;

	/**
	 * {@code --router-queue-threshold} default of the Dynamo releases that queue by
	 * default (v1.1.x: 4.0, a fraction of {@code max_num_batched_tokens}).
	 */
	public static final double DEFAULT_QUEUE_THRESHOLD = 4.0;

	/** No threshold: the check is off. */
	public static final double OFF = Double.NaN;

	private final double prefillLoadScale;

	private final double overlapCredit;

	private final double queueThreshold;

	private final double decodeBlocksThreshold;

	private final long prefillTokensThreshold;

	private @Nullable KvEventFeed feed;

	private final ActiveBlocks active = new ActiveBlocks();

	private final TieBreaker ties = new TieBreaker();

	/** The defaults: queue threshold 4.0, busy thresholds off (as Dynamo ships them). */
	public DynamoKvPolicy() {
		this(DEFAULT_PREFILL_LOAD_SCALE, DEFAULT_OVERLAP_CREDIT, DEFAULT_QUEUE_THRESHOLD, OFF, -1);
	}

	/**
	 * @param prefillLoadScale scale of the prefill term, >= 0
	 * @param overlapCredit share of a cached block credited against the prefill, >= 0
	 * @param queueThreshold {@code --router-queue-threshold} (>= 0), or {@link #OFF}
	 * @param decodeBlocksThreshold {@code --active-decode-blocks-threshold}: a worker
	 * whose engine reports more of its KV cache in use than this share (0-1) is busy, or
	 * {@link #OFF}
	 * @param prefillTokensThreshold {@code --active-prefill-tokens-threshold}: a worker
	 * with more active prefill tokens is busy; negative: off
	 */
	public DynamoKvPolicy(double prefillLoadScale, double overlapCredit, double queueThreshold,
			double decodeBlocksThreshold, long prefillTokensThreshold) {
		nonNegative("prefillLoadScale", prefillLoadScale);
		nonNegative("overlapCredit", overlapCredit);
		if (!Double.isNaN(queueThreshold)) {
			nonNegative("queueThreshold", queueThreshold);
		}
		if (!Double.isNaN(decodeBlocksThreshold) && !(decodeBlocksThreshold >= 0 && decodeBlocksThreshold <= 1)) {
			throw new IllegalArgumentException(
					"decodeBlocksThreshold must be in [0, 1] or OFF but was " + decodeBlocksThreshold);
		}
		this.prefillLoadScale = prefillLoadScale;
		this.overlapCredit = overlapCredit;
		this.queueThreshold = queueThreshold;
		this.decodeBlocksThreshold = decodeBlocksThreshold;
		this.prefillTokensThreshold = prefillTokensThreshold;
	}

	private static void nonNegative(String name, double v) {
		if (!(v >= 0) || Double.isInfinite(v)) {
			throw new IllegalArgumentException(name + " must be >= 0 and finite but was " + v);
		}
	}

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public void attach(KvEventFeed feed) {
		this.feed = feed;
	}

	private KvEventFeed feed() {
		return KvEventFeed.attached(feed, NAME);
	}

	/**
	 * Dynamo's router queue: wait while every accepting worker's active prefill tokens
	 * exceed the threshold times the engines' per-step token budget.
	 */
	@Override
	public boolean mustHold(InstancePool pool) {
		if (Double.isNaN(queueThreshold)) {
			return false;
		}
		List<InstanceState> accepting = pool.acceptingInstances();
		if (accepting.isEmpty()) {
			return false;
		}
		double limit = queueThreshold * feed().maxBatchedTokens();
		for (InstanceState s : accepting) {
			if (s.sharedPrefillTokens() <= limit) {
				return false;
			}
		}
		return true;
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		KvEventFeed f = feed();
		List<InstanceState> candidates = new ArrayList<>();
		for (InstanceState s : pool.acceptingInstances()) {
			if (!busy(s, pool)) {
				candidates.add(s);
			}
		}
		if (candidates.isEmpty()) {
			// No worker, or every worker over a busy threshold: Dynamo answers 503.
			return null;
		}
		long[] chain = request.blocks() == null ? null : f.engineBlocks().of(request);
		int blockTokens = f.blockTokens();
		int promptTokens = request.promptTokens();
		Map<InstanceState, Integer> overlaps = new HashMap<>();
		Map<InstanceState, Double> costs = new HashMap<>();
		int longest = 0;
		for (InstanceState s : candidates) {
			int overlap = chain == null ? 0 : f.index().overlapBlocks(s.id(), chain);
			double prefillBlocks = Math.max(0,
					(double) (s.sharedPrefillTokens() + promptTokens) / blockTokens - overlapCredit * overlap);
			double decodeBlocks = active.distinct(s.id()) + (chain == null ? 0 : active.missing(s.id(), chain));
			overlaps.put(s, overlap);
			costs.put(s, prefillLoadScale * prefillBlocks + decodeBlocks);
			longest = Math.max(longest, overlap);
		}
		InstanceState chosen = ties.lowest(candidates, costs::get, request);
		int overlap = overlaps.get(chosen);
		Reason reason = overlap > 0 && overlap == longest ? Reason.AFFINITY : Reason.LOAD;
		return f.decision(chosen.id(), reason, overlap, request);
	}

	private boolean busy(InstanceState s, InstancePool pool) {
		if (prefillTokensThreshold >= 0 && s.sharedPrefillTokens() > prefillTokensThreshold) {
			return true;
		}
		if (Double.isNaN(decodeBlocksThreshold)) {
			return false;
		}
		EngineSnapshot e = s.freshEngine(pool.now(), pool.settings().staleAfterNanos());
		return e != null && Double.isFinite(e.kvUsage()) && e.kvUsage() > decodeBlocksThreshold;
	}

	@Override
	public void onDispatched(RoutingRequest request, Decision decision, InstancePool pool) {
		if (request.blocks() == null || pool.instance(decision.instanceId()) == null) {
			return;
		}
		long[] chain = feed().engineBlocks().of(request);
		if (chain == null) {
			return;
		}
		active.dispatched(request.id(), decision.instanceId(), chain);
	}

	@Override
	public void onFinished(RoutingRequest request, String instanceId, InstancePool pool) {
		active.finished(request.id());
	}

	@Override
	public void onMembershipChanged(InstancePool pool) {
		Set<String> members = active.retainMembers(pool);
		KvEventFeed f = feed;
		if (f != null) {
			f.index().retain(members);
		}
	}

	/** Distinct engine blocks of the requests active on {@code instanceId}. */
	public int activeBlocks(String instanceId) {
		return active.distinct(instanceId);
	}

	/** Blocks of {@code chain} not among the active blocks of {@code instanceId}. */
	int missingBlocks(String instanceId, long[] chain) {
		return active.missing(instanceId, chain);
	}

}

package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The SGLang Model Gateway's {@code cache_aware} policy with gRPC workers and their KV
 * events (smg-project/smg {@code model_gateway/src/policies/cache_aware.rs} at
 * {@code f8daa883}, "event-driven", CLI defaults): the gateway subscribes to every
 * worker's KV events and scores each worker by the blocks of the request's prompt its
 * engine holds, counted from the first ({@link KvEventIndex}). The worker with the most
 * wins, ties to the lower in-flight count and then at random (a hash of the request id
 * here); a prompt shorter than one block, or cached nowhere, goes to the least loaded
 * worker (fewest in flight, then fewest selections). The winner is subject to the same
 * spill gate as the approximate path: in flight above both {@code balance_rel_threshold}
 * x the mean and the mean + {@code balance_abs_threshold} sends the request to the least
 * loaded worker instead. Load is this router's own in-flight count per worker; the events
 * are the same for every router replica.
 * <p>
 * Upstream keeps no threshold on the overlap here (one block is enough) and inserts
 * nothing into its approximate tree on this path; before the first event it routes by
 * that tree, here by least load.
 */
public final class SmgKvPolicy implements RoutingPolicy, KvEventFeed.Consumer {

	/** The simulator's row name. */
	public static final String NAME = "smg-kv";

	private final SpillGate gate;

	private @Nullable KvEventFeed feed;

	private final TieBreaker ties = new TieBreaker();

	/** The CLI defaults: spill past 1.5 x the mean and the mean + 64. */
	public SmgKvPolicy() {
		this(SglangCacheAwarePolicy.DEFAULT_BALANCE_ABS_THRESHOLD,
				SglangCacheAwarePolicy.DEFAULT_BALANCE_REL_THRESHOLD);
	}

	/**
	 * @param balanceAbsThreshold the gate needs in flight above the mean + this, >= 0
	 * @param balanceRelThreshold and above this x the mean, >= 1 and finite
	 */
	public SmgKvPolicy(int balanceAbsThreshold, double balanceRelThreshold) {
		this.gate = new SpillGate(balanceAbsThreshold, balanceRelThreshold);
	}

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public void attach(KvEventFeed feed) {
		this.feed = feed;
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		Decision d = chooseAmongAccepting(request, pool);
		if (d != null) {
			// Counted when chosen, as upstream counts a selection in select_worker.
			gate.selected(d.instanceId());
		}
		return d;
	}

	private @Nullable Decision chooseAmongAccepting(RoutingRequest request, InstancePool pool) {
		KvEventFeed f = KvEventFeed.attached(feed, NAME);
		List<InstanceState> accepting = pool.acceptingInstances();
		if (accepting.isEmpty()) {
			return null;
		}
		long[] chain = request.blocks() == null ? null : f.engineBlocks().of(request);
		List<InstanceState> best = new ArrayList<>();
		int most = 0;
		for (InstanceState s : accepting) {
			int overlap = chain == null ? 0 : f.index().overlapBlocks(s.id(), chain);
			if (overlap > most) {
				most = overlap;
				best.clear();
			}
			if (overlap > 0 && overlap == most) {
				best.add(s);
			}
		}
		if (best.isEmpty()) {
			return f.decision(gate.leastLoaded(accepting).id(), Reason.LOAD, 0, request);
		}
		InstanceState chosen = ties.lowest(best, InstanceState::inFlight, request);
		if (gate.spills(chosen, accepting)) {
			InstanceState least = gate.leastLoaded(accepting);
			int overlap = chain == null ? 0 : f.index().overlapBlocks(least.id(), chain);
			return f.decision(least.id(), Reason.LOAD, overlap, request);
		}
		return f.decision(chosen.id(), Reason.AFFINITY, most, request);
	}

	@Override
	public void onMembershipChanged(InstancePool pool) {
		Set<String> members = gate.retainMembers(pool);
		KvEventFeed f = feed;
		if (f != null) {
			f.index().retain(members);
		}
	}

}

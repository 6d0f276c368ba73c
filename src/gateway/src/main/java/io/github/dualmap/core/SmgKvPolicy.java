package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The SGLang Model Gateway's {@code cache_aware} policy with gRPC workers and their KV
 * events (smg-project/smg {@code model_gateway/src/policies/cache_aware.rs} at
 * {@code 04def283}, "event-driven", after smg #2341; CLI defaults): the gateway
 * subscribes to every worker's KV events and scores each worker by the blocks of the
 * request's prompt its engine holds, counted from the first ({@link KvEventIndex}). The
 * workers with the most are the candidates, less those past the spill gate: in flight
 * above both {@code balance_rel_threshold} x the mean and the mean +
 * {@code balance_abs_threshold}. With no holder left the candidates are the workers that
 * do not trip the gate themselves; a prompt shorter than one block, or cached nowhere,
 * has every worker as a candidate. The {@link ExpectedWaitSelector} picks one from the
 * engines' polled loads, crediting a request's prompt tokens (the gRPC path knows them).
 * The gate's load is this router's own in-flight count per worker; the events are the
 * same for every router replica.
 * <p>
 * Upstream keeps no threshold on the overlap here (one block is enough) and inserts
 * nothing into its approximate tree on this path; before the first event it routes by
 * that tree, here by the selector alone. The generation throughput a vLLM engine reports
 * over gRPC is not modelled: the selector's default throughput stands for it.
 */
public final class SmgKvPolicy implements RoutingPolicy, KvEventFeed.Consumer {

	/** The simulator's row name. */
	public static final String NAME = "smg-kv";

	private final SpillGate gate;

	private final ExpectedWaitSelector selector = new ExpectedWaitSelector(true);

	private @Nullable KvEventFeed feed;

	/** The CLI defaults: spill past 1.5 x the mean and the mean + 64. */
	public SmgKvPolicy() {
		this(SglangTreePolicy.DEFAULT_BALANCE_ABS_THRESHOLD, SglangTreePolicy.DEFAULT_BALANCE_REL_THRESHOLD);
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
			return f.decision(selector.select(accepting, request, pool).id(), Reason.LOAD, 0, request);
		}
		SpillGate.Candidates candidates = gate.candidates(best, accepting);
		InstanceState chosen = selector.select(candidates.instances(), request, pool);
		if (!candidates.spilled()) {
			return f.decision(chosen.id(), Reason.AFFINITY, most, request);
		}
		// A holder means a parsed prompt: chain is set.
		return f.decision(chosen.id(), Reason.LOAD, f.index().overlapBlocks(chosen.id(), chain), request);
	}

	@Override
	public void onMembershipChanged(InstancePool pool) {
		Set<String> members = pool.memberIds();
		selector.retain(members);
		KvEventFeed f = feed;
		if (f != null) {
			f.index().retain(members);
		}
	}

}

package io.github.dualmap.sim;

import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SglangTreePolicy;

/**
 * What router replicas learn of each other, as the gateway's replica sync and SGLang's
 * mesh carry it: released prefixes and, with load sharing, each router's load per
 * instance, published at every flush interval and seen one network delay later; and, for
 * {@code sglang-cache-aware}, tree inserts at every mesh sync interval.
 */
final class PeerUpdates {

	private final EventQueue events;

	private final Routers routers;

	private final EngineFleet fleet;

	private final long delayNanos;

	/** Replica sync interval; 0 when replicas share nothing. */
	private final long shareNanos;

	// SGLang mesh sync interval; 0 when the routers' trees are not synchronised.
	private final long meshNanos;

	private final boolean shareLoad;

	private final RouterPhases phases;

	// Per instance in a publication: requests, tokens in prefill, tokens queued, pairs in
	// prefill.
	private static final int LOAD_FIELDS = 4;

	// Per router, the load it last published (LOAD_FIELDS numbers per engine slot), null
	// before its first publication has been seen.
	private final long[][] published;

	PeerUpdates(SimulationConfig config, EventQueue events, Routers routers, EngineFleet fleet) {
		this.events = events;
		this.routers = routers;
		this.fleet = fleet;
		this.delayNanos = config.networkDelay().toNanos();
		this.shareNanos = config.prefixShareInterval() == null ? 0 : config.prefixShareInterval().toNanos();
		this.meshNanos = this.shareNanos > 0 && routers.count() > 1 && routers.policy(0) instanceof SglangTreePolicy
				? SglangTreePolicy.DEFAULT_MESH_SYNC_INTERVAL.toNanos() : 0;
		this.shareLoad = config.shareLoad();
		this.phases = config.routerPhases();
		this.published = new long[routers.count()][];
	}

	/**
	 * Schedules the first load flush, if the routers share their load: every router's at
	 * once when their phases are {@link RouterPhases#ALIGNED}, else each router's on its
	 * own phase.
	 */
	void start() {
		int n = this.routers.count();
		if (!this.shareLoad || this.shareNanos == 0 || n < 2) {
			return;
		}
		if (this.phases == RouterPhases.ALIGNED) {
			this.events.schedule(this.shareNanos, new SimEvent.LoadFlush(0, n));
			return;
		}
		for (int r = 0; r < n; r++) {
			this.events.schedule(this.phases.nextNanos(r, n, this.shareNanos, 0), new SimEvent.LoadFlush(r, r + 1));
		}
	}

	/**
	 * When router {@code r}'s next publication of period {@code intervalNanos} leaves.
	 */
	private long nextFlush(int r, long intervalNanos) {
		return this.phases.nextNanos(r, this.routers.count(), intervalNanos, this.events.now());
	}

	/**
	 * Request {@code i}'s blocks, just released to {@code instanceId} by its router,
	 * reach the other routers with the router's next flush (on its phase of the sync
	 * interval), plus the network delay.
	 */
	void released(int i, String instanceId) {
		if (this.shareNanos == 0 || this.routers.count() < 2 || this.routers.routed(i).blocks() == null) {
			return;
		}
		this.events.schedule(nextFlush(this.routers.routerOf(i), this.shareNanos) + this.delayNanos,
				new SimEvent.ReleaseShared(i, instanceId));
	}

	/**
	 * Request {@code i}'s release to {@code instanceId} enters the other replicas' view.
	 */
	void releaseShared(int i, String instanceId) {
		long[] chain = this.routers.routed(i).blocks().chain();
		for (int r = 0; r < this.routers.count(); r++) {
			InstanceState state = r == this.routers.routerOf(i) ? null : this.routers.pool(r).instance(instanceId);
			if (state != null) {
				this.routers.pool(r).recordElsewhere(state, chain);
			}
		}
	}

	/**
	 * Request {@code i}, routed on arrival to {@code instanceId}, enters its router's
	 * tree; with the mesh, the insert reaches the other replicas at the next whole mesh
	 * sync interval plus the network delay.
	 */
	void dispatched(int i, String instanceId) {
		RoutingRequest request = this.routers.routed(i);
		if (this.meshNanos > 0 && request.blocks() != null) {
			this.events.schedule(nextFlush(this.routers.routerOf(i), this.meshNanos) + this.delayNanos,
					new SimEvent.MeshInsertSeen(i, instanceId));
		}
	}

	/**
	 * Request {@code i}'s insert into its router's tree of {@code instanceId} reaches the
	 * other replicas (SGLang Model Gateway mesh).
	 */
	void meshInsertSeen(int i, String instanceId) {
		for (int r = 0; r < this.routers.count(); r++) {
			if (r != this.routers.routerOf(i) && this.routers.policy(r) instanceof SglangTreePolicy sglang) {
				sglang.peerInserted(instanceId, this.routers.routed(i).blocks(), this.routers.pool(r));
			}
		}
	}

	/**
	 * Every router publishes its load on each instance with its flush (requests and
	 * uncached tokens in prefill, uncached tokens queued, the attention pairs in
	 * prefill); the others see it after the network delay, replacing what they knew.
	 */
	void flushLoad(int from, int to) {
		int joined = this.fleet.joined();
		long[][] load = new long[this.routers.count()][];
		for (int r = from; r < to; r++) {
			load[r] = new long[LOAD_FIELDS * joined];
			for (int k = 0; k < joined; k++) {
				InstanceState state = this.routers.pool(r).instance(this.fleet.id(k));
				if (state != null) {
					load[r][LOAD_FIELDS * k] = state.prefillRequests();
					load[r][LOAD_FIELDS * k + 1] = state.prefillTokens();
					load[r][LOAD_FIELDS * k + 2] = state.queuedTokens();
					load[r][LOAD_FIELDS * k + 3] = state.prefillPairs();
				}
			}
		}
		long now = this.events.now();
		this.events.schedule(now + this.delayNanos, new SimEvent.LoadSeen(from, to, load));
		this.events.schedule(now + this.shareNanos, new SimEvent.LoadFlush(from, to));
	}

	/** The load routers {@code [from, to)} published ({@link #flushLoad}) has arrived. */
	void loadPublished(int from, int to, long[][] load) {
		for (int r = from; r < to; r++) {
			this.published[r] = load[r];
		}
	}

	/**
	 * Router {@code r}'s view of its peers' load becomes the sum of what each other
	 * router last published.
	 */
	void peerLoadSeen(int r) {
		// Over the engine slots the latest publication covers (those joined when it was
		// made).
		int slots = 0;
		for (int o = 0; o < this.routers.count(); o++) {
			if (o != r && this.published[o] != null) {
				slots = Math.max(slots, this.published[o].length / LOAD_FIELDS);
			}
		}
		for (int k = 0; k < slots; k++) {
			InstanceState state = this.routers.pool(r).instance(this.fleet.id(k));
			if (state == null) {
				continue;
			}
			long requests = 0;
			long tokens = 0;
			long queuedTokens = 0;
			long pairs = 0;
			int at = LOAD_FIELDS * k;
			for (int o = 0; o < this.routers.count(); o++) {
				long[] load = this.published[o];
				if (o != r && load != null && at + LOAD_FIELDS <= load.length) {
					requests += load[at];
					tokens += load[at + 1];
					queuedTokens += load[at + 2];
					pairs += load[at + 3];
				}
			}
			// Every router publishes its pairs, as the gateway's replica sync does.
			state.peerLoad((int) requests, tokens, queuedTokens, pairs, tokens);
		}
	}

}

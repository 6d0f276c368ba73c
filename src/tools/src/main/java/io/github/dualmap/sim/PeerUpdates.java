package io.github.dualmap.sim;

import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SglangCacheAwarePolicy;

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

	PeerUpdates(SimulationConfig config, EventQueue events, Routers routers, EngineFleet fleet) {
		this.events = events;
		this.routers = routers;
		this.fleet = fleet;
		this.delayNanos = config.networkDelay().toNanos();
		this.shareNanos = config.prefixShareInterval() == null ? 0 : config.prefixShareInterval().toNanos();
		this.meshNanos = this.shareNanos > 0 && routers.count() > 1
				&& routers.policy(0) instanceof SglangCacheAwarePolicy
						? SglangCacheAwarePolicy.DEFAULT_MESH_SYNC_INTERVAL.toNanos() : 0;
		this.shareLoad = config.shareLoad();
	}

	/** Schedules the first load flush, if the routers share their load. */
	void start() {
		if (this.shareLoad && this.shareNanos > 0 && this.routers.count() > 1) {
			this.events.schedule(this.shareNanos, new SimEvent.LoadFlush());
		}
	}

	/**
	 * Request {@code i}'s blocks, just released to {@code instanceId} by its router,
	 * reach the other routers with the router's next flush: at the next multiple of the
	 * sync interval, plus the network delay.
	 */
	void released(int i, String instanceId) {
		if (this.shareNanos == 0 || this.routers.count() < 2 || this.routers.routed(i).blocks() == null) {
			return;
		}
		long now = this.events.now();
		this.events.schedule((now / this.shareNanos + 1) * this.shareNanos + this.delayNanos,
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
			long now = this.events.now();
			this.events.schedule((now / this.meshNanos + 1) * this.meshNanos + this.delayNanos,
					new SimEvent.MeshInsertSeen(i, instanceId));
		}
	}

	/**
	 * Request {@code i}'s insert into its router's tree of {@code instanceId} reaches the
	 * other replicas (SGLang Model Gateway mesh).
	 */
	void meshInsertSeen(int i, String instanceId) {
		for (int r = 0; r < this.routers.count(); r++) {
			if (r != this.routers.routerOf(i) && this.routers.policy(r) instanceof SglangCacheAwarePolicy sglang) {
				sglang.peerInserted(instanceId, this.routers.routed(i).blocks(), this.routers.pool(r));
			}
		}
	}

	/**
	 * Every router publishes its load on each instance with its flush (requests and
	 * uncached tokens in prefill, uncached tokens queued); the others see it after the
	 * network delay, replacing what they knew.
	 */
	void flushLoad() {
		int joined = this.fleet.joined();
		long[][] load = new long[this.routers.count()][3 * joined];
		for (int r = 0; r < this.routers.count(); r++) {
			for (int k = 0; k < joined; k++) {
				InstanceState state = this.routers.pool(r).instance(this.fleet.id(k));
				if (state != null) {
					load[r][3 * k] = state.prefillRequests();
					load[r][3 * k + 1] = state.prefillTokens();
					load[r][3 * k + 2] = state.queuedTokens();
				}
			}
		}
		long now = this.events.now();
		this.events.schedule(now + this.delayNanos, new SimEvent.LoadSeen(load));
		this.events.schedule(now + this.shareNanos, new SimEvent.LoadFlush());
	}

	/** Router {@code r}'s view of its peers' load becomes {@code load}'s. */
	void peerLoadSeen(int r, long[][] load) {
		for (int k = 0; k < load[r].length / 3; k++) {
			InstanceState state = this.routers.pool(r).instance(this.fleet.id(k));
			if (state == null) {
				continue;
			}
			long requests = 0;
			long tokens = 0;
			long queuedTokens = 0;
			for (int o = 0; o < this.routers.count(); o++) {
				if (o != r) {
					requests += load[o][3 * k];
					tokens += load[o][3 * k + 1];
					queuedTokens += load[o][3 * k + 2];
				}
			}
			state.peerLoad((int) requests, tokens, queuedTokens);
		}
	}

}

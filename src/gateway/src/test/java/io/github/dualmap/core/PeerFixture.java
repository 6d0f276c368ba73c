package io.github.dualmap.core;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Small pools, prompts and dispatches for the peer policy tests: a manual clock, 16-token
 * blocks, and the same choose / dispatch / onDispatched sequence the gateway and the
 * simulator run.
 */
final class PeerFixture {

	static final int BLOCK = 16;

	final AtomicLong now = new AtomicLong(1_000_000_000L);

	final SchedulerSettings settings = SchedulerSettings.custom().blockTokens(BLOCK).build();

	final InstancePool pool = new InstancePool("test", settings, now::get);

	private final AtomicInteger ids = new AtomicInteger();

	PeerFixture(String... instances) {
		members(instances);
	}

	void members(String... instances) {
		pool.updateMembership(Arrays.stream(instances).map(id -> new RingMember(id, 1.0)).toList());
	}

	InstanceState instance(String id) {
		InstanceState s = pool.instance(id);
		if (s == null) {
			throw new IllegalArgumentException("no instance " + id);
		}
		return s;
	}

	/** A prompt of the given chain, every block full. */
	static PromptBlocks prompt(long... chain) {
		return new PromptBlocks(chain, BLOCK, chain.length * BLOCK);
	}

	RoutingRequest request(PromptBlocks blocks) {
		return new RoutingRequest("r" + ids.incrementAndGet(), blocks, settings.defaultSloNanos(), now.get());
	}

	RoutingRequest unparsed() {
		return new RoutingRequest("r" + ids.incrementAndGet(), null, settings.defaultSloNanos(), now.get());
	}

	/** A request chosen, dispatched and announced to the policy. */
	Routed route(RoutingPolicy policy, RoutingRequest request) {
		Decision d = policy.choose(request, pool);
		if (d == null) {
			throw new IllegalStateException("no decision for " + request);
		}
		InstancePool.InFlight handle = pool.dispatch(request, d);
		policy.onDispatched(request, d, pool);
		return new Routed(request, d, handle);
	}

	/** Dispatches {@code request} to {@code instanceId} regardless of any policy. */
	Routed place(RoutingPolicy policy, RoutingRequest request, String instanceId, int uncached) {
		Decision d = new Decision(instanceId, Reason.LOAD, request.promptTokens() - uncached, uncached, -1);
		InstancePool.InFlight handle = pool.dispatch(request, d);
		policy.onDispatched(request, d, pool);
		return new Routed(request, d, handle);
	}

	/** {@code n} unparsed requests in flight on {@code instanceId} (past prefill). */
	void busy(RoutingPolicy policy, String instanceId, int n) {
		for (int i = 0; i < n; i++) {
			place(policy, unparsed(), instanceId, 0).handle().firstToken();
		}
	}

	void finish(RoutingPolicy policy, Routed routed) {
		routed.handle().finish();
		policy.onFinished(routed.request(), routed.decision().instanceId(), pool);
	}

	void scrape(String id, int waiting, double kvUsage) {
		instance(id).updateEngine(new EngineSnapshot(now.get(), waiting, 0, kvUsage, -1, -1, 0));
	}

	record Routed(RoutingRequest request, Decision decision, InstancePool.InFlight handle) {
	}

}

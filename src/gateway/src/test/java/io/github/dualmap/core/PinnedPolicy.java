package io.github.dualmap.core;

import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * A test policy that places every request on the instance a function names (when it
 * accepts work, else on none), with the cached prefix read from that instance's shadow
 * index as a real policy would. Records the routing key once per request, like DualMap.
 */
final class PinnedPolicy implements RoutingPolicy {

	private final Function<RoutingRequest, String> target;

	int dispatched;

	int finished;

	private final Reason reason;

	PinnedPolicy(Function<RoutingRequest, String> target) {
		this(target, Reason.AFFINITY);
	}

	private PinnedPolicy(Function<RoutingRequest, String> target, Reason reason) {
		this.target = target;
		this.reason = reason;
	}

	static PinnedPolicy to(String id) {
		return new PinnedPolicy(r -> id);
	}

	/**
	 * Like {@link #to}, with the gateway's reason for a request continuing stored state
	 * there.
	 */
	static PinnedPolicy holding(String id) {
		return new PinnedPolicy(r -> id, Reason.PINNED);
	}

	@Override
	public String name() {
		return "pinned";
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		PromptBlocks blocks = request.blocks();
		if (blocks != null) {
			pool.routingKey(blocks);
		}
		InstanceState s = pool.instance(target.apply(request));
		if (s == null || !s.acceptsNewWork()) {
			return pool.instances()
				.stream()
				.filter(InstanceState::acceptsNewWork)
				.findFirst()
				.map(o -> Decision.of(o.id(), Reason.FALLBACK, request))
				.orElse(null);
		}
		int cached = blocks == null ? 0 : blocks.tokensFor(s.shadow().peekMatchedBlocks(blocks.chain()));
		return new Decision(s.id(), this.reason, cached, request.promptTokens() - cached, -1);
	}

	@Override
	public synchronized void onDispatched(RoutingRequest request, Decision decision, InstancePool pool) {
		dispatched++;
	}

	@Override
	public synchronized void onFinished(RoutingRequest request, String instanceId, InstancePool pool) {
		finished++;
	}

}

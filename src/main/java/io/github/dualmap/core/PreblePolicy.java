package io.github.dualmap.core;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * Preble's E2 global scheduling (Srivatsa et al., ICLR 2025, the E2 algorithm): exploit
 * when an instance holds more cached tokens of the prompt than the prompt has new ones
 * (take the longest match, the lighter instance among equals); otherwise explore: take
 * the instance with the lowest {@code load + prefill cost of this request there}, where
 * load is the prefill and decode time of the requests it received in a recent window.
 * Cached tokens come from the pool's shadow index (this router's own routing, sized by
 * the engine's KV capacity) as Preble's global prefix tree mirrors what it sent to each
 * GPU.
 */
public final class PreblePolicy implements RoutingPolicy {

	/** The registry name. */
	public static final String NAME = "preble";

	/** The load window H. */
	public static final Duration DEFAULT_WINDOW = Duration.ofMinutes(3);

	/** Requests remembered per instance at most, whatever the window. */
	public static final int DEFAULT_MAX_WINDOW_REQUESTS = 16_384;

	private final long windowNanos;

	private final int maxWindowRequests;

	private final PerInstance<LoadWindow> windows = new PerInstance<>(LoadWindow::new);

	private final Map<String, WindowEntry> running = new ConcurrentHashMap<>();

	private final TieBreaker ties = new TieBreaker();

	public PreblePolicy() {
		this(DEFAULT_WINDOW, DEFAULT_MAX_WINDOW_REQUESTS);
	}

	/**
	 * @param window load history H, > 0
	 * @param maxWindowRequests bound on remembered requests per instance, > 0
	 */
	public PreblePolicy(Duration window, int maxWindowRequests) {
		if (window.isNegative() || window.isZero()) {
			throw new IllegalArgumentException("window must be > 0 but was " + window);
		}
		if (maxWindowRequests <= 0) {
			throw new IllegalArgumentException("maxWindowRequests must be > 0 but was " + maxWindowRequests);
		}
		this.windowNanos = window.toNanos();
		this.maxWindowRequests = maxWindowRequests;
	}

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		List<InstanceState> accepting = pool.acceptingInstances();
		if (accepting.isEmpty()) {
			return null;
		}
		long now = pool.now();
		Map<InstanceState, Double> loads = new HashMap<>();
		for (InstanceState s : accepting) {
			loads.put(s, window(s.id()).loadNanos(now));
		}
		PromptBlocks blocks = request.blocks();
		if (blocks == null) {
			return Decision.of(ties.lowest(accepting, loads::get).id(), Reason.LOAD, request);
		}
		Map<InstanceState, Integer> cached = new HashMap<>();
		int best = 0;
		for (InstanceState s : accepting) {
			int c = blocks.tokensFor(s.shadow().peekMatchedBlocks(blocks.chain()));
			cached.put(s, c);
			best = Math.max(best, c);
		}
		if (best > blocks.promptTokens() - best) {
			int longest = best;
			List<InstanceState> holders = accepting.stream().filter(s -> cached.get(s) == longest).toList();
			InstanceState chosen = ties.lowest(holders, loads::get);
			return new Decision(chosen.id(), Reason.AFFINITY, best, blocks.promptTokens() - best, -1);
		}
		double nanosPerToken = pool.estimator().nanosPerToken();
		InstanceState chosen = ties.lowest(accepting,
				s -> loads.get(s) + nanosPerToken * (blocks.promptTokens() - cached.get(s)));
		int c = cached.get(chosen);
		return new Decision(chosen.id(), Reason.LOAD, c, blocks.promptTokens() - c, -1);
	}

	@Override
	public void onDispatched(RoutingRequest request, Decision decision, InstancePool pool) {
		if (pool.instance(decision.instanceId()) == null) {
			return;
		}
		long now = pool.now();
		long prefillNanos = (long) (pool.estimator().nanosPerToken() * Math.max(0, decision.uncachedTokens()));
		WindowEntry entry = new WindowEntry(decision.instanceId(), now, prefillNanos);
		window(decision.instanceId()).add(entry);
		WindowEntry previous = running.put(request.id(), entry);
		if (previous != null) {
			// A retry re-dispatched the request: its first attempt ends here.
			previous.finish(now);
		}
	}

	@Override
	public void onFinished(RoutingRequest request, String instanceId, InstancePool pool) {
		WindowEntry entry = running.remove(request.id());
		if (entry != null) {
			entry.finish(pool.now());
		}
	}

	@Override
	public void onMembershipChanged(InstancePool pool) {
		Set<String> members = windows.retainMembers(pool);
		running.values().removeIf(e -> !members.contains(e.instanceId()));
	}

	/**
	 * Load of {@code instanceId} over the window: estimated prefill time plus observed
	 * time after prefill of every request it received, in nanoseconds.
	 */
	public double loadNanos(String instanceId, long nowNanos) {
		LoadWindow w = windows.find(instanceId);
		return w == null ? 0 : w.loadNanos(nowNanos);
	}

	private LoadWindow window(String instanceId) {
		return windows.get(instanceId);
	}

	/** One request as the load window sees it. */
	private static final class WindowEntry {

		private final String instanceId;

		private final long dispatchedAt;

		private final long prefillNanos;

		private volatile long finishedAt = -1;

		WindowEntry(String instanceId, long dispatchedAt, long prefillNanos) {
			this.instanceId = instanceId;
			this.dispatchedAt = dispatchedAt;
			this.prefillNanos = prefillNanos;
		}

		String instanceId() {
			return instanceId;
		}

		void finish(long now) {
			if (finishedAt < 0) {
				finishedAt = now;
			}
		}

		/**
		 * Prefill (estimated) plus decode: the rest of its time on the instance so far,
		 * which is what Preble's decode-time term measures with its profiled model.
		 */
		double costNanos(long now) {
			long end = finishedAt < 0 ? now : finishedAt;
			return prefillNanos + Math.max(0, end - dispatchedAt - prefillNanos);
		}

	}

	/** Requests an instance received within the window, oldest first. */
	private final class LoadWindow {

		private final Deque<WindowEntry> entries = new ArrayDeque<>();

		synchronized void add(WindowEntry e) {
			entries.addLast(e);
			if (entries.size() > maxWindowRequests) {
				entries.removeFirst();
			}
		}

		synchronized double loadNanos(long now) {
			while (!entries.isEmpty() && now - entries.peekFirst().dispatchedAt > windowNanos) {
				entries.removeFirst();
			}
			double sum = 0;
			for (WindowEntry e : entries) {
				sum += e.costNanos(now);
			}
			return sum;
		}

	}

}

package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.dualmap.engine.EngineProfile;
import io.github.dualmap.engine.IntLruList;
import io.github.dualmap.sim.trace.Trace;
import io.github.dualmap.sim.trace.TraceRequest;

/**
 * The most a pool could serve of a workload, whatever the router: the engine time its
 * measured requests need when every prefix an earlier request computed is still cached
 * (an infinite KV cache, as if every request went to the instance holding its longest
 * prefix) and no step pays its fixed cost. An engine is busy at most all the time, so
 * {@code instances / busySecondsPerRequest} requests per second is an upper bound on any
 * policy's capacity on {@code instances} engines of the profile; a real pool also loses
 * prefixes to eviction, pays {@link EngineProfile#t0Seconds() t0} per step and needs idle
 * time to keep queues and TTFT short.
 * <p>
 * Costs follow {@link io.github.dualmap.engine.Engine}'s step model exactly: a prompt of
 * P tokens with h cached costs
 * {@code cLin * (P - h) + cAttn * ((P - h) * h + (P - h)^2 / 2)} (chunking does not
 * change the sum), and each of its O - 1 decode steps after the first token
 * {@code cLin + cKv * context}. The cached prefix is the engine's: full blocks of the
 * chain an earlier request computed, at most {@code (P - 1) / blockTokens} of them.
 *
 * @param measured requests after the warm-up, the ones costed
 * @param reusableShare share of the measured requests' prompt tokens an infinite cache
 * would hold
 * @param busySecondsPerRequest mean engine time of a measured request with that reuse
 * @param coldBusySecondsPerRequest mean engine time of a measured request with no reuse
 */
public record WorkBound(int measured, double reusableShare, double busySecondsPerRequest,
		double coldBusySecondsPerRequest) {

	public WorkBound {
		if (measured <= 0) {
			throw new IllegalArgumentException("measured must be > 0 but was " + measured);
		}
	}

	/**
	 * The bound of {@code trace} on engines of {@code profile}; the first {@code warmup}
	 * requests fill the cache but are not costed.
	 * @throws IllegalArgumentException when nothing is left after the warm-up, or the
	 * trace's blocks are not a multiple of the engine's
	 */
	public static WorkBound of(Trace trace, EngineProfile profile, int warmup) {
		int blockTokens = check(trace, profile, warmup);
		int perId = trace.blockTokens() / blockTokens;
		PrefixTrie trie = new PrefixTrie();
		return cost(trace, profile, warmup, r -> {
			int prompt = r.inputTokens();
			// vLLM recomputes at least the last prompt token to produce logits.
			int cached = Math.min(trie.cachedBlocks(r.hashIds(), perId), (prompt - 1) / blockTokens);
			trie.add(r.hashIds(), perId, prompt / blockTokens);
			return cached;
		});
	}

	/**
	 * Tokens of each request's prompt an infinite cache holds when it arrives (the
	 * costing of {@link #of}): full engine blocks of the chain an earlier request
	 * computed, at most {@code (P - 1) / blockTokens} of them; indexed as the trace.
	 */
	static int[] cachedTokens(Trace trace, EngineProfile profile) {
		int blockTokens = profile.blockTokens();
		if (trace.blockTokens() % blockTokens != 0) {
			throw new IllegalArgumentException("trace blocks of " + trace.blockTokens()
					+ " tokens are not a multiple of the engine's " + blockTokens);
		}
		int perId = trace.blockTokens() / blockTokens;
		PrefixTrie trie = new PrefixTrie();
		List<TraceRequest> requests = trace.requests();
		int[] out = new int[requests.size()];
		for (int i = 0; i < out.length; i++) {
			TraceRequest r = requests.get(i);
			int prompt = r.inputTokens();
			out[i] = Math.min(trie.cachedBlocks(r.hashIds(), perId), (prompt - 1) / blockTokens) * blockTokens;
			trie.add(r.hashIds(), perId, prompt / blockTokens);
		}
		return out;
	}

	/**
	 * Engine blocks of a request's prompt found cached; called for every request of the
	 * trace in order, so it can keep its cache's state.
	 */
	@FunctionalInterface
	private interface Reuse {

		int cachedBlocks(TraceRequest request);

	}

	/** Costs the measured requests with the cached prefixes {@code reuse} finds. */
	private static WorkBound cost(Trace trace, EngineProfile profile, int warmup, Reuse reuse) {
		double warm = 0;
		double cold = 0;
		long reused = 0;
		long prompts = 0;
		List<TraceRequest> requests = trace.requests();
		for (int i = 0; i < requests.size(); i++) {
			TraceRequest r = requests.get(i);
			int cached = reuse.cachedBlocks(r) * profile.blockTokens();
			if (i < warmup) {
				continue;
			}
			warm += seconds(profile, r.inputTokens(), cached, r.outputTokens());
			cold += seconds(profile, r.inputTokens(), 0, r.outputTokens());
			reused += cached;
			prompts += r.inputTokens();
		}
		int measured = requests.size() - warmup;
		return new WorkBound(measured, (double) reused / prompts, warm / measured, cold / measured);
	}

	/**
	 * The same costing with the engines' caches pooled into one LRU cache of
	 * {@code instances} engines' KV capacity: requests served one after another in
	 * arrival order, a request's blocks becoming evictable when it is served, its tail
	 * blocks ahead of its prefix, least recently released first (as
	 * {@link io.github.dualmap.engine.Engine}'s free queue). No block is held twice and
	 * none is pinned by a running request, so on one pool this is about the most reuse a
	 * router can get from engines that evict least recently used blocks; it is not a
	 * bound for every router, since several caches fed apart (a router that keeps one-off
	 * prompts away from reused ones) can keep more than one LRU cache does.
	 * @throws IllegalArgumentException as {@link #of}, or when {@code instances} is not
	 * positive
	 */
	public static WorkBound pooledLru(Trace trace, EngineProfile profile, int warmup, int instances) {
		check(trace, profile, warmup);
		return cost(trace, profile, warmup, pooledLruReuse(trace, profile, instances));
	}

	/**
	 * Engine seconds of each request of {@code trace} (indexed as the trace) with the
	 * cached prefixes of {@link #pooledLru}'s cache of {@code instances} engines.
	 * @throws IllegalArgumentException as {@link #pooledLru}
	 */
	static double[] pooledLruWorkSeconds(Trace trace, EngineProfile profile, int instances) {
		check(trace, profile, 0);
		Reuse reuse = pooledLruReuse(trace, profile, instances);
		List<TraceRequest> requests = trace.requests();
		double[] out = new double[requests.size()];
		for (int i = 0; i < out.length; i++) {
			TraceRequest r = requests.get(i);
			out[i] = seconds(profile, r.inputTokens(), reuse.cachedBlocks(r) * profile.blockTokens(), r.outputTokens());
		}
		return out;
	}

	/**
	 * The cached prefixes of {@link #pooledLru}: a pooled LRU cache of {@code instances}
	 * engines, fed every request of the trace in order.
	 */
	private static Reuse pooledLruReuse(Trace trace, EngineProfile profile, int instances) {
		if (instances <= 0) {
			throw new IllegalArgumentException("instances must be > 0 but was " + instances);
		}
		int blockTokens = profile.blockTokens();
		int perId = trace.blockTokens() / blockTokens;
		long capacity = instances * (profile.kvCapacityTokens() / blockTokens);
		PrefixTrie trie = new PrefixTrie();
		LruBlocks lru = new LruBlocks();
		return r -> {
			int prompt = r.inputTokens();
			int[] blocks = trie.blocks(r.hashIds(), perId, Math.min(prompt / blockTokens, r.hashIds().length * perId));
			int cap = (prompt - 1) / blockTokens;
			int cached = 0;
			while (cached < blocks.length && cached < cap && lru.holds(blocks[cached])) {
				cached++;
			}
			lru.release(blocks, capacity);
			return cached;
		};
	}

	private static int check(Trace trace, EngineProfile profile, int warmup) {
		int blockTokens = profile.blockTokens();
		if (trace.blockTokens() % blockTokens != 0) {
			throw new IllegalArgumentException("trace blocks of " + trace.blockTokens()
					+ " tokens are not a multiple of the engine's " + blockTokens);
		}
		if (warmup < 0 || warmup >= trace.size()) {
			throw new IllegalArgumentException(
					"warmup must be in [0, " + trace.size() + ") for this trace but was " + warmup);
		}
		return blockTokens;
	}

	/** Evictable blocks, least recently released first. */
	private static final class LruBlocks {

		private final IntLruList blocks = new IntLruList(1024);

		boolean holds(int block) {
			return this.blocks.contains(block);
		}

		/**
		 * A request's blocks become the most recently released, its last block first (so
		 * it goes before its prefix); the least recently released make room.
		 */
		void release(int[] blocks, long capacity) {
			for (int block : blocks) {
				if (holds(block)) {
					this.blocks.remove(block);
				}
			}
			int keep = (int) Math.min(blocks.length, capacity);
			for (int k = keep - 1; k >= 0; k--) {
				while (this.blocks.size() >= capacity) {
					this.blocks.remove(this.blocks.first());
				}
				this.blocks.addLast(blocks[k]);
			}
		}

	}

	/** Engine time of one request, step overhead left out. */
	static double seconds(EngineProfile profile, int prompt, int cached, int output) {
		long fresh = prompt - cached;
		long decodes = output - 1L;
		// The sums over its steps, as one step of the profile's cost less its fixed part.
		double pairs = (double) fresh * cached + (double) fresh * fresh / 2;
		long context = decodes * prompt + decodes * (decodes + 1) / 2;
		return profile.stepSeconds(fresh + decodes, pairs, context) - profile.t0Seconds();
	}

	/**
	 * Requests per second that would keep {@code instances} engines busy all the time.
	 */
	public double maxRate(int instances) {
		return instances / busySecondsPerRequest;
	}

	/** The same without any prefix reuse. */
	public double coldMaxRate(int instances) {
		return instances / coldBusySecondsPerRequest;
	}

	/**
	 * Hash-id prefixes seen so far, each with the most full engine blocks any request
	 * through it had: engine block {@code b} of a prompt is cached when the node of its
	 * first {@code b / perId + 1} ids has seen more than {@code b} blocks.
	 */
	private static final class PrefixTrie {

		private record Edge(int parent, long id) {
		}

		private final Map<Edge, Integer> children = new HashMap<>();

		private final List<int[]> maxBlocks = new ArrayList<>();

		int cachedBlocks(long[] ids, int perId) {
			int node = -1;
			int cached = 0;
			for (long id : ids) {
				Integer child = children.get(new Edge(node, id));
				if (child == null) {
					return cached;
				}
				node = child;
				int seen = maxBlocks.get(node)[0];
				int end = cached + perId;
				if (seen < end) {
					return Math.max(cached, seen);
				}
				cached = end;
			}
			return cached;
		}

		/**
		 * Dense ids of a prompt's {@code fullBlocks} engine blocks (block {@code j} of
		 * the node of its first {@code k + 1} ids is {@code node * perId + j}), adding
		 * the nodes it is the first to reach.
		 */
		int[] blocks(long[] ids, int perId, int fullBlocks) {
			int[] out = new int[fullBlocks];
			int node = -1;
			for (int b = 0; b < fullBlocks; b++) {
				if (b % perId == 0) {
					node = child(node, ids[b / perId]);
				}
				out[b] = node * perId + b % perId;
			}
			return out;
		}

		private int child(int parent, long id) {
			Edge edge = new Edge(parent, id);
			Integer child = children.get(edge);
			if (child == null) {
				child = maxBlocks.size();
				maxBlocks.add(new int[] { 0 });
				children.put(edge, child);
			}
			return child;
		}

		void add(long[] ids, int perId, int fullBlocks) {
			int node = -1;
			for (int k = 0; k < ids.length && k * perId < fullBlocks; k++) {
				node = child(node, ids[k]);
				int[] seen = maxBlocks.get(node);
				seen[0] = Math.max(seen[0], fullBlocks);
			}
		}

	}

}

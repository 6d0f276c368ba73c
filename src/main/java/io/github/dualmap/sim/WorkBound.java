package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.dualmap.engine.EngineProfile;
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
		int blockTokens = profile.blockTokens();
		if (trace.blockTokens() % blockTokens != 0) {
			throw new IllegalArgumentException("trace blocks of " + trace.blockTokens()
					+ " tokens are not a multiple of the engine's " + blockTokens);
		}
		if (warmup < 0 || warmup >= trace.size()) {
			throw new IllegalArgumentException(
					"warmup must be in [0, " + trace.size() + ") for this trace but was " + warmup);
		}
		int perId = trace.blockTokens() / blockTokens;
		PrefixTrie trie = new PrefixTrie();
		double warm = 0;
		double cold = 0;
		long reusable = 0;
		long prompts = 0;
		List<TraceRequest> requests = trace.requests();
		for (int i = 0; i < requests.size(); i++) {
			TraceRequest r = requests.get(i);
			int prompt = r.inputTokens();
			int fullBlocks = prompt / blockTokens;
			// vLLM recomputes at least the last prompt token to produce logits.
			int cachedBlocks = Math.min(trie.cachedBlocks(r.hashIds(), perId), (prompt - 1) / blockTokens);
			trie.add(r.hashIds(), perId, fullBlocks);
			if (i < warmup) {
				continue;
			}
			int cached = cachedBlocks * blockTokens;
			warm += seconds(profile, prompt, cached, r.outputTokens());
			cold += seconds(profile, prompt, 0, r.outputTokens());
			reusable += cached;
			prompts += prompt;
		}
		int measured = requests.size() - warmup;
		return new WorkBound(measured, (double) reusable / prompts, warm / measured, cold / measured);
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

		void add(long[] ids, int perId, int fullBlocks) {
			int node = -1;
			for (int k = 0; k < ids.length && k * perId < fullBlocks; k++) {
				Edge edge = new Edge(node, ids[k]);
				Integer child = children.get(edge);
				if (child == null) {
					child = maxBlocks.size();
					maxBlocks.add(new int[] { 0 });
					children.put(edge, child);
				}
				node = child;
				int[] seen = maxBlocks.get(node);
				seen[0] = Math.max(seen[0], fullBlocks);
			}
		}

	}

}

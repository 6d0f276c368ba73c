package io.github.dualmap.core;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * Preble's global scheduler (Srivatsa et al., ICLR 2025) as its published code runs it
 * ({@code preble/global_scheduler_with_time.py} of WukLab/preble), in prompt blocks.
 * <p>
 * Prompts form a tree of <em>important nodes</em>: a request whose new part (the tokens
 * past the longest prefix seen before) is at least as long as that prefix starts a node
 * of its own; a request with a shorter new part belongs to the deepest node its prompt
 * extends. Every node carries an <em>allocation</em>, the instances it was sent to.
 * <ul>
 * <li><b>Exploit</b> (new part shorter than the seen prefix): the least loaded instance
 * of the node's allocation.</li>
 * <li><b>Explore</b> (otherwise): the least loaded instance of the pool; the request's
 * node is allocated there.</li>
 * <li><b>Load</b> of an instance: the sum over nodes allocated to it of the node's window
 * prefill cost ({@code miss rate x requests in the window x prefill time of its
 * own tokens / instances allocated}) and decode cost ({@code its requests running there
 * x decode time per request there}). The window is 3 minutes; a node without requests in
 * the window is forgotten.</li>
 * <li><b>Rebalancing</b> once {@value #REBALANCE_AFTER_PER_INSTANCE} x N requests were
 * routed, after every decision: while the most loaded instance carries at least
 * {@value #HIGH_LOAD_THRESHOLD} x the least loaded one's load (counting nodes with at
 * least two requests in the window), its cheapest nodes move (with their subtrees) to the
 * least loaded one until the two are within the threshold or a move would invert them; a
 * single node that makes an instance heavy is replicated to the lightest instead; then
 * the next heaviest against the (updated) lightest.</li>
 * </ul>
 * Simplified: the seen prefix is the longest of the pool's shadow-index matches (this
 * router's routing) and the deepest node still in the window (Preble's tree keeps every
 * prompt); prefill time is the pool's linear TTFT model; decode time per request is an
 * average of observed times after prefill (Preble: profiled TPOT x output length); a
 * single-node replication does not wait for Preble's TTFT overload detector. One lock
 * guards the whole state, as Preble's scheduler holds one.
 */
public final class PreblePolicy implements RoutingPolicy {

	/** The registry name. */
	public static final String NAME = "preble";

	/** Preble's histogram window. */
	public static final Duration DEFAULT_WINDOW = Duration.ofMinutes(3);

	/** Requests remembered in the window at most, whatever its length. */
	public static final int DEFAULT_MAX_WINDOW_REQUESTS = 65_536;

	/** Preble's {@code HIGH_LOAD_THRESHOLD}. */
	public static final double HIGH_LOAD_THRESHOLD = 1.5;

	/** Rebalancing starts after this many routed requests per instance (Preble: 50). */
	public static final int REBALANCE_AFTER_PER_INSTANCE = 50;

	/**
	 * Nodes with fewer requests in the window do not count in rebalancing (Preble: 2).
	 */
	static final int MIN_COUNT = 2;

	private static final int MAX_PENDING_PLACEMENTS = 65_536;

	/** Dispatches between two fresh computations of the per-instance sums. */
	private static final int RESUM_EVERY = 4096;

	/** Weight of one observation in the per-instance decode time (about 200 requests). */
	private static final double DECODE_ALPHA = 1.0 / 200;

	private final long windowNanos;

	private final int maxWindowRequests;

	private final TieBreaker ties = new TieBreaker();

	// Everything below is guarded by this.
	private final Map<Long, Node> nodes = new HashMap<>();

	private final Deque<WindowEntry> window = new ArrayDeque<>();

	private final Map<String, Running> running = new HashMap<>();

	private final Map<String, Double> decodeNanos = new HashMap<>();

	// Per instance, sums over the nodes allocated to it, kept by attach/detach around
	// every change of a node, so a decision reads N sums instead of every node.
	private final Map<String, Sums> sums = new HashMap<>();

	private final Map<String, Set<Node>> byInstance = new HashMap<>();

	// Tree matches of requests decided and not yet dispatched (a rejected request never
	// is): bounded.
	private final Map<String, TreeMatch> pendingMatches = new LinkedHashMap<>(16, 0.75f, false) {

		@Override
		protected boolean removeEldestEntry(Map.Entry<String, TreeMatch> eldest) {
			return size() > MAX_PENDING_PLACEMENTS;
		}

	};

	private long routed;

	public PreblePolicy() {
		this(DEFAULT_WINDOW, DEFAULT_MAX_WINDOW_REQUESTS);
	}

	/**
	 * @param window load history, > 0
	 * @param maxWindowRequests bound on the requests the window remembers, > 0
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
	public synchronized @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
		List<InstanceState> accepting = pool.acceptingInstances();
		if (accepting.isEmpty()) {
			return null;
		}
		expire(pool.now());
		double perToken = pool.estimator().nanosPerToken();
		Map<String, Double> loads = loads(accepting, perToken, false);
		PromptBlocks blocks = request.blocks();
		if (blocks == null) {
			return Decision.of(lightest(accepting, loads).id(), Reason.LOAD, request);
		}
		Holders holders = holders(blocks.chain(), accepting);
		TreeMatch p = match(blocks, holders.longest());
		// The shadow index learns the prompt on dispatch: remember where it stood now.
		this.pendingMatches.put(request.id(), p);
		List<InstanceState> choices = p.exploit() ? exploitChoices(holders, p.node(), accepting) : accepting;
		InstanceState chosen = lightest(choices, loads);
		int cached = blocks.tokensFor(chosen.shadow().peekMatchedBlocks(blocks.chain()));
		return new Decision(chosen.id(), p.exploit() ? Reason.AFFINITY : Reason.LOAD, cached,
				blocks.promptTokens() - cached, -1);
	}

	@Override
	public synchronized void onDispatched(RoutingRequest request, Decision decision, InstancePool pool) {
		if (pool.instance(decision.instanceId()) == null) {
			return;
		}
		long now = pool.now();
		expire(now);
		Running previous = this.running.remove(request.id());
		if (previous != null) {
			// A retry re-dispatched the request: its first attempt ends here.
			end(previous);
		}
		String instance = decision.instanceId();
		long prefillNanos = (long) (pool.estimator().nanosPerToken() * Math.max(0, decision.uncachedTokens()));
		PromptBlocks blocks = request.blocks();
		List<Node> path = new ArrayList<>();
		if (blocks != null) {
			TreeMatch chosen = this.pendingMatches.remove(request.id());
			TreeMatch p = chosen != null ? chosen
					: match(blocks, holders(blocks.chain(), pool.acceptingInstances()).longest());
			// A node the window forgot since the decision no longer counts.
			Node found = live(p.node());
			Node node = p.exploit() && found != null ? found : node(blocks, p.contextTokens(), found);
			for (Node n = node; n != null; n = n.parent) {
				detach(n);
				// Preble allocates the instance to the leaf and every ancestor.
				n.allocation.add(instance);
				n.active.merge(instance, 1, Integer::sum);
				if (n == node) {
					n.count++;
					n.promptTokens += blocks.promptTokens();
					n.hitTokens += p.contextTokens();
				}
				attach(n);
				path.add(n);
			}
			this.window.addLast(new WindowEntry(now, node, blocks.promptTokens(), p.contextTokens()));
			if (this.window.size() > this.maxWindowRequests) {
				forget(this.window.removeFirst());
			}
		}
		this.running.put(request.id(), new Running(instance, now, prefillNanos, path));
		this.routed++;
		if (this.routed % RESUM_EVERY == 0) {
			// Incremental floating-point sums drift; start them afresh now and then.
			resum();
		}
		List<InstanceState> accepting = pool.acceptingInstances();
		if (this.routed >= (long) REBALANCE_AFTER_PER_INSTANCE * accepting.size() && accepting.size() > 1) {
			rebalance(accepting, pool.estimator().nanosPerToken());
		}
	}

	@Override
	public synchronized void onFinished(RoutingRequest request, String instanceId, InstancePool pool) {
		Running r = this.running.remove(request.id());
		if (r == null) {
			return;
		}
		end(r);
		double observed = Math.max(0, pool.now() - r.dispatchedAt - r.prefillNanos);
		this.decodeNanos.merge(r.instance, observed, (old, x) -> old + DECODE_ALPHA * (x - old));
	}

	@Override
	public synchronized void onMembershipChanged(InstancePool pool) {
		Set<String> members = pool.memberIds();
		for (Node n : this.nodes.values()) {
			n.allocation.retainAll(members);
			n.active.keySet().retainAll(members);
		}
		resum();
		this.decodeNanos.keySet().retainAll(members);
		this.running.values().removeIf(r -> !members.contains(r.instance));
	}

	/**
	 * Load of {@code instanceId} as Preble's {@code current_allocation_per_gpu} computes
	 * it, in nanoseconds.
	 */
	public synchronized double loadNanos(String instanceId, InstancePool pool) {
		return load(instanceId, pool, false);
	}

	/**
	 * Load as rebalancing sees it: nodes with at least {@value #MIN_COUNT} requests only.
	 */
	synchronized double rebalancingLoadNanos(String instanceId, InstancePool pool) {
		return load(instanceId, pool, true);
	}

	private double load(String instanceId, InstancePool pool, boolean counted) {
		expire(pool.now());
		return loads(pool.instances(), pool.estimator().nanosPerToken(), counted).getOrDefault(instanceId, 0.0);
	}

	/**
	 * Recomputes the per-instance sums from the nodes; for tests of the incremental sums.
	 */
	synchronized void recomputeSums() {
		resum();
	}

	/** The instances the node of {@code blocks} is allocated to (empty if none). */
	public synchronized Set<String> allocationOf(PromptBlocks blocks) {
		Node n = this.nodes.get(blocks.chain()[fullBlocks(blocks) - 1]);
		return n == null ? Set.of() : Set.copyOf(n.allocation);
	}

	/** Blocks of the prompt that are full, at least one. */
	private static int fullBlocks(PromptBlocks blocks) {
		return Math.max(1, Math.min(blocks.depth(), blocks.promptTokens() / blocks.blockTokens()));
	}

	/**
	 * Where an exploit may go. Preble sends it to the allocation of the deepest node of
	 * its tree on the prompt's path that has one ({@code get_parent_gpu_allocation}), and
	 * every node a request passes gets its instance, so a conversation's next turn goes
	 * back where its previous turn went, not to any instance that ever served its system
	 * prompt. This model keeps important nodes only: the instances holding the longest
	 * routed prefix of the prompt stand for the deeper nodes' allocation, within the
	 * important node's allocation (a node that rebalancing moved takes its conversations
	 * along). When the routed prefix is shallower than the node (forgotten by the shadow
	 * index), the node's allocation; with neither, every accepting instance.
	 */
	private static List<InstanceState> exploitChoices(Holders holders, @Nullable Node node,
			List<InstanceState> accepting) {
		List<InstanceState> allocated = node == null ? List.of()
				: accepting.stream().filter(s -> node.allocation.contains(s.id())).toList();
		if (holders.longest() > 0 && (node == null || holders.longest() >= node.endBlocks)) {
			List<InstanceState> both = node == null ? holders.instances()
					: holders.instances().stream().filter(allocated::contains).toList();
			if (!both.isEmpty()) {
				return both;
			}
		}
		return allocated.isEmpty() ? accepting : allocated;
	}

	/**
	 * The longest prefix of a prompt this router routed (in blocks, from the shadow
	 * indexes) and the accepting instances holding that much; none when it is 0.
	 */
	private record Holders(int longest, List<InstanceState> instances) {
	}

	private static Holders holders(long[] chain, List<InstanceState> accepting) {
		int longest = 0;
		List<InstanceState> instances = new ArrayList<>();
		for (InstanceState s : accepting) {
			int m = s.shadow().peekMatchedBlocks(chain);
			if (m > longest) {
				longest = m;
				instances.clear();
			}
			if (m > 0 && m == longest) {
				instances.add(s);
			}
		}
		return new Holders(longest, instances);
	}

	/** Where a prompt stands in the tree: its seen prefix and the node it extends. */
	private record TreeMatch(boolean exploit, @Nullable Node node, int contextTokens) {

	}

	/**
	 * @param routedBlocks the longest prefix of the prompt this router routed, in blocks
	 */
	private TreeMatch match(PromptBlocks blocks, int routedBlocks) {
		long[] chain = blocks.chain();
		int seen = routedBlocks;
		Node deepest = null;
		for (int d = chain.length - 1; d >= 0 && deepest == null; d--) {
			deepest = this.nodes.get(chain[d]);
		}
		if (deepest != null) {
			seen = Math.max(seen, deepest.endBlocks);
		}
		int context = blocks.tokensFor(seen);
		boolean exploit = blocks.promptTokens() - context < context;
		return new TreeMatch(exploit, deepest, context);
	}

	/**
	 * The node a prompt starts (created on first use), keyed by its last full block: a
	 * partial last block changes when the conversation continues, so the next turn's
	 * prompt would not contain its hash.
	 */
	private Node node(PromptBlocks blocks, int contextTokens, @Nullable Node deepest) {
		int end = fullBlocks(blocks);
		long key = blocks.chain()[end - 1];
		Node existing = this.nodes.get(key);
		if (existing != null) {
			return existing;
		}
		Node parent = deepest != null && deepest.endBlocks < end ? deepest : null;
		Node created = new Node(key, end, blocks.promptTokens() - contextTokens, parent);
		if (parent != null) {
			parent.children.add(created);
		}
		this.nodes.put(key, created);
		return created;
	}

	private InstanceState lightest(List<InstanceState> among, Map<String, Double> loads) {
		return this.ties.lowest(among, s -> loads.getOrDefault(s.id(), 0.0));
	}

	/**
	 * Every instance's load: over all nodes allocated to it, or ({@code counted}) over
	 * those with at least {@value #MIN_COUNT} requests in the window.
	 */
	private Map<String, Double> loads(List<InstanceState> instances, double perToken, boolean counted) {
		Map<String, Double> loads = new HashMap<>();
		for (InstanceState i : instances) {
			Sums x = this.sums.get(i.id());
			double load = 0;
			if (x != null) {
				double decode = this.decodeNanos.getOrDefault(i.id(), 0.0);
				load = counted ? perToken * x.unitsCounted + decode * x.activeCounted
						: perToken * x.units + decode * x.active;
			}
			loads.put(i.id(), Math.max(0, load));
		}
		return loads;
	}

	/** Prefill cost of a node on each instance of its allocation, in token units. */
	private static double units(Node n) {
		double missRate = n.promptTokens == 0 ? 1 : 1 - (double) n.hitTokens / n.promptTokens;
		return missRate * n.count * n.ownTokens / Math.max(1, n.allocation.size());
	}

	/** Adds a node to the sums of the instances it is allocated to. */
	private void attach(Node n) {
		add(n, 1);
		for (String id : n.allocation) {
			this.byInstance.computeIfAbsent(id, k -> new LinkedHashSet<>()).add(n);
		}
	}

	/** Takes a node out of the sums: before any change to it. */
	private void detach(Node n) {
		add(n, -1);
		for (String id : n.allocation) {
			Set<Node> of = this.byInstance.get(id);
			if (of != null) {
				of.remove(n);
			}
		}
	}

	private void add(Node n, int sign) {
		double u = sign * units(n);
		boolean counted = n.count >= MIN_COUNT;
		for (String id : n.allocation) {
			Sums x = this.sums.computeIfAbsent(id, k -> new Sums());
			int a = sign * n.active.getOrDefault(id, 0);
			x.units += u;
			x.active += a;
			if (counted) {
				x.unitsCounted += u;
				x.activeCounted += a;
			}
		}
	}

	private void resum() {
		this.sums.clear();
		this.byInstance.clear();
		for (Node n : this.nodes.values()) {
			attach(n);
		}
	}

	/**
	 * {@code n} if it is still in the tree, {@code null} if the window forgot it (a
	 * forgotten node is out of the per-instance sums and must stay out).
	 */
	private @Nullable Node live(@Nullable Node n) {
		return n != null && this.nodes.get(n.key) == n ? n : null;
	}

	/** A request leaves the nodes it ran under. */
	private void end(Running r) {
		for (Node n : r.path) {
			boolean attached = live(n) != null;
			if (attached) {
				detach(n);
			}
			n.active.computeIfPresent(r.instance, (k, v) -> v > 1 ? v - 1 : null);
			if (attached) {
				attach(n);
			}
		}
	}

	/** Preble's {@code get_node_cost}: window prefill share plus running decodes. */
	private double cost(Node n, String instance, double perToken) {
		return perToken * units(n) + n.active.getOrDefault(instance, 0) * this.decodeNanos.getOrDefault(instance, 0.0);
	}

	/** Preble's {@code handle_important_node_stealing}. */
	private void rebalance(List<InstanceState> accepting, double perToken) {
		Map<String, Double> loads = loads(accepting, perToken, true);
		List<Map.Entry<String, Double>> order = new ArrayList<>(loads.entrySet());
		order.sort(Map.Entry.<String, Double>comparingByValue().reversed());
		List<String> ids = new ArrayList<>(order.stream().map(Map.Entry::getKey).toList());
		while (ids.size() > 1) {
			String heavy = ids.get(0);
			String light = ids.get(ids.size() - 1);
			double heavyLoad = loads.get(heavy);
			double lightLoad = loads.get(light);
			if (heavyLoad < HIGH_LOAD_THRESHOLD * lightLoad || heavyLoad == 0) {
				return;
			}
			List<Node> onHeavy = new ArrayList<>();
			for (Node n : this.byInstance.getOrDefault(heavy, Set.of())) {
				if (n.count >= MIN_COUNT) {
					onHeavy.add(n);
				}
			}
			if (onHeavy.size() == 1) {
				Node only = onHeavy.get(0);
				double half = cost(only, heavy, perToken) / 2;
				if (!only.allocation.contains(light)) {
					detach(only);
					only.allocation.add(light);
					attach(only);
					heavyLoad -= half;
					lightLoad += half;
				}
			}
			else {
				onHeavy.sort(Comparator.comparingDouble(n -> cost(n, heavy, perToken)));
				for (Node n : onHeavy) {
					double c = cost(n, heavy, perToken);
					if (heavyLoad - c < lightLoad + c) {
						break;
					}
					heavyLoad -= c;
					lightLoad += c;
					moveSubtree(n, light);
					if (heavyLoad < HIGH_LOAD_THRESHOLD * lightLoad) {
						break;
					}
				}
			}
			loads.put(heavy, heavyLoad);
			loads.put(light, lightLoad);
			ids.remove(0);
		}
	}

	private void moveSubtree(Node n, String instance) {
		detach(n);
		n.allocation.clear();
		n.allocation.add(instance);
		attach(n);
		for (Node c : n.children) {
			moveSubtree(c, instance);
		}
	}

	private void expire(long now) {
		while (!this.window.isEmpty() && now - this.window.peekFirst().at > this.windowNanos) {
			forget(this.window.removeFirst());
		}
	}

	private void forget(WindowEntry e) {
		Node n = e.node;
		boolean attached = live(n) != null;
		if (attached) {
			detach(n);
		}
		n.count--;
		n.promptTokens -= e.promptTokens;
		n.hitTokens -= e.hitTokens;
		if (attached && n.count > 0) {
			attach(n);
		}
		if (n.count <= 0 && attached) {
			// Preble resets the allocation of a node without requests in the window.
			this.nodes.remove(n.key);
			if (n.parent != null) {
				n.parent.children.remove(n);
			}
			for (Node c : n.children) {
				c.parent = n.parent;
				if (n.parent != null) {
					n.parent.children.add(c);
				}
			}
			n.children.clear();
		}
	}

	/** Per-instance sums of {@link #units} and running requests of its nodes. */
	private static final class Sums {

		double units;

		double active;

		double unitsCounted;

		double activeCounted;

	}

	/** An important node: a prompt whose own part is at least its seen prefix. */
	private static final class Node {

		final long key;

		final int endBlocks;

		final int ownTokens;

		@Nullable Node parent;

		final List<Node> children = new ArrayList<>();

		final Set<String> allocation = new LinkedHashSet<>();

		final Map<String, Integer> active = new HashMap<>();

		int count;

		long promptTokens;

		long hitTokens;

		Node(long key, int endBlocks, int ownTokens, @Nullable Node parent) {
			this.key = key;
			this.endBlocks = endBlocks;
			this.ownTokens = Math.max(1, ownTokens);
			this.parent = parent;
		}

	}

	private record WindowEntry(long at, Node node, int promptTokens, int hitTokens) {

	}

	/** A dispatched request until it finishes. */
	private static final class Running {

		final String instance;

		final long dispatchedAt;

		final long prefillNanos;

		final List<Node> path;

		Running(String instance, long dispatchedAt, long prefillNanos, List<Node> path) {
			this.instance = instance;
			this.dispatchedAt = dispatchedAt;
			this.prefillNanos = prefillNanos;
			this.path = path;
		}

	}

}

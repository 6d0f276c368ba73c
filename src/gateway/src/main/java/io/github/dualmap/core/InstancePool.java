package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * One router's view of one pool of instances: membership and its dual rings, per-instance
 * state, the hot-prefix table and the TTFT model, plus the request accounting every
 * policy relies on. The gateway keeps one per service id; the simulator one per simulated
 * router replica. Thread-safe.
 */
public final class InstancePool {

	/**
	 * Smallest slow-start factor: a brand-new instance looks at most ten times slower.
	 */
	public static final double MIN_WARMTH = 0.1;

	private final String name;

	private final SchedulerSettings settings;

	private final NanoClock clock;

	private final TtftEstimator estimator;

	/**
	 * The attention model fitted on every instance's observations: what an instance
	 * without recent observations of its own is estimated with when it is lower
	 * ({@link SchedulerSettings#ttftRelaxAfterNanos()}); {@code null} with the linear
	 * model.
	 */
	private final @Nullable AttentionTtftModel pooledTtft;

	private final HotPrefixTable hotPrefixes;

	private final Map<String, InstanceState> states = new ConcurrentHashMap<>();

	private volatile DualHashRing rings = DualHashRing.empty();

	private volatile List<InstanceState> ordered = List.of();

	private final AtomicLong ringRebuilds = new AtomicLong();

	private final PoolBacklog backlog;

	/** Created by the first policy that asks for it ({@link #directory()}). */
	private volatile @Nullable PrefixDirectory directory;

	private final AtomicLong directoryRecords = new AtomicLong();

	// Told of every change of what the dispatch queues' release gate reads of an
	// instance (InstanceState.roomChanges).
	private final List<Consumer<InstanceState>> roomWatchers = new CopyOnWriteArrayList<>();

	public InstancePool(String name, SchedulerSettings settings, NanoClock clock) {
		this.name = name;
		this.settings = settings;
		this.clock = clock;
		this.estimator = new TtftEstimator(settings.prefillNanosPerToken(), settings.baseTtftNanos(),
				settings.calibrationAlpha());
		this.pooledTtft = settings.ttftModel() == TtftModel.ATTENTION ? AttentionTtftModel.of(settings) : null;
		this.hotPrefixes = new HotPrefixTable(settings);
		this.backlog = new PoolBacklog(settings.blockTokens() * 8.0);
	}

	public String name() {
		return name;
	}

	public SchedulerSettings settings() {
		return settings;
	}

	public NanoClock clock() {
		return clock;
	}

	public long now() {
		return clock.nanos();
	}

	public TtftEstimator estimator() {
		return estimator;
	}

	/**
	 * The pool's prefix directory, created on first use: a pool whose policy never asks
	 * for it neither keeps nor feeds one. It learns every release from then on (this
	 * router's, and with replica sync its peers', {@link #recordElsewhere}), bounded by
	 * the sum of the instances' shadow index capacities.
	 */
	public PrefixDirectory directory() {
		PrefixDirectory d = this.directory;
		if (d == null) {
			synchronized (this) {
				d = this.directory;
				if (d == null) {
					d = new PrefixDirectory(shadowCapacityBlocks());
					this.directory = d;
				}
			}
		}
		return d;
	}

	/** The prefix directory if this pool keeps one, without creating it. */
	public @Nullable PrefixDirectory directoryIfKept() {
		return this.directory;
	}

	private int shadowCapacityBlocks() {
		long sum = 0;
		for (InstanceState s : ordered) {
			sum += s.shadow().capacityBlocks();
		}
		return (int) Math.min(Integer.MAX_VALUE, Math.max(1, sum));
	}

	private void recordInDirectory(long[] chain, String instanceId) {
		PrefixDirectory d = this.directory;
		if (d == null) {
			return;
		}
		// The shadow indexes follow membership and the engines' scraped KV capacity:
		// the bound follows them now and then, not on every record.
		if ((directoryRecords.getAndIncrement() & 255) == 0) {
			d.capacity(shadowCapacityBlocks());
		}
		d.record(chain, instanceId);
	}

	/**
	 * {@code request}'s release to {@code s} into the prefix directory, if there is one.
	 */
	void recordReleased(InstanceState s, RoutingRequest request) {
		PromptBlocks blocks = request.blocks();
		if (blocks != null) {
			recordInDirectory(blocks.chain(), s.id());
		}
	}

	/**
	 * A release another router replica made to {@code s}, as replica sync reports it:
	 * into {@code s}'s shadow index and the prefix directory (when there is one), as this
	 * router's own releases go.
	 */
	public void recordElsewhere(InstanceState s, long[] chain) {
		s.shadow().record(chain);
		s.roomChanged();
		recordInDirectory(chain, s.id());
	}

	/**
	 * {@code watcher} hears of every change of what the release gate reads of a member
	 * ({@link InstanceState#roomChanges()}), on the thread that made it.
	 */
	void watchRoom(Consumer<InstanceState> watcher) {
		roomWatchers.add(watcher);
	}

	private void roomChanged(InstanceState s) {
		for (Consumer<InstanceState> w : roomWatchers) {
			w.accept(s);
		}
	}

	public HotPrefixTable hotPrefixes() {
		return hotPrefixes;
	}

	public DualHashRing rings() {
		return rings;
	}

	public long ringRebuilds() {
		return ringRebuilds.get();
	}

	/**
	 * Replaces the membership. Instances that stay keep their state; new ones start
	 * empty; the rings are rebuilt only when the set of ids or a weight changed.
	 * @return whether anything changed
	 */
	public synchronized boolean updateMembership(Collection<RingMember> members) {
		DualHashRing next = DualHashRing.of(new ArrayList<>(members), settings.virtualNodes());
		if (next.members().equals(rings.members())) {
			return false;
		}
		long now = clock.nanos();
		int capacityBlocks = (int) Math.max(1, settings.shadowCapacityTokens() / settings.blockTokens());
		List<InstanceState> list = new ArrayList<>();
		for (RingMember m : next.members()) {
			InstanceState s = states.get(m.id());
			if (s == null) {
				s = new InstanceState(m.id(), m.weight(), now, settings.blockTokens(), capacityBlocks,
						settings.ttftModel() == TtftModel.ATTENTION ? AttentionTtftModel.of(settings) : null);
				if (settings.engineBacklog()) {
					InstanceState state = s;
					s.trackEngineBacklog(() -> backlogNanosPerToken(state));
				}
				states.put(m.id(), s);
				s.roomWatcher(this::roomChanged);
				s.join(backlog);
			}
			else {
				// Keep the object: dispatch handles of requests on it still point here.
				s.weight(m.weight());
			}
			list.add(s);
		}
		List<String> ids = next.members().stream().map(RingMember::id).toList();
		List<String> left = new ArrayList<>();
		for (InstanceState gone : states.values()) {
			if (!ids.contains(gone.id())) {
				gone.leave();
				left.add(gone.id());
			}
		}
		states.keySet().retainAll(ids);
		this.ordered = List.copyOf(list);
		this.rings = next;
		PrefixDirectory d = this.directory;
		if (d != null) {
			for (String id : left) {
				d.forget(id);
			}
			d.capacity(shadowCapacityBlocks());
		}
		ringRebuilds.incrementAndGet();
		return true;
	}

	/** Current members in ring (id) order. */
	public List<InstanceState> instances() {
		return ordered;
	}

	/** The ids of the current members. */
	public Set<String> memberIds() {
		return ordered.stream().map(InstanceState::id).collect(Collectors.toSet());
	}

	/** Current members that accept new work (healthy, not draining), in ring order. */
	public List<InstanceState> acceptingInstances() {
		return ordered.stream().filter(InstanceState::acceptsNewWork).toList();
	}

	public @Nullable InstanceState instance(String id) {
		return states.get(id);
	}

	public int size() {
		return ordered.size();
	}

	/**
	 * The routing key of a prompt: its chain hash at the adaptive depth (records the
	 * request).
	 */
	public long routingKey(PromptBlocks blocks) {
		return blocks.keyAt(hotPrefixes.routeDepth(blocks));
	}

	/**
	 * Estimated pending uncached tokens ahead of a new request on {@code s}: the router's
	 * own W + P with what its peers published of theirs (replica sync), or what the
	 * engine shows when that is larger (other routers' traffic is otherwise only visible
	 * there, {@link InstanceState#engineShownTokens}). Stale scraped state counts as
	 * unknown, never as saturated.
	 */
	public long pendingTokens(InstanceState s) {
		long local = s.knownPendingTokens();
		long now = clock.nanos();
		EngineSnapshot e = s.freshEngine(now, settings.staleAfterNanos());
		return e == null ? local : Math.max(local, s.engineShownTokens(e, backlog.meanRequestTokens(), now));
	}

	/**
	 * The prefill work ahead of a new request on {@code s}: the {@link #pendingTokens}
	 * with their attention pairs. The router's own queued and in-prefill requests count
	 * exactly, and so does its peers' prefill where they published its pairs; tokens it
	 * knows only as a count (its peers' published W, their P without pairs, the scraped
	 * queue's excess) at the pool's mean pairs per token.
	 */
	public PrefillWork pendingWork(InstanceState s) {
		long tokens = pendingTokens(s);
		long local = s.localPendingTokens();
		long paired = s.peerPairedTokens();
		long pairs = s.queuedPairs() + s.prefillPairs() + s.peerPrefillPairs() + foreignPairs(tokens - local - paired);
		return new PrefillWork(tokens, pairs);
	}

	/**
	 * The prefill work in the engine of {@code s} as the release limits see it: this
	 * router's requests in prefill there and, with replica sync, its peers' (with the
	 * pairs they published, else at the pool's mean pairs per token).
	 */
	public PrefillWork prefillWork(InstanceState s) {
		return new PrefillWork(s.sharedPrefillTokens(),
				s.prefillPairs() + s.peerPrefillPairs() + foreignPairs(s.peerPrefillTokens() - s.peerPairedTokens()));
	}

	/**
	 * {@code work} and {@code tokens} more uncached tokens in prefill whose attention
	 * pairs this gateway does not know (another sender's prompt), counted at the pool's
	 * mean pairs per token.
	 */
	PrefillWork plusForeign(PrefillWork work, long tokens) {
		return tokens <= 0 ? work : new PrefillWork(work.tokens() + tokens, work.pairs() + foreignPairs(tokens));
	}

	private long foreignPairs(long tokens) {
		return tokens <= 0 ? 0 : (long) Math.min(Long.MAX_VALUE / 4.0, tokens * backlog.meanPairsPerToken());
	}

	/**
	 * Mean pending tokens over instances that accept work (0 when none), in O(1) from
	 * running totals: router-local W + P exactly and the peers' published W + P, plus
	 * each instance's scraped queue beyond that as of its last snapshot (a failed scrape
	 * clears it).
	 */
	public double meanPendingTokens() {
		return backlog.mean();
	}

	/**
	 * Members that accept new work (healthy, not draining), in O(1) from the running
	 * totals.
	 */
	public int acceptingCount() {
		return backlog.accepting();
	}

	/**
	 * Coefficient of variation of in-flight requests across members (0 when idle or
	 * single).
	 */
	public double loadCv() {
		int n = ordered.size();
		if (n < 2) {
			return 0;
		}
		double sum = 0;
		double sq = 0;
		for (InstanceState s : ordered) {
			double v = s.inFlight() + s.queuedRequests();
			sum += v;
			sq += v * v;
		}
		double mean = sum / n;
		if (mean == 0) {
			return 0;
		}
		double var = Math.max(0, sq / n - mean * mean);
		return Math.sqrt(var) / mean;
	}

	/**
	 * Whether {@code s} is a hotspot: pending tokens above hotspot-factor x the mean and
	 * above the absolute floor, or a queued request older than the wait bound.
	 */
	public boolean isHotspot(InstanceState s) {
		long now = clock.nanos();
		if (s.oldestQueuedNanos() != Long.MAX_VALUE && now - s.oldestQueuedNanos() > settings.hotspotMaxWaitNanos()) {
			return true;
		}
		long p = pendingTokens(s);
		return p > settings.hotspotFloorTokens() && p > settings.hotspotFactor() * meanPendingTokens();
	}

	/**
	 * How far {@code s} is through its slow start
	 * ({@link SchedulerSettings#slowStartNanos()}), in [{@link #MIN_WARMTH}, 1]; 1 when
	 * slow start is off.
	 */
	public double warmth(InstanceState s) {
		long period = settings.slowStartNanos();
		if (period <= 0) {
			return 1;
		}
		double age = (double) (now() - s.addedAtNanos()) / period;
		return Math.min(1, Math.max(MIN_WARMTH, age));
	}

	/**
	 * {@code estimateNanos} on {@code s} as choices rank it: divided by its
	 * {@link #warmth}, so an instance in its slow start looks up to ten times slower to
	 * the policy and to the dispatch queues' moves alike; unchanged once warm.
	 */
	public long warmthScaled(InstanceState s, long estimateNanos) {
		double warmth = warmth(s);
		return warmth >= 1 ? estimateNanos : (long) Math.min(Long.MAX_VALUE, estimateNanos / warmth);
	}

	/**
	 * {@code estimateNanos} on {@code there} as a move from {@code here} ranks it: scaled
	 * by how much less warm {@code there} is than {@code here}, so a new instance does
	 * not draw a warm one's queue, while instances that joined together (a gateway's
	 * start) move work between them as without slow start.
	 */
	public long warmthScaled(InstanceState there, InstanceState here, long estimateNanos) {
		double ratio = warmth(here) / warmth(there);
		return ratio == 1 ? estimateNanos : (long) Math.min(Long.MAX_VALUE, estimateNanos * ratio);
	}

	/**
	 * Estimated TTFT on {@code s}, in nanoseconds, of a request with {@code cached}
	 * tokens cached there and {@code uncached} to prefill, behind all the work pending
	 * there ({@link #pendingWork}).
	 */
	public long estimateTtft(InstanceState s, long cached, long uncached) {
		return estimateTtft(s, pendingWork(s), cached, uncached);
	}

	/**
	 * Estimated TTFT on {@code s}, in nanoseconds, of a request with {@code cached}
	 * tokens cached and {@code uncached} to prefill, behind {@code ahead}: the model of
	 * {@link SchedulerSettings#ttftModel()} (the linear one counts tokens only).
	 */
	public long estimateTtft(InstanceState s, PrefillWork ahead, long cached, long uncached) {
		AttentionTtftModel m = s.ttftModel();
		if (m == null) {
			return estimator.estimate(ahead.tokens(), Math.max(0, uncached));
		}
		PrefillWork own = PrefillWork.of(cached, uncached);
		long estimate = m.estimate(ahead, own);
		AttentionTtftModel pooled = relaxedTo(m);
		return pooled == null ? estimate : Math.min(estimate, pooled.estimate(ahead, own));
	}

	/**
	 * The pool's fit when {@code m}, an instance's model, has had no observation for
	 * {@link SchedulerSettings#ttftRelaxAfterNanos()}: that instance is then estimated
	 * with the lower of the two. An instance whose first answers were slow (a cold JIT, a
	 * transient stall) would otherwise look slow to every choice, get no traffic and
	 * never relearn; with the pool's fit it gets traffic back as soon as it is the faster
	 * choice by the pool's measure, and its own observations take over again.
	 */
	private @Nullable AttentionTtftModel relaxedTo(AttentionTtftModel m) {
		AttentionTtftModel pooled = this.pooledTtft;
		long after = settings.ttftRelaxAfterNanos();
		return pooled == null || after <= 0 || !m.idleSince(clock.nanos(), after) ? null : pooled;
	}

	/**
	 * The attention model fitted on every instance's observations, if the pool runs it.
	 */
	public @Nullable AttentionTtftModel pooledTtftModel() {
		return pooledTtft;
	}

	/** The prefill cost of one uncached token on {@code s}, in nanoseconds. */
	double prefillNanosPerToken(InstanceState s) {
		AttentionTtftModel m = s.ttftModel();
		return m != null ? m.nanosPerToken() : estimator.nanosPerToken();
	}

	/**
	 * The rate at which the engine backlog estimate of {@code s} drains
	 * ({@link EngineBacklog}): its fitted cost per uncached token
	 * ({@link #prefillNanosPerToken}), or the pool's linear rate (every token's share of
	 * the observed TTFT, attention included) when that is lower. Where a workload's
	 * prompts share long cached prefixes, the attention term carries most of the
	 * prefill's cost and one instance's fit cannot tell its per-token coefficient from
	 * it: on the synthetic RAG workload the fits spread from 0 to five times the engine's
	 * own, and a backlog drained five times too slowly held every replica's releases
	 * there for seconds. The lower rate errs towards an engine that is free, as the
	 * estimate does.
	 */
	double backlogNanosPerToken(InstanceState s) {
		return Math.min(prefillNanosPerToken(s), estimator.nanosPerToken());
	}

	/**
	 * Prefill time on {@code s}, in nanoseconds and without the fixed part, of
	 * {@code uncached} tokens behind {@code cached}: what that prefill costs every
	 * request queued behind it there.
	 */
	public long prefillNanos(InstanceState s, long cached, long uncached) {
		AttentionTtftModel m = s.ttftModel();
		if (m == null) {
			return (long) (Math.max(0, uncached) * estimator.nanosPerToken());
		}
		PrefillWork work = PrefillWork.of(cached, uncached);
		long cost = m.cost(work);
		AttentionTtftModel pooled = relaxedTo(m);
		return pooled == null ? cost : Math.min(cost, pooled.cost(work));
	}

	/**
	 * Accounts a request sent to {@code decision.instanceId()} and records its blocks in
	 * that instance's shadow index and in the prefix directory, if the pool keeps one.
	 * @return the handle through which its first token and its end are reported, exactly
	 * once each
	 */
	public InFlight dispatch(RoutingRequest request, Decision decision) {
		InstanceState s = states.get(decision.instanceId());
		if (s == null) {
			throw new IllegalArgumentException("instance '" + decision.instanceId() + "' is not in pool " + name);
		}
		InFlight d = dispatch(request, decision, s, pendingWork(s));
		recordReleased(s, request);
		return d;
	}

	/**
	 * Dispatch with an explicit account of the work ahead of the request in the engine.
	 * The dispatch queues use it: requests the router still holds (W) are not ahead of a
	 * released request, so counting them would bias the calibration of tPrefill. It
	 * leaves the prefix directory to {@link #recordReleased}, which the queues call once
	 * they have let go of their lock: a record is O(chain length) under the directory's
	 * own lock, and the queues of the whole pool should not wait on it.
	 */
	InFlight dispatch(RoutingRequest request, Decision decision, InstanceState s, PrefillWork ahead) {
		int uncached = Math.max(0, decision.uncachedTokens());
		PrefillWork own = PrefillWork.of(decision.cachedTokens(), uncached);
		s.addPrefill(uncached, own.pairs());
		s.prefillRequests.incrementAndGet();
		s.inFlight.incrementAndGet();
		s.dispatched.incrementAndGet();
		PromptBlocks blocks = request.blocks();
		if (blocks != null) {
			s.estimatedHitTokens.addAndGet(decision.cachedTokens());
			s.estimatedPromptTokens.addAndGet(blocks.promptTokens());
			s.shadow().record(blocks.chain());
		}
		backlog.observeRequestTokens(uncached);
		backlog.observeRequestWork(own);
		s.roomChanged();
		return new InFlight(s, own, ahead, clock.nanos());
	}

	/**
	 * A dispatched request's handle. {@link #firstToken()} and {@link #finish()} are
	 * idempotent, so complete, error and cancel paths may all call them.
	 */
	public final class InFlight {

		private final InstanceState instance;

		private final int uncached;

		private final PrefillWork own;

		private final PrefillWork ahead;

		private final long sentAtNanos;

		private final AtomicBoolean prefillDone = new AtomicBoolean();

		private final AtomicBoolean finished = new AtomicBoolean();

		InFlight(InstanceState instance, PrefillWork own, PrefillWork ahead, long sentAtNanos) {
			this.instance = instance;
			this.uncached = (int) own.tokens();
			this.own = own;
			this.ahead = ahead;
			this.sentAtNanos = sentAtNanos;
		}

		public InstanceState instance() {
			return instance;
		}

		public long sentAtNanos() {
			return sentAtNanos;
		}

		/**
		 * The first response byte arrived: prefill is over. Feeds the observed TTFT to
		 * the model.
		 * @return the observed TTFT in nanoseconds, or -1 when already reported
		 */
		public long firstToken() {
			return endPrefill(true);
		}

		/**
		 * Ends the prefill phase; with {@code observe} false the elapsed time is not fed
		 * to the TTFT model (used when prefill completion is only estimated, as for
		 * non-streaming responses whose first byte comes at the end of generation).
		 * @return the elapsed time since dispatch, or -1 when already reported
		 */
		long endPrefill(boolean observe) {
			if (!prefillDone.compareAndSet(false, true)) {
				return -1;
			}
			releasePrefill();
			long now = clock.nanos();
			long ttft = now - sentAtNanos;
			if (observe) {
				estimator.observe(ahead.tokens(), uncached, ttft);
				AttentionTtftModel m = instance.ttftModel();
				if (m != null) {
					m.observe(ahead, own, ttft, now);
					AttentionTtftModel pooled = pooledTtft;
					if (pooled != null) {
						pooled.observe(ahead, own, ttft, now);
					}
				}
			}
			return ttft;
		}

		/**
		 * Whether the prefill phase is over (first token seen, estimated, or finished).
		 */
		public boolean isPrefillDone() {
			return prefillDone.get();
		}

		/** Uncached tokens this request brought to the instance's prefill. */
		public int uncachedTokens() {
			return uncached;
		}

		/** The request ended (success, error or cancel). */
		public void finish() {
			if (!finished.compareAndSet(false, true)) {
				return;
			}
			if (prefillDone.compareAndSet(false, true)) {
				releasePrefill();
			}
			instance.inFlight.decrementAndGet();
		}

		public boolean isFinished() {
			return finished.get();
		}

		private void releasePrefill() {
			instance.addPrefill(-uncached, -own.pairs());
			instance.prefillRequests.decrementAndGet();
			instance.roomChanged();
		}

	}

}

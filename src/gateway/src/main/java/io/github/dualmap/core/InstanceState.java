package io.github.dualmap.core;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.DoubleSupplier;

import org.jspecify.annotations.Nullable;

/**
 * What one router knows about one instance: its own exact accounting (tokens queued in
 * the router and in prefill, requests in flight), the last scraped engine state, the
 * shadow KV index, and whether it accepts new work (circuit breaker closed, not
 * draining). Counters are updated only through {@link InstancePool}.
 */
public final class InstanceState {

	/**
	 * Uncached tokens of the reference prompt of {@link #coldTtftEstimateNanos()}: a
	 * typical prompt, cold, with nothing ahead of it.
	 */
	public static final int REFERENCE_PROMPT_TOKENS = 4096;

	/**
	 * Largest standard error, over the estimate, at which
	 * {@link #coldTtftEstimateNanos()} reports the reference prompt's estimate. Fits that
	 * have seen prompts of about that size lately stay at a few hundredths (0.01-0.07 in
	 * the simulator on the conversation trace at 4 and 16 req/s, threefold slowdowns
	 * included); ones that have seen only a few first tokens, or only short prompts they
	 * follow poorly, extrapolate, at 0.17-0.36 on a lightly loaded demo pool where they
	 * put identical engines at up to 2.4 times the engine's own cost. Above it a doubling
	 * could be the fit learning rather than the engine slowing down.
	 */
	public static final double REFERENCE_MAX_RELATIVE_ERROR = 0.15;

	private final String id;

	private volatile double weight;

	private final long addedAtNanos;

	private final ShadowKvIndex shadow;

	private final QueuedPrefixes queuedPrefixes = new QueuedPrefixes();

	final AtomicLong queuedTokens = new AtomicLong();

	final AtomicInteger queuedRequests = new AtomicInteger();

	final AtomicLong prefillTokens = new AtomicLong();

	// Attention pairs (PrefillWork) of the queued and in-prefill tokens: with them the
	// backlog is costed under the instance's current coefficients, exactly.
	final AtomicLong queuedPairs = new AtomicLong();

	final AtomicLong prefillPairs = new AtomicLong();

	final AtomicInteger prefillRequests = new AtomicInteger();

	final AtomicInteger inFlight = new AtomicInteger();

	final AtomicLong dispatched = new AtomicLong();

	final AtomicLong estimatedHitTokens = new AtomicLong();

	final AtomicLong estimatedPromptTokens = new AtomicLong();

	// What the other gateway replicas last published of their load on the instance
	// (replica sync): their requests and uncached tokens in prefill there, and the
	// uncached tokens they hold queued for it. Zero without replica sync.
	private volatile int peerPrefillRequests;

	private volatile long peerPrefillTokens;

	private volatile long peerQueuedTokens;

	// Of peerPrefillTokens, those whose attention pairs the peers published (replicas
	// that publish them), and those pairs; the rest count at the pool's mean.
	private volatile long peerPairedTokens;

	private volatile long peerPrefillPairs;

	// Whether the other replicas have published their load on the instance at least
	// once (replica sync with share-load): the release limits then count their prefill.
	private volatile boolean peerLoadShared;

	private volatile @Nullable EngineSnapshot engine;

	private final EngineBacklog engineBacklog = new EngineBacklog();

	// The engine's prefill cost per uncached token, which drains its backlog; null: the
	// backlog is not estimated (SchedulerSettings.engineBacklog).
	private volatile @Nullable DoubleSupplier backlogDrain;

	// Requests in prefill here from this router and its peers when the engine snapshot
	// arrived: what of the engine's queue is this router's own (EngineQueueGate).
	private volatile int prefillRequestsAtScrape;

	// Requests the engine held (running and waiting) beyond this router's in flight
	// there when the snapshot arrived: evidence that another sender uses the engine.
	private volatile int foreignRequestsAtScrape;

	private volatile boolean engineFailed;

	private volatile boolean healthy = true;

	private volatile boolean draining;

	private volatile long oldestQueuedNanos = Long.MAX_VALUE;

	// Counts the changes of what the dispatch queues' release gate reads of this
	// instance (its prefill and its peers', the engine snapshot, its shadow index,
	// health), and tells the pool of each: a queue passed over because the instance had
	// no room is looked at again after one.
	private final AtomicLong roomChanges = new AtomicLong();

	private volatile @Nullable Consumer<InstanceState> roomWatcher;

	private final int blockTokens;

	private final @Nullable AttentionTtftModel ttft;

	// Guarded by this: the pool totals this instance is counted in while it accepts work.
	private @Nullable PoolBacklog backlog;

	private boolean counted;

	private long countedExcess;

	InstanceState(String id, double weight, long addedAtNanos, int blockTokens, int shadowCapacityBlocks) {
		this(id, weight, addedAtNanos, blockTokens, shadowCapacityBlocks, null);
	}

	InstanceState(String id, double weight, long addedAtNanos, int blockTokens, int shadowCapacityBlocks,
			@Nullable AttentionTtftModel ttft) {
		this.id = id;
		this.ttft = ttft;
		this.blockTokens = blockTokens;
		this.weight = weight;
		this.addedAtNanos = addedAtNanos;
		this.shadow = new ShadowKvIndex(shadowCapacityBlocks);
	}

	public String id() {
		return id;
	}

	public double weight() {
		return weight;
	}

	void weight(double weight) {
		this.weight = weight;
	}

	public long addedAtNanos() {
		return addedAtNanos;
	}

	public ShadowKvIndex shadow() {
		return shadow;
	}

	/**
	 * The prompt blocks of the requests the dispatch queues hold for the instance (empty
	 * unless {@link QueueSettings#countQueuedPrefixes()}).
	 */
	QueuedPrefixes queuedPrefixes() {
		return queuedPrefixes;
	}

	/**
	 * Uncached tokens of requests this router holds for the instance but has not sent
	 * (W).
	 */
	public long queuedTokens() {
		return queuedTokens.get();
	}

	public int queuedRequests() {
		return queuedRequests.get();
	}

	/** Uncached tokens of requests sent whose first token has not come back (P). */
	public long prefillTokens() {
		return prefillTokens.get();
	}

	/** Attention pairs of {@link #queuedTokens()}. */
	public long queuedPairs() {
		return queuedPairs.get();
	}

	/** Attention pairs of {@link #prefillTokens()}. */
	public long prefillPairs() {
		return prefillPairs.get();
	}

	/**
	 * This instance's TTFT model with the attention term, or {@code null} when the pool
	 * runs the {@link TtftModel#LINEAR linear} one.
	 */
	public @Nullable AttentionTtftModel ttftModel() {
		return ttft;
	}

	/**
	 * The TTFT, in nanoseconds, this instance's own fitted model expects of a cold prompt
	 * of {@link #REFERENCE_PROMPT_TOKENS} with nothing ahead of it: one number to compare
	 * instances by, which rises as an engine that slows down teaches its model. -1 with
	 * the {@link TtftModel#LINEAR linear} model, which fits no instance of its own, and
	 * while the fit does not know that prompt's cost to within
	 * {@link #REFERENCE_MAX_RELATIVE_ERROR} (its priors, or only short prompts observed
	 * lately: {@link AttentionTtftModel#relativeError}).
	 */
	public long coldTtftEstimateNanos() {
		AttentionTtftModel m = ttft;
		if (m == null) {
			return -1;
		}
		PrefillWork reference = PrefillWork.of(0, REFERENCE_PROMPT_TOKENS);
		return m.relativeError(PrefillWork.NONE, reference) > REFERENCE_MAX_RELATIVE_ERROR ? -1
				: m.estimate(PrefillWork.NONE, reference);
	}

	/** Requests sent whose first token has not come back. */
	public int prefillRequests() {
		return prefillRequests.get();
	}

	/**
	 * Requests the other gateway replicas have in prefill on the instance, as they last
	 * published it (0 without replica sync).
	 */
	public int peerPrefillRequests() {
		return peerPrefillRequests;
	}

	/**
	 * Whether other gateway replicas have published their load on the instance (replica
	 * sync with share-load), so the release limits count their prefill.
	 */
	public boolean peerLoadShared() {
		return peerLoadShared;
	}

	/** Uncached tokens of {@link #peerPrefillRequests()}. */
	public long peerPrefillTokens() {
		return peerPrefillTokens;
	}

	/**
	 * The attention pairs of the part of {@link #peerPrefillTokens()} whose peers
	 * published them ({@link #peerPairedTokens()}).
	 */
	public long peerPrefillPairs() {
		return peerPrefillPairs;
	}

	/**
	 * Of {@link #peerPrefillTokens()}, the tokens whose attention pairs are known
	 * ({@link #peerPrefillPairs()}).
	 */
	public long peerPairedTokens() {
		return peerPairedTokens;
	}

	/** Uncached tokens the other gateway replicas hold queued for the instance. */
	public long peerQueuedTokens() {
		return peerQueuedTokens;
	}

	/** The other replicas' pending uncached tokens for the instance (their W + P). */
	public long peerPendingTokens() {
		return peerQueuedTokens + peerPrefillTokens;
	}

	/**
	 * Requests in prefill on the instance from this router and, as last published, its
	 * peers: what the dispatch queues' release limit counts.
	 */
	public int sharedPrefillRequests() {
		return prefillRequests.get() + peerPrefillRequests;
	}

	/** Uncached tokens of {@link #sharedPrefillRequests()}. */
	public long sharedPrefillTokens() {
		return prefillTokens.get() + peerPrefillTokens;
	}

	/** Requests sent and not finished (prefill and decode). */
	public int inFlight() {
		return inFlight.get();
	}

	/** Requests dispatched since the instance joined. */
	public long dispatched() {
		return dispatched.get();
	}

	/** Router-local pending uncached tokens, W + P. */
	public long localPendingTokens() {
		return queuedTokens.get() + prefillTokens.get();
	}

	/**
	 * Pending uncached tokens this router knows of exactly: its own W + P and what its
	 * peers last published of theirs.
	 */
	public long knownPendingTokens() {
		return localPendingTokens() + peerPendingTokens();
	}

	/**
	 * Share of routed prompt tokens the shadow index expected to be cached; NaN before
	 * any.
	 */
	public double estimatedHitRate() {
		long p = estimatedPromptTokens.get();
		return p == 0 ? Double.NaN : (double) estimatedHitTokens.get() / p;
	}

	public @Nullable EngineSnapshot engine() {
		return engine;
	}

	/**
	 * The scraped state if younger than {@code staleAfterNanos} and the last scrape
	 * succeeded; stale means unknown.
	 */
	public @Nullable EngineSnapshot freshEngine(long nowNanos, long staleAfterNanos) {
		EngineSnapshot e = engine;
		return e != null && !engineFailed && e.ageNanos(nowNanos) <= staleAfterNanos ? e : null;
	}

	/**
	 * Whether the engine, as last scraped and still fresh, uses more than {@code limit}
	 * of its KV cache: where one more request's blocks would preempt running requests
	 * (the SLO switch's and the rescue's KV limits). False without a fresh scrape
	 * (nothing is known, nothing is ruled out) and for a limit of 1 or more (off).
	 */
	public boolean kvUsedAbove(double limit, long nowNanos, long staleAfterNanos) {
		if (limit >= 1) {
			return false;
		}
		EngineSnapshot e = freshEngine(nowNanos, staleAfterNanos);
		return e != null && e.kvUsage() > limit;
	}

	/**
	 * Estimate the engine's admitted prefill from its prefix-cache counters, drained at
	 * {@code nanosPerToken} ({@link SchedulerSettings#engineBacklog()}).
	 */
	void trackEngineBacklog(DoubleSupplier nanosPerToken) {
		this.backlogDrain = nanosPerToken;
	}

	/**
	 * Uncached tokens the engine has admitted into prefill and not yet computed at
	 * {@code nowNanos}, from every router ({@link EngineBacklog}); 0 when not estimated
	 * or unknown. The caller checks that the snapshot it rests on is fresh
	 * ({@link #freshEngineBacklogTokens} does both).
	 */
	long engineBacklogTokens(long nowNanos) {
		DoubleSupplier drain = backlogDrain;
		return drain == null ? 0 : engineBacklog.tokens(nowNanos, drain.getAsDouble());
	}

	/**
	 * How far {@link #engineBacklogTokens} exceeds {@code own} tokens at
	 * {@code nowNanos}, at least 0. The drain rate is read only where what the last
	 * snapshot left exceeds {@code own} ({@link EngineBacklog#undrainedTokens}, a bound
	 * on every later reading): past capacity every hotspot test, move target and release
	 * gate asks this.
	 */
	long engineBacklogBeyond(long own, long nowNanos) {
		return engineBacklog.undrainedTokens() <= own ? 0 : Math.max(0, engineBacklogTokens(nowNanos) - own);
	}

	/**
	 * {@link #engineBacklogTokens} while the last snapshot is fresh
	 * ({@link #freshEngine}); -1 when unknown: not estimated
	 * ({@link SchedulerSettings#engineBacklog()}), never scraped, failed or stale.
	 */
	public long freshEngineBacklogTokens(long nowNanos, long staleAfterNanos) {
		if (backlogDrain == null || freshEngine(nowNanos, staleAfterNanos) == null) {
			return -1;
		}
		return engineBacklogTokens(nowNanos);
	}

	/**
	 * The pending uncached tokens {@code snapshot} shows at {@code nowNanos}: its waiting
	 * requests at {@code meanRequestTokens} each, plus the engine's prefill (this
	 * router's own requests in prefill there, or the engine's
	 * {@link #engineBacklogTokens} when larger: another replica's long prompt); 0 when it
	 * shows nothing beyond this router's prefill (nothing waiting, no larger backlog).
	 */
	long engineShownTokens(EngineSnapshot snapshot, double meanRequestTokens, long nowNanos) {
		long own = prefillTokens();
		long inEngine = own + engineBacklogBeyond(own, nowNanos);
		if (snapshot.waiting() <= 0 && inEngine <= own) {
			return 0;
		}
		return (long) (Math.max(0, snapshot.waiting()) * meanRequestTokens) + inEngine;
	}

	/**
	 * Requests this router (and, with replica sync, its peers) had in prefill on the
	 * instance when the last engine snapshot arrived.
	 */
	int prefillRequestsAtScrape() {
		return prefillRequestsAtScrape;
	}

	/**
	 * Requests the engine held, running and waiting, beyond those this router had in
	 * flight on the instance when the last snapshot arrived (0 when it showed no more, or
	 * did not report its counts): requests another sender placed there, such as a replica
	 * that shares no load.
	 */
	public int foreignRequestsAtScrape() {
		return foreignRequestsAtScrape;
	}

	/**
	 * Whether the last snapshot, fresh at {@code nowNanos} (not failed, at most
	 * {@code staleAfterNanos} old), held requests this router did not send
	 * ({@link #foreignRequestsAtScrape}): another sender uses the engine.
	 */
	public boolean othersSendAt(long nowNanos, long staleAfterNanos) {
		return foreignRequestsAtScrape > 0 && freshEngine(nowNanos, staleAfterNanos) != null;
	}

	/**
	 * {@link #othersSendAt} while no peer publishes its load here: a sender (a gateway
	 * replica without replica sync, a client that bypasses the gateway) whose load and
	 * queues for this instance this gateway cannot see. Under replica sync with shared
	 * load the peers' releases and queued work reach every replica alike.
	 */
	public boolean unseenSendersAt(long nowNanos, long staleAfterNanos) {
		return !peerLoadShared && othersSendAt(nowNanos, staleAfterNanos);
	}

	/**
	 * Whether the last scrape failed (the last good snapshot stays visible for
	 * diagnosis).
	 */
	public boolean engineFailed() {
		return engineFailed;
	}

	/**
	 * A scrape failed or did not parse: the engine view is unknown until the next good
	 * scrape.
	 */
	public void markEngineUnknown() {
		this.engineFailed = true;
		engineBacklog.clear();
		scrapedExcess(0);
		roomChanged();
	}

	public void updateEngine(EngineSnapshot snapshot) {
		DoubleSupplier drain = backlogDrain;
		if (drain != null) {
			engineBacklog.update(snapshot, drain.getAsDouble());
		}
		this.prefillRequestsAtScrape = sharedPrefillRequests();
		this.foreignRequestsAtScrape = snapshot.countsRequests()
				? Math.max(0, snapshot.running() + snapshot.waiting() - inFlight()) : 0;
		this.engine = snapshot;
		this.engineFailed = false;
		updateScrapedExcess(snapshot);
		if (snapshot.kvCapacityTokens() > 0) {
			// The shadow index follows the engine's real KV capacity once it is known.
			shadow.resize((int) Math.min(Integer.MAX_VALUE, Math.max(1, snapshot.kvCapacityTokens() / blockTokens)));
		}
		roomChanged();
	}

	public boolean healthy() {
		return healthy;
	}

	public void healthy(boolean healthy) {
		this.healthy = healthy;
		recount();
		roomChanged();
	}

	public boolean draining() {
		return draining;
	}

	public void draining(boolean draining) {
		this.draining = draining;
		recount();
		roomChanged();
	}

	/** Whether policies may give this instance new requests. */
	public boolean acceptsNewWork() {
		return healthy && !draining;
	}

	/**
	 * Arrival time of the oldest request queued for this instance, {@code Long.MAX_VALUE}
	 * when none.
	 */
	public long oldestQueuedNanos() {
		return oldestQueuedNanos;
	}

	public void oldestQueuedNanos(long nanos) {
		this.oldestQueuedNanos = nanos;
	}

	/**
	 * How many times what the release gate reads of this instance has changed: its
	 * prefill or its peers', its engine snapshot, its shadow index, its health.
	 */
	long roomChanges() {
		return roomChanges.get();
	}

	/** Who hears of each {@link #roomChanges() change}: the pool, set once. */
	void roomWatcher(Consumer<InstanceState> watcher) {
		this.roomWatcher = watcher;
	}

	/** What the release gate reads of this instance changed: counted and told. */
	void roomChanged() {
		roomChanges.incrementAndGet();
		Consumer<InstanceState> w = roomWatcher;
		if (w != null) {
			w.accept(this);
		}
	}

	// ---- the pool's running totals (see PoolBacklog) ----

	synchronized void addQueued(long delta, long pairs) {
		queuedTokens.addAndGet(delta);
		queuedPairs.addAndGet(pairs);
		if (counted && backlog != null) {
			backlog.add(delta, 0, 0);
		}
	}

	synchronized void addPrefill(long delta, long pairs) {
		prefillTokens.addAndGet(delta);
		prefillPairs.addAndGet(pairs);
		if (counted && backlog != null) {
			backlog.add(delta, 0, 0);
		}
	}

	/**
	 * Replaces what the other replicas published of their load on this instance (the sum
	 * over peers), without the attention pairs of their prefill; negative values are
	 * taken as 0.
	 * @param prefillRequests their requests in prefill here
	 * @param prefillTokens those requests' uncached tokens
	 * @param queuedTokens uncached tokens they hold queued for this instance
	 */
	public void peerLoad(int prefillRequests, long prefillTokens, long queuedTokens) {
		peerLoad(prefillRequests, prefillTokens, queuedTokens, 0, 0);
	}

	/**
	 * Replaces what the other replicas published of their load on this instance (the sum
	 * over peers), with the attention pairs of the prefill of those that publish them;
	 * negative values are taken as 0.
	 * @param prefillRequests their requests in prefill here
	 * @param prefillTokens those requests' uncached tokens
	 * @param queuedTokens uncached tokens they hold queued for this instance
	 * @param prefillPairs the attention pairs of the prefill of the peers that published
	 * them
	 * @param pairedTokens the uncached tokens in prefill of those peers (at most
	 * {@code prefillTokens})
	 */
	public synchronized void peerLoad(int prefillRequests, long prefillTokens, long queuedTokens, long prefillPairs,
			long pairedTokens) {
		long before = peerPendingTokens();
		this.peerLoadShared = true;
		this.peerPrefillRequests = Math.max(0, prefillRequests);
		this.peerPrefillTokens = Math.max(0, prefillTokens);
		this.peerQueuedTokens = Math.max(0, queuedTokens);
		this.peerPairedTokens = Math.min(this.peerPrefillTokens, Math.max(0, pairedTokens));
		this.peerPrefillPairs = this.peerPairedTokens == 0 ? 0 : Math.max(0, prefillPairs);
		if (counted && backlog != null) {
			backlog.add(peerPendingTokens() - before, 0, 0);
		}
		roomChanged();
	}

	/** Starts counting this instance in {@code totals} (it joined a pool). */
	synchronized void join(PoolBacklog totals) {
		this.backlog = totals;
		recount();
	}

	/** Stops counting it (it left the pool). */
	synchronized void leave() {
		uncount();
		this.backlog = null;
	}

	private synchronized void recount() {
		PoolBacklog b = backlog;
		if (b != null && acceptsNewWork() && !counted) {
			b.add(knownPendingTokens(), countedExcess, 1);
			counted = true;
		}
		else if (counted && !acceptsNewWork()) {
			uncount();
		}
	}

	private synchronized void uncount() {
		PoolBacklog b = backlog;
		if (counted && b != null) {
			b.add(-knownPendingTokens(), -countedExcess, -1);
		}
		counted = false;
	}

	/**
	 * The scraped queue in tokens beyond what this router already counts (its own and
	 * what its peers published): other routers' traffic. Taken at the snapshot and kept
	 * until the next one (or a failed scrape).
	 */
	private synchronized void updateScrapedExcess(EngineSnapshot snapshot) {
		PoolBacklog b = backlog;
		long shown = b == null ? 0 : engineShownTokens(snapshot, b.meanRequestTokens(), snapshot.sampledAtNanos());
		scrapedExcess(shown == 0 ? 0 : Math.max(0, shown - knownPendingTokens()));
	}

	private synchronized void scrapedExcess(long excess) {
		if (counted && backlog != null) {
			backlog.add(0, excess - countedExcess, 0);
		}
		countedExcess = excess;
	}

	@Override
	public String toString() {
		return "InstanceState[" + id + ", pending=" + localPendingTokens() + ", inFlight=" + inFlight() + "]";
	}

}

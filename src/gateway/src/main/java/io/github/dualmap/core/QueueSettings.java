package io.github.dualmap.core;

import java.time.Duration;

/**
 * Knobs of the dispatch queues and the hotspot rebalancer, immutable. Build with
 * {@code QueueSettings.custom()...build()} or take {@link #ofDefaults()}.
 * <p>
 * Defaults and why: vLLM V1 prefills at most 8192 tokens per step on an H100 (chunked
 * prefill). Releasing two steps' worth ({@value #DEFAULT_MAX_PREFILL_TOKENS} tokens)
 * keeps the engine's next steps full while everything beyond that stays in the router,
 * where it can still be moved. With good cache hits a request may bring only a few
 * uncached tokens, so the token bound alone would release everything; the request bound
 * ({@value #DEFAULT_MAX_PREFILL_REQUESTS}) keeps the engine's own waiting queue short in
 * that case. It is that high because a slot turns over only after a round trip (release,
 * the engine's next step, first token back, next release joins the step after), and a
 * busy decoding engine's steps are long: with 8 slots, cheap cached requests queued in
 * the router, where the longest-cached-first order starved requests of other prefixes up
 * to the aging bound (seen in the simulator's synthetic tenants workload). A request with
 * more uncached tokens than the token bound is still released when nothing else is in
 * prefill, so it is never stuck.
 *
 * @param mode late binding or pass-through
 * @param maxPrefillRequests release while fewer requests than this are in prefill on the
 * instance
 * @param maxPrefillTokens and while the uncached tokens in prefill plus the next
 * request's stay within this
 * @param agingNanos a request queued longer than this is served in arrival order, ahead
 * of the cache-priority order (starvation bound)
 * @param maxQueuedPerInstance queued requests one instance may hold (beyond: 429)
 * @param maxQueuedPerPool queued requests the whole pool may hold (beyond: 429)
 * @param maxWaitNanos a request queued this long is expired
 * @param expiry what happens to an expired request
 * @param maxMigrations times one queued request may be moved by the rebalancer
 * @param migrationMargin a move must improve the request's estimated TTFT by more than
 * this fraction of its SLO (hysteresis against ping-pong)
 * @param maxMovesPerTrigger bound on moves per rebalancing pass, so one event does
 * bounded work
 * @param unavailableRetryAfterSeconds {@code Retry-After} when no instance accepts work
 * @param idlePull an instance with prefill capacity and an empty queue pulls queued
 * requests whose other candidate it is (work stealing between the two candidates), when
 * the move gains more than the migration margin; counted as migrations
 * @param sloAware requests of SLO classes other than the default age in proportion to
 * their SLO, and full queues shed a queued request of a looser class for a tighter
 * arrival; {@code false}: one aging bound for all and no shedding
 * @param maxWaitShare with {@link Expiry#REJECT}, a queued request also expires once it
 * has waited this share of its own TTFT SLO, unless its SLO class sets a wait bound of
 * its own (0: only {@code maxWait} applies)
 * @param rescue with {@link Expiry#REJECT}, an expired request is first offered to the
 * instance with the lowest TTFT estimate among the others that accept work and have
 * prefill capacity for it now (ahead of that instance's own queue), when the estimate
 * still fits what is left of its SLO; only otherwise is it rejected
 * @param rescueToQueue with {@code rescue}, an expired request that no instance can start
 * now joins the queue of the instance with the lowest TTFT estimate when that estimate
 * fits what is left of its SLO; it then waits there until the last moment its prefill
 * could still start in time, and is rejected after that (it is rescued once)
 * @param moveLateOnly hotspot migration and idle pull move only a request that is late
 * where it waits (its wait so far plus its TTFT estimate there exceeds its SLO), and a
 * hotspot move goes only to an instance with prefill room for it now; {@code false}: any
 * move whose gain beats the margin
 * @param shedHopeless with {@link Expiry#REJECT}, a request about to be released whose
 * wait so far plus its TTFT estimate on that instance exceeds its SLO is not sent while
 * other requests wait in the pool: it is rescued (with {@code rescue}) to an instance on
 * which it can still make its SLO, or answered 503 like a request at its wait bound. It
 * would miss its objective anyway, and the engine time it would take (a long cold prompt
 * holds an instance's prefill for seconds) is what the requests behind it need. With
 * nothing else queued it is sent: an idle pool serves a request late rather than not at
 * all
 * @param shedBehindForeignPrefill with {@code shedHopeless}, a request that would miss
 * its SLO is not sent either when nothing else waits in this gateway's queues but another
 * sender's prompt is in prefill on its instance, as its engine shows without replica sync
 * ({@code EngineQueueGate#foreignPrefill}: the last fresh scrape held requests this
 * gateway did not send, and the estimated backlog exceeds this gateway's prefill there):
 * that sender's next requests queue behind it. The request is then judged with that
 * prompt's remaining prefill ahead of it. One gateway alone sees no one else's requests,
 * but for clients that bypass it
 * @param shedWhereOthersSend with {@code shedHopeless}, a request that would miss its SLO
 * is not sent either when nothing else waits in this gateway's queues but the instance's
 * engine, as last scraped (fresh), ran or queued requests this gateway did not send
 * ({@code EngineQueueGate#otherSenders}): another gateway replica sends there, and its
 * next requests would queue behind a late prompt (under replica sync too: the peers
 * publish what they hold queued, not what they send next). One gateway alone sees no one
 * else's requests, but for clients that bypass it and requests that ended between the
 * engine's metrics and their arrival
 * @param holdOnEngineQueue release nothing to an instance whose engine, as last scraped
 * (and not older than {@code stale-after}), has more requests waiting in its own queue
 * than this gateway (with its peers, under replica sync) had in prefill there when the
 * snapshot arrived: someone else's backlog, typically other gateway replicas that do not
 * share their load, or requests the engine preempted ({@code EngineQueueGate}). Without a
 * fresh scrape the release limits alone apply
 * @param countQueuedPrefixes placement counts the prompt of a request queued for an
 * instance as cached there ({@link QueuedPrefixes}): the shadow index learns a prompt
 * only when it is released, so without this the next turn of a conversation that arrives
 * while the previous turn still waits in the queue finds none of that turn's prompt
 * cached anywhere and may be placed on the other candidate, where the conversation's
 * prefix is computed and held a second time
 * @param moveIntervalNanos the hotspot moves and the idle pull run at most once per this
 * interval, on the first event or tick after it has passed since they last ran
 * ({@link DispatchQueues#nextDeadlineNanos()} names that time while requests that may
 * move are queued); 0 runs them after every event. A move serves a request that has
 * waited long enough to miss its SLO, so looking for one after every arrival, first token
 * and end finds what a look every few tens of milliseconds finds, at a cost per event
 * that grows with the pool's queues
 * @param maxMoveChecksPerTrigger bound on the queued requests one pass of the hotspot
 * moves considers for a move (each late request whose target it looks for and whose gain
 * it computes): a pass that reaches it makes the best move among those it considered, and
 * the next pass starts after the queue where it stopped, so every hotspot has its turn
 * and one event does bounded work whatever the number of late requests; 0, the default:
 * no bound, every pass considers every request its rule reaches
 * @param maxPullChecksPerTrigger bound on the queued requests one pass of the idle pull
 * looks at over all idle instances: a pass that reaches it stops at the idle instance
 * where it ran out, and the next pass starts after that one, so every idle instance has
 * its turn; 0: no bound (each idle instance still looks at no more than its oldest 32
 * pullable requests)
 * @param rescueMaxKvUsage with {@code rescue}, a request is never sent (or queued) to an
 * instance whose engine, as last scraped (fresh), uses more than this share of its KV
 * cache while that instance holds less of its prompt than the one it waited for (the
 * prompt would be computed and held a second time where the cache is full) or runs
 * another sender's requests while no peer publishes its load there (a gateway replica
 * without replica sync, whose queues this one cannot see and whose requests a rescue
 * there would make expire and be rescued in turn); 1: no limit
 */
public record QueueSettings(DispatchMode mode, int maxPrefillRequests, long maxPrefillTokens, long agingNanos,
		int maxQueuedPerInstance, int maxQueuedPerPool, long maxWaitNanos, Expiry expiry, int maxMigrations,
		double migrationMargin, int maxMovesPerTrigger, long unavailableRetryAfterSeconds, boolean idlePull,
		boolean sloAware, double maxWaitShare, boolean rescue, boolean rescueToQueue, boolean moveLateOnly,
		boolean shedHopeless, boolean shedBehindForeignPrefill, boolean shedWhereOthersSend, boolean holdOnEngineQueue,
		boolean countQueuedPrefixes, long moveIntervalNanos, int maxMoveChecksPerTrigger, int maxPullChecksPerTrigger,
		double rescueMaxKvUsage) {

	/** Default prefill request bound per instance. */
	public static final int DEFAULT_MAX_PREFILL_REQUESTS = 32;

	/** Default prefill token bound per instance: two vLLM H100 chunked-prefill steps. */
	public static final long DEFAULT_MAX_PREFILL_TOKENS = 2 * 8192;

	/**
	 * Default share of its TTFT SLO a request may wait in its queue before the rescue
	 * places it elsewhere (or it is turned away): half. A shorter share serves more
	 * requests on the conversation trace only by turning away more long prompts: judged
	 * on the prompt tokens served as well it is level, and it serves less on the
	 * synthetic workloads (docs/benchmarks.md, "Ideas measured that did not pay off").
	 */
	public static final double DEFAULT_MAX_WAIT_SHARE = 0.5;

	/** Late binding unless configured otherwise. */
	public static final DispatchMode DEFAULT_MODE = DispatchMode.QUEUE;

	/**
	 * Default aging bound: below the 2.5 s switch budget of the default 5 s SLO, so
	 * cache-priority reordering alone never pushes a request past its SLO.
	 */
	public static final Duration DEFAULT_AGING = Duration.ofSeconds(2);

	/**
	 * Default queue bound per instance: about two SLOs of 2k-token prefills at 25 us per
	 * token; more queued work could only produce misses.
	 */
	public static final int DEFAULT_MAX_QUEUED_PER_INSTANCE = 256;

	/**
	 * Default queue bound per pool: bodies are held in memory while queued, 1024 x the
	 * 256 KB codec limit = 256 MB at worst.
	 */
	public static final int DEFAULT_MAX_QUEUED_PER_POOL = 1024;

	/**
	 * Default wait bound: generous against bursts; sustained overload is shed instead of
	 * timing out in the client.
	 */
	public static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(30);

	/** Times one queued request may be moved by the rebalancer. */
	public static final int DEFAULT_MAX_MIGRATIONS = 2;

	/** A move must gain more than this fraction of the request's SLO. */
	public static final double DEFAULT_MIGRATION_MARGIN = 0.1;

	/** Bound on moves per rebalancing pass. */
	public static final int DEFAULT_MAX_MOVES_PER_TRIGGER = 16;

	/**
	 * No bound on the requests one pass of the moves considers by default: a bound of 16
	 * (as many as a pass may move) takes the mean cost of an event past capacity to about
	 * 0.65-0.9 times and serves as much within the simulator's run-to-run noise, a step
	 * lower in some single runs (docs/benchmarks.md, "Decision cost"), so, like the move
	 * interval, it is for a gateway whose CPU is its bottleneck.
	 */
	public static final int DEFAULT_MAX_MOVE_CHECKS_PER_TRIGGER = 0;

	/**
	 * The idle pull looks at no more than 16 requests per pass (as many as a pass may
	 * move): past capacity in front of hundreds of instances a pass meets many idle
	 * candidates, most of whose requests are not worth pulling, and the bound halves an
	 * event's cost there at 512 instances; the simulator's runs at 8 to 32 instances
	 * serve the same capacity with it (docs/benchmarks.md, "Decision cost").
	 */
	public static final int DEFAULT_MAX_PULL_CHECKS_PER_TRIGGER = 16;

	/**
	 * Default {@code Retry-After} when no instance accepts work: about one discovery
	 * refresh or circuit-breaker half-open probe.
	 */
	public static final Duration DEFAULT_UNAVAILABLE_RETRY_AFTER = Duration.ofSeconds(5);

	/** An idle candidate taking over queued work is what late binding is for. */
	public static final boolean DEFAULT_IDLE_PULL = true;

	/** Aging and shedding by SLO class. */
	public static final boolean DEFAULT_SLO_AWARE = true;

	/** An expired request is first offered to another instance. */
	public static final boolean DEFAULT_RESCUE = true;

	/** A rescued request may join another instance's queue. */
	public static final boolean DEFAULT_RESCUE_TO_QUEUE = true;

	/**
	 * No rescue into an instance holding less of the prompt or running an unsynced
	 * sender's requests while its KV cache is more than 90 % used, the SLO switch's limit
	 * (SchedulerSettings#DEFAULT_SWITCH_MAX_KV_USAGE): on the synthetic RAG workload one
	 * gateway serves 1.02x with it and four without replica sync 1.52x, on the synthetic
	 * sessions four without replica sync 1.16x, where their rescues had filled the
	 * engines' caches with copies of the same prefixes (docs/benchmarks.md).
	 */
	public static final double DEFAULT_RESCUE_MAX_KV_USAGE = 0.9;

	/** Moves only for requests that would be late where they wait. */
	public static final boolean DEFAULT_MOVE_LATE_ONLY = true;

	/**
	 * The long cold prompts it holds back would take the engine time the requests behind
	 * them need (docs/design.md, "Late binding").
	 */
	public static final boolean DEFAULT_SHED_HOPELESS = true;

	/** Default: a late request is not sent behind another sender's prompt in prefill. */
	public static final boolean DEFAULT_SHED_BEHIND_FOREIGN_PREFILL = true;

	/**
	 * Default: a late request is not sent where the engine shows another sender's
	 * requests.
	 */
	public static final boolean DEFAULT_SHED_WHERE_OTHERS_SEND = true;

	/**
	 * Replicas that do not share their load keep one engine queue between them instead of
	 * one budget each (docs/benchmarks.md, "Several gateway replicas"); it holds nothing
	 * for one gateway whose engines preempt nothing.
	 */
	public static final boolean DEFAULT_HOLD_ON_ENGINE_QUEUE = true;

	/**
	 * Placement counts queued prompts as cached where they wait: a conversation whose
	 * next turn arrives while its previous turn is still queued follows that turn
	 * (docs/benchmarks.md, "Synthetic workloads").
	 */
	public static final boolean DEFAULT_COUNT_QUEUED_PREFIXES = true;

	/**
	 * The queue's moves run after every event by default: on an interval (50 ms) they
	 * cost a fraction past capacity, at the same capacity within the simulator's
	 * run-to-run noise for one gateway or several, never above it (docs/benchmarks.md,
	 * "Decision cost").
	 */
	public static final Duration DEFAULT_MOVE_INTERVAL = Duration.ZERO;

	/** What to do with a request that waited {@code maxWait} in the queue. */
	public enum Expiry {

		/**
		 * Reject with 503 and {@code Retry-After}: sheds load the instance cannot serve
		 * within any reasonable SLO, instead of spending prefill on a client that has
		 * likely given up.
		 */
		REJECT,
		/**
		 * Send it to its instance regardless of capacity: a slow answer over an error.
		 */
		DISPATCH

	}

	/** Expired requests are rejected unless configured otherwise. */
	public static final Expiry DEFAULT_EXPIRY = Expiry.REJECT;

	public QueueSettings {
		positive("maxPrefillRequests", maxPrefillRequests);
		positive("maxPrefillTokens", maxPrefillTokens);
		positive("agingNanos", agingNanos);
		positive("maxQueuedPerInstance", maxQueuedPerInstance);
		positive("maxQueuedPerPool", maxQueuedPerPool);
		positive("maxWaitNanos", maxWaitNanos);
		nonNegative("maxMigrations", maxMigrations);
		if (!(migrationMargin >= 0 && migrationMargin < 1)) {
			throw new IllegalArgumentException("migrationMargin must be in [0, 1) but was " + migrationMargin);
		}
		positive("maxMovesPerTrigger", maxMovesPerTrigger);
		positive("unavailableRetryAfterSeconds", unavailableRetryAfterSeconds);
		if (!(maxWaitShare >= 0) || Double.isInfinite(maxWaitShare)) {
			throw new IllegalArgumentException("maxWaitShare must be finite and >= 0 but was " + maxWaitShare);
		}
		nonNegative("maxMoveChecksPerTrigger", maxMoveChecksPerTrigger);
		nonNegative("maxPullChecksPerTrigger", maxPullChecksPerTrigger);
		nonNegative("moveIntervalNanos", moveIntervalNanos);
		if (!(rescueMaxKvUsage > 0 && rescueMaxKvUsage <= 1)) {
			throw new IllegalArgumentException("rescueMaxKvUsage must be in (0, 1] but was " + rescueMaxKvUsage);
		}
	}

	/**
	 * The requests one pass of the hotspot moves may consider:
	 * {@link #maxMoveChecksPerTrigger()}, or without bound for 0.
	 */
	public int moveChecksPerPass() {
		return perPass(maxMoveChecksPerTrigger);
	}

	/**
	 * The requests one pass of the idle pull may look at:
	 * {@link #maxPullChecksPerTrigger()}, or without bound for 0.
	 */
	public int pullChecksPerPass() {
		return perPass(maxPullChecksPerTrigger);
	}

	/** A bound on a pass's checks as a count: 0, no bound, is every request. */
	private static int perPass(int bound) {
		return bound == 0 ? Integer.MAX_VALUE : bound;
	}

	/**
	 * How long a request may wait in the queues: its SLO class's own bound when the class
	 * sets one ({@code classMaxWaitNanos} > 0, an explicit choice for that class that the
	 * share does not shorten); else {@link #maxWaitNanos()}, with {@link Expiry#REJECT}
	 * and a {@link #maxWaitShare()} no longer than that share of {@code sloNanos}, at
	 * least 1 ns.
	 */
	public long waitBoundNanos(long classMaxWaitNanos, long sloNanos) {
		if (classMaxWaitNanos > 0) {
			return classMaxWaitNanos;
		}
		long bound = maxWaitNanos;
		if (maxWaitShare > 0 && expiry == Expiry.REJECT && sloNanos > 0) {
			bound = Math.min(bound, Math.max(1, (long) Math.min(Long.MAX_VALUE, maxWaitShare * sloNanos)));
		}
		return bound;
	}

	private static void positive(String name, long v) {
		if (v <= 0) {
			throw new IllegalArgumentException(name + " must be > 0 but was " + v);
		}
	}

	private static void nonNegative(String name, long v) {
		if (v < 0) {
			throw new IllegalArgumentException(name + " must be >= 0 but was " + v);
		}
	}

	public static QueueSettings ofDefaults() {
		return custom().build();
	}

	public static Builder custom() {
		return new Builder();
	}

	/** A builder that starts from this object's values. */
	public Builder toBuilder() {
		Builder b = new Builder();
		b.mode = mode;
		b.maxPrefillRequests = maxPrefillRequests;
		b.maxPrefillTokens = maxPrefillTokens;
		b.agingNanos = agingNanos;
		b.maxQueuedPerInstance = maxQueuedPerInstance;
		b.maxQueuedPerPool = maxQueuedPerPool;
		b.maxWaitNanos = maxWaitNanos;
		b.expiry = expiry;
		b.maxMigrations = maxMigrations;
		b.migrationMargin = migrationMargin;
		b.maxMovesPerTrigger = maxMovesPerTrigger;
		b.unavailableRetryAfterSeconds = unavailableRetryAfterSeconds;
		b.idlePull = idlePull;
		b.sloAware = sloAware;
		b.maxWaitShare = maxWaitShare;
		b.rescue = rescue;
		b.rescueToQueue = rescueToQueue;
		b.moveLateOnly = moveLateOnly;
		b.shedHopeless = shedHopeless;
		b.shedBehindForeignPrefill = shedBehindForeignPrefill;
		b.shedWhereOthersSend = shedWhereOthersSend;
		b.holdOnEngineQueue = holdOnEngineQueue;
		b.countQueuedPrefixes = countQueuedPrefixes;
		b.moveIntervalNanos = moveIntervalNanos;
		b.maxMoveChecksPerTrigger = maxMoveChecksPerTrigger;
		b.maxPullChecksPerTrigger = maxPullChecksPerTrigger;
		b.rescueMaxKvUsage = rescueMaxKvUsage;
		return b;
	}

	/** Fluent builder; every setter takes the value as documented on the record. */
	public static final class Builder {

		private DispatchMode mode = DEFAULT_MODE;

		private int maxPrefillRequests = DEFAULT_MAX_PREFILL_REQUESTS;

		private long maxPrefillTokens = DEFAULT_MAX_PREFILL_TOKENS;

		private long agingNanos = DEFAULT_AGING.toNanos();

		private int maxQueuedPerInstance = DEFAULT_MAX_QUEUED_PER_INSTANCE;

		private int maxQueuedPerPool = DEFAULT_MAX_QUEUED_PER_POOL;

		private long maxWaitNanos = DEFAULT_MAX_WAIT.toNanos();

		private Expiry expiry = DEFAULT_EXPIRY;

		private int maxMigrations = DEFAULT_MAX_MIGRATIONS;

		private double migrationMargin = DEFAULT_MIGRATION_MARGIN;

		private int maxMovesPerTrigger = DEFAULT_MAX_MOVES_PER_TRIGGER;

		private long unavailableRetryAfterSeconds = retryAfterSeconds(DEFAULT_UNAVAILABLE_RETRY_AFTER);

		private boolean idlePull = DEFAULT_IDLE_PULL;

		private boolean sloAware = DEFAULT_SLO_AWARE;

		private double maxWaitShare = DEFAULT_MAX_WAIT_SHARE;

		private boolean rescue = DEFAULT_RESCUE;

		private boolean rescueToQueue = DEFAULT_RESCUE_TO_QUEUE;

		private boolean moveLateOnly = DEFAULT_MOVE_LATE_ONLY;

		private boolean shedHopeless = DEFAULT_SHED_HOPELESS;

		private boolean shedBehindForeignPrefill = DEFAULT_SHED_BEHIND_FOREIGN_PREFILL;

		private boolean shedWhereOthersSend = DEFAULT_SHED_WHERE_OTHERS_SEND;

		private boolean holdOnEngineQueue = DEFAULT_HOLD_ON_ENGINE_QUEUE;

		private boolean countQueuedPrefixes = DEFAULT_COUNT_QUEUED_PREFIXES;

		private long moveIntervalNanos = DEFAULT_MOVE_INTERVAL.toNanos();

		private int maxMoveChecksPerTrigger = DEFAULT_MAX_MOVE_CHECKS_PER_TRIGGER;

		private int maxPullChecksPerTrigger = DEFAULT_MAX_PULL_CHECKS_PER_TRIGGER;

		private double rescueMaxKvUsage = DEFAULT_RESCUE_MAX_KV_USAGE;

		public Builder mode(DispatchMode v) {
			this.mode = v;
			return this;
		}

		public Builder maxPrefillRequests(int v) {
			this.maxPrefillRequests = v;
			return this;
		}

		public Builder maxPrefillTokens(long v) {
			this.maxPrefillTokens = v;
			return this;
		}

		public Builder aging(Duration v) {
			this.agingNanos = v.toNanos();
			return this;
		}

		public Builder maxQueuedPerInstance(int v) {
			this.maxQueuedPerInstance = v;
			return this;
		}

		public Builder maxQueuedPerPool(int v) {
			this.maxQueuedPerPool = v;
			return this;
		}

		public Builder maxWait(Duration v) {
			this.maxWaitNanos = v.toNanos();
			return this;
		}

		public Builder expiry(Expiry v) {
			this.expiry = v;
			return this;
		}

		public Builder maxMigrations(int v) {
			this.maxMigrations = v;
			return this;
		}

		public Builder migrationMargin(double v) {
			this.migrationMargin = v;
			return this;
		}

		public Builder maxMovesPerTrigger(int v) {
			this.maxMovesPerTrigger = v;
			return this;
		}

		public Builder unavailableRetryAfter(Duration v) {
			this.unavailableRetryAfterSeconds = retryAfterSeconds(v);
			return this;
		}

		/** Whole seconds, rounded up, at least 1: what {@code Retry-After} carries. */
		private static long retryAfterSeconds(Duration v) {
			return Math.max(1, (v.toMillis() + 999) / 1000);
		}

		public Builder idlePull(boolean v) {
			this.idlePull = v;
			return this;
		}

		public Builder sloAware(boolean v) {
			this.sloAware = v;
			return this;
		}

		public Builder rescue(boolean v) {
			this.rescue = v;
			return this;
		}

		public Builder rescueToQueue(boolean v) {
			this.rescueToQueue = v;
			return this;
		}

		public Builder moveLateOnly(boolean v) {
			this.moveLateOnly = v;
			return this;
		}

		public Builder holdOnEngineQueue(boolean v) {
			this.holdOnEngineQueue = v;
			return this;
		}

		public Builder countQueuedPrefixes(boolean v) {
			this.countQueuedPrefixes = v;
			return this;
		}

		public Builder shedHopeless(boolean v) {
			this.shedHopeless = v;
			return this;
		}

		public Builder shedBehindForeignPrefill(boolean v) {
			this.shedBehindForeignPrefill = v;
			return this;
		}

		public Builder shedWhereOthersSend(boolean v) {
			this.shedWhereOthersSend = v;
			return this;
		}

		public Builder maxWaitShare(double v) {
			this.maxWaitShare = v;
			return this;
		}

		public Builder moveInterval(Duration v) {
			this.moveIntervalNanos = v.toNanos();
			return this;
		}

		public Builder maxMoveChecksPerTrigger(int v) {
			this.maxMoveChecksPerTrigger = v;
			return this;
		}

		public Builder maxPullChecksPerTrigger(int v) {
			this.maxPullChecksPerTrigger = v;
			return this;
		}

		public Builder rescueMaxKvUsage(double v) {
			this.rescueMaxKvUsage = v;
			return this;
		}

		public QueueSettings build() {
			return new QueueSettings(mode, maxPrefillRequests, maxPrefillTokens, agingNanos, maxQueuedPerInstance,
					maxQueuedPerPool, maxWaitNanos, expiry, maxMigrations, migrationMargin, maxMovesPerTrigger,
					unavailableRetryAfterSeconds, idlePull, sloAware, maxWaitShare, rescue, rescueToQueue, moveLateOnly,
					shedHopeless, shedBehindForeignPrefill, shedWhereOthersSend, holdOnEngineQueue, countQueuedPrefixes,
					moveIntervalNanos, maxMoveChecksPerTrigger, maxPullChecksPerTrigger, rescueMaxKvUsage);
		}

	}

}

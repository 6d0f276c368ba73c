package io.github.dualmap.autoconfigure;

import java.time.Duration;

import io.github.dualmap.core.DispatchMode;
import io.github.dualmap.core.QueueSettings;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

/**
 * {@code dualmap.dispatch.*}, late binding: per-instance dispatch queues in the gateway,
 * released by prefill capacity (see docs/operations.md, "Dispatch queues").
 */
public class DispatchProperties {

	/**
	 * queue: requests wait in the gateway until their instance has prefill capacity (and
	 * can still be moved); pass-through: sent as soon as they are chosen.
	 */
	@NotNull(message = "dualmap.dispatch.mode must be queue or pass-through")
	private DispatchMode mode = QueueSettings.DEFAULT_MODE;

	/** Release while fewer requests than this are in prefill on the instance. */
	@Min(value = 1, message = "dualmap.dispatch.max-prefill-requests must be >= 1")
	private int maxPrefillRequests = QueueSettings.DEFAULT_MAX_PREFILL_REQUESTS;

	/**
	 * And while the uncached tokens in prefill plus the next request's stay within this.
	 */
	@Min(value = 1, message = "dualmap.dispatch.max-prefill-tokens must be >= 1")
	private long maxPrefillTokens = QueueSettings.DEFAULT_MAX_PREFILL_TOKENS;

	/**
	 * A request queued longer than this is served in arrival order ahead of the
	 * longest-cached-prefix-first order (no starvation).
	 */
	@NotNull(message = "dualmap.dispatch.aging must be set")
	private Duration aging = QueueSettings.DEFAULT_AGING;

	/**
	 * Requests one instance may hold queued; beyond it the other candidate, then 429.
	 */
	@Min(value = 1, message = "dualmap.dispatch.max-queued-per-instance must be >= 1")
	private int maxQueuedPerInstance = QueueSettings.DEFAULT_MAX_QUEUED_PER_INSTANCE;

	/**
	 * Requests the whole pool may hold queued (bodies stay in memory); beyond, 429.
	 */
	@Min(value = 1, message = "dualmap.dispatch.max-queued-per-pool must be >= 1")
	private int maxQueuedPerPool = QueueSettings.DEFAULT_MAX_QUEUED_PER_POOL;

	/** A request queued this long is expired (see expiry). */
	@NotNull(message = "dualmap.dispatch.max-wait must be set")
	private Duration maxWait = QueueSettings.DEFAULT_MAX_WAIT;

	/** reject: 503 with Retry-After; dispatch: send it to its instance anyway. */
	@NotNull(message = "dualmap.dispatch.expiry must be reject or dispatch")
	private QueueSettings.Expiry expiry = QueueSettings.DEFAULT_EXPIRY;

	/**
	 * With expiry reject, a queued request also expires once it has waited this share of
	 * its own TTFT SLO; 0 turns it off.
	 */
	@DecimalMin(value = "0", message = "dualmap.dispatch.max-wait-share must be >= 0")
	@DecimalMax(value = "1000", message = "dualmap.dispatch.max-wait-share must be <= 1000")
	private double maxWaitShare = QueueSettings.DEFAULT_MAX_WAIT_SHARE;

	public double getMaxWaitShare() {
		return this.maxWaitShare;
	}

	/**
	 * With expiry reject, an expired request first goes to another instance that can
	 * start it at once and still make its SLO, if there is one.
	 */
	private boolean rescue = QueueSettings.DEFAULT_RESCUE;

	public boolean isRescue() {
		return this.rescue;
	}

	public void setRescue(boolean rescue) {
		this.rescue = rescue;
	}

	/**
	 * With rescue, an expired request that no instance can start now joins the queue of
	 * the instance with the lowest TTFT estimate, when that still fits what is left of
	 * its SLO; it is rejected if it cannot start there in time.
	 */
	private boolean rescueToQueue = QueueSettings.DEFAULT_RESCUE_TO_QUEUE;

	public boolean isRescueToQueue() {
		return this.rescueToQueue;
	}

	public void setRescueToQueue(boolean rescueToQueue) {
		this.rescueToQueue = rescueToQueue;
	}

	/**
	 * Hotspot migration and idle pull move only a queued request that would miss its SLO
	 * where it waits, and a hotspot move goes only to an instance that can start it now;
	 * false: any move whose gain beats the migration margin.
	 */
	private boolean moveLateOnly = QueueSettings.DEFAULT_MOVE_LATE_ONLY;

	/**
	 * With expiry reject, a request about to be released whose wait so far plus its TTFT
	 * estimate there exceeds its SLO is not sent while other requests wait: it is rescued
	 * to an instance where it can still make its SLO, or answered 503.
	 */
	private boolean shedHopeless = QueueSettings.DEFAULT_SHED_HOPELESS;

	/**
	 * With shed-hopeless, a request that would miss its SLO is not sent either when
	 * nothing else waits in this gateway's queues but the instance's engine, as last
	 * scraped, shows another sender's prompt in prefill (requests this gateway did not
	 * send, and an estimated backlog, scrape.engine-backlog, beyond this gateway's
	 * prefill): gateway replicas without replica sync. The request is judged with that
	 * prompt's remaining prefill ahead of it. False: such a request is sent, late.
	 */
	private boolean shedBehindForeignPrefill = QueueSettings.DEFAULT_SHED_BEHIND_FOREIGN_PREFILL;

	public boolean isShedBehindForeignPrefill() {
		return this.shedBehindForeignPrefill;
	}

	public void setShedBehindForeignPrefill(boolean shedBehindForeignPrefill) {
		this.shedBehindForeignPrefill = shedBehindForeignPrefill;
	}

	/**
	 * With shed-hopeless, a request that would miss its SLO is not sent either when
	 * nothing else waits in this gateway's queues but the instance's engine, as last
	 * scraped, ran or queued requests this gateway did not send: other gateway replicas,
	 * with replica sync or without, whose next requests would queue behind it. False:
	 * such a request is sent, late.
	 */
	private boolean shedWhereOthersSend = QueueSettings.DEFAULT_SHED_WHERE_OTHERS_SEND;

	public boolean isShedWhereOthersSend() {
		return this.shedWhereOthersSend;
	}

	public void setShedWhereOthersSend(boolean shedWhereOthersSend) {
		this.shedWhereOthersSend = shedWhereOthersSend;
	}

	/**
	 * Release nothing to an instance whose engine, as last scraped (and not older than
	 * scrape.stale-after), has more requests waiting in its own queue than this gateway
	 * (with its peers, under replica sync) had in prefill there when the snapshot
	 * arrived: a backlog of other gateway replicas that do not share their load (replica
	 * sync off), or requests the engine preempted. Several replicas then keep one engine
	 * queue between them instead of filling one prefill budget each. Without a fresh
	 * scrape (scraping off, failed or stale) the release limits alone apply; false:
	 * always the release limits alone.
	 */
	private boolean holdOnEngineQueue = QueueSettings.DEFAULT_HOLD_ON_ENGINE_QUEUE;

	public boolean isHoldOnEngineQueue() {
		return this.holdOnEngineQueue;
	}

	public void setHoldOnEngineQueue(boolean holdOnEngineQueue) {
		this.holdOnEngineQueue = holdOnEngineQueue;
	}

	/**
	 * Placement counts the prompt of a request queued for an instance as cached there:
	 * the next turn of a conversation that arrives while the previous turn still waits in
	 * the queue follows it to its instance instead of finding none of its prompt cached
	 * on either candidate. False: placement reads the shadow index alone, which learns a
	 * prompt at its release.
	 */
	private boolean countQueuedPrefixes = QueueSettings.DEFAULT_COUNT_QUEUED_PREFIXES;

	public boolean isCountQueuedPrefixes() {
		return this.countQueuedPrefixes;
	}

	public void setCountQueuedPrefixes(boolean countQueuedPrefixes) {
		this.countQueuedPrefixes = countQueuedPrefixes;
	}

	public boolean isShedHopeless() {
		return this.shedHopeless;
	}

	public void setShedHopeless(boolean shedHopeless) {
		this.shedHopeless = shedHopeless;
	}

	public boolean isMoveLateOnly() {
		return this.moveLateOnly;
	}

	public void setMoveLateOnly(boolean moveLateOnly) {
		this.moveLateOnly = moveLateOnly;
	}

	public void setMaxWaitShare(double maxWaitShare) {
		this.maxWaitShare = maxWaitShare;
	}

	/** Times the rebalancer may move one queued request. */
	@Min(value = 0, message = "dualmap.dispatch.max-migrations must be >= 0")
	private int maxMigrations = QueueSettings.DEFAULT_MAX_MIGRATIONS;

	/**
	 * Whether an instance with spare prefill capacity pulls queued requests whose other
	 * candidate it is.
	 */
	private boolean idlePull = QueueSettings.DEFAULT_IDLE_PULL;

	public boolean isIdlePull() {
		return this.idlePull;
	}

	public void setIdlePull(boolean idlePull) {
		this.idlePull = idlePull;
	}

	/**
	 * Whether requests of other SLO classes age in proportion to their SLO and full
	 * queues shed a looser class for a tighter arrival.
	 */
	private boolean sloAware = QueueSettings.DEFAULT_SLO_AWARE;

	public boolean isSloAware() {
		return this.sloAware;
	}

	public void setSloAware(boolean sloAware) {
		this.sloAware = sloAware;
	}

	/**
	 * A move must improve the request's TTFT estimate by more than this fraction of its
	 * SLO.
	 */
	@DecimalMin(value = "0", message = "dualmap.dispatch.migration-margin must be in [0, 1)")
	@DecimalMax(value = "1", inclusive = false, message = "dualmap.dispatch.migration-margin must be in [0, 1)")
	private double migrationMargin = QueueSettings.DEFAULT_MIGRATION_MARGIN;

	/** Bound on moves per rebalancing pass, so one event does bounded work. */
	@Min(value = 1, message = "dualmap.dispatch.max-moves-per-event must be >= 1")
	private int maxMovesPerEvent = QueueSettings.DEFAULT_MAX_MOVES_PER_TRIGGER;

	/**
	 * Bound on the queued requests one pass of the hotspot moves considers for a move;
	 * the next pass starts after the queue where it stopped. 0: no bound.
	 */
	@Min(value = 0, message = "dualmap.dispatch.max-move-checks-per-event must be >= 0")
	private int maxMoveChecksPerEvent = QueueSettings.DEFAULT_MAX_MOVE_CHECKS_PER_TRIGGER;

	/**
	 * Bound on the queued requests one pass of the idle pull looks at over all idle
	 * instances; the next pass starts after the idle instance where it stopped. 0: no
	 * bound.
	 */
	@Min(value = 0, message = "dualmap.dispatch.max-pull-checks-per-event must be >= 0")
	private int maxPullChecksPerEvent = QueueSettings.DEFAULT_MAX_PULL_CHECKS_PER_TRIGGER;

	/**
	 * The rescue never sends a request to an instance whose scraped KV cache usage is
	 * above this share while it holds less of the prompt than the instance the request
	 * waited for or runs requests another sender sent without replica sync (1: off).
	 */
	@DecimalMin(value = "0", inclusive = false, message = "dualmap.dispatch.rescue-max-kv-usage must be in (0, 1]")
	@DecimalMax(value = "1", message = "dualmap.dispatch.rescue-max-kv-usage must be in (0, 1]")
	private double rescueMaxKvUsage = QueueSettings.DEFAULT_RESCUE_MAX_KV_USAGE;

	/**
	 * The hotspot moves and the idle pull run at most once per this interval, on the
	 * first event or tick after it passed; 0 runs them after every event.
	 */
	@NotNull(message = "dualmap.dispatch.move-interval must be set")
	private Duration moveInterval = QueueSettings.DEFAULT_MOVE_INTERVAL;

	/** Retry-After of a 503 when no instance accepts requests. */
	@NotNull(message = "dualmap.dispatch.unavailable-retry-after must be set")
	private Duration unavailableRetryAfter = QueueSettings.DEFAULT_UNAVAILABLE_RETRY_AFTER;

	/**
	 * Longest time between two dispatch ticks (expiry, estimated ends of non-streaming
	 * prefills, the wait-bound hotspot test, the moves on their interval); ticks run
	 * sooner at the pools' next deadline.
	 */
	@NotNull(message = "dualmap.dispatch.tick-interval must be set")
	private Duration tickInterval = Duration.ofMillis(50);

	@AssertTrue(message = "dualmap.dispatch.aging must be > 0")
	private boolean isAgingPositive() {
		return this.aging.toNanos() > 0;
	}

	@AssertTrue(message = "dualmap.dispatch.max-wait must be > 0")
	private boolean isMaxWaitPositive() {
		return this.maxWait.toNanos() > 0;
	}

	@AssertTrue(message = "dualmap.dispatch.unavailable-retry-after must be > 0")
	private boolean isUnavailableRetryAfterPositive() {
		return this.unavailableRetryAfter.toNanos() > 0;
	}

	@AssertTrue(message = "dualmap.dispatch.move-interval must be >= 0")
	private boolean isMoveIntervalNotNegative() {
		return this.moveInterval == null || !this.moveInterval.isNegative();
	}

	@AssertTrue(message = "dualmap.dispatch.tick-interval must be >= 1ms")
	private boolean isTickIntervalPositive() {
		return this.tickInterval.toMillis() >= 1;
	}

	public Duration getMoveInterval() {
		return this.moveInterval;
	}

	public void setMoveInterval(Duration moveInterval) {
		this.moveInterval = moveInterval;
	}

	public DispatchMode getMode() {
		return this.mode;
	}

	public void setMode(DispatchMode mode) {
		this.mode = mode;
	}

	public int getMaxPrefillRequests() {
		return this.maxPrefillRequests;
	}

	public void setMaxPrefillRequests(int maxPrefillRequests) {
		this.maxPrefillRequests = maxPrefillRequests;
	}

	public long getMaxPrefillTokens() {
		return this.maxPrefillTokens;
	}

	public void setMaxPrefillTokens(long maxPrefillTokens) {
		this.maxPrefillTokens = maxPrefillTokens;
	}

	public Duration getAging() {
		return this.aging;
	}

	public void setAging(Duration aging) {
		this.aging = aging;
	}

	public int getMaxQueuedPerInstance() {
		return this.maxQueuedPerInstance;
	}

	public void setMaxQueuedPerInstance(int maxQueuedPerInstance) {
		this.maxQueuedPerInstance = maxQueuedPerInstance;
	}

	public int getMaxQueuedPerPool() {
		return this.maxQueuedPerPool;
	}

	public void setMaxQueuedPerPool(int maxQueuedPerPool) {
		this.maxQueuedPerPool = maxQueuedPerPool;
	}

	public Duration getMaxWait() {
		return this.maxWait;
	}

	public void setMaxWait(Duration maxWait) {
		this.maxWait = maxWait;
	}

	public QueueSettings.Expiry getExpiry() {
		return this.expiry;
	}

	public void setExpiry(QueueSettings.Expiry expiry) {
		this.expiry = expiry;
	}

	public int getMaxMigrations() {
		return this.maxMigrations;
	}

	public void setMaxMigrations(int maxMigrations) {
		this.maxMigrations = maxMigrations;
	}

	public double getMigrationMargin() {
		return this.migrationMargin;
	}

	public void setMigrationMargin(double migrationMargin) {
		this.migrationMargin = migrationMargin;
	}

	public int getMaxMovesPerEvent() {
		return this.maxMovesPerEvent;
	}

	public void setMaxMovesPerEvent(int maxMovesPerEvent) {
		this.maxMovesPerEvent = maxMovesPerEvent;
	}

	public int getMaxMoveChecksPerEvent() {
		return this.maxMoveChecksPerEvent;
	}

	public void setMaxMoveChecksPerEvent(int maxMoveChecksPerEvent) {
		this.maxMoveChecksPerEvent = maxMoveChecksPerEvent;
	}

	public int getMaxPullChecksPerEvent() {
		return this.maxPullChecksPerEvent;
	}

	public void setMaxPullChecksPerEvent(int maxPullChecksPerEvent) {
		this.maxPullChecksPerEvent = maxPullChecksPerEvent;
	}

	public double getRescueMaxKvUsage() {
		return this.rescueMaxKvUsage;
	}

	public void setRescueMaxKvUsage(double rescueMaxKvUsage) {
		this.rescueMaxKvUsage = rescueMaxKvUsage;
	}

	public Duration getUnavailableRetryAfter() {
		return this.unavailableRetryAfter;
	}

	public void setUnavailableRetryAfter(Duration unavailableRetryAfter) {
		this.unavailableRetryAfter = unavailableRetryAfter;
	}

	public Duration getTickInterval() {
		return this.tickInterval;
	}

	public void setTickInterval(Duration tickInterval) {
		this.tickInterval = tickInterval;
	}

}

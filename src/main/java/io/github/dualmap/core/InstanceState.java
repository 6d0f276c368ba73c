package io.github.dualmap.core;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * What one router knows about one instance: its own exact accounting (tokens queued in
 * the router and in prefill, requests in flight), the last scraped engine state, the
 * shadow KV index, and whether it accepts new work (circuit breaker closed, not
 * draining). Counters are updated only through {@link InstancePool}.
 */
public final class InstanceState {

	private final String id;

	private volatile double weight;

	private final long addedAtNanos;

	private final ShadowKvIndex shadow;

	final AtomicLong queuedTokens = new AtomicLong();

	final AtomicInteger queuedRequests = new AtomicInteger();

	final AtomicLong prefillTokens = new AtomicLong();

	final AtomicInteger prefillRequests = new AtomicInteger();

	final AtomicInteger inFlight = new AtomicInteger();

	final AtomicLong dispatched = new AtomicLong();

	final AtomicLong estimatedHitTokens = new AtomicLong();

	final AtomicLong estimatedPromptTokens = new AtomicLong();

	private volatile @Nullable EngineSnapshot engine;

	private volatile boolean engineFailed;

	private volatile boolean healthy = true;

	private volatile boolean draining;

	private volatile long oldestQueuedNanos = Long.MAX_VALUE;

	private final int blockTokens;

	InstanceState(String id, double weight, long addedAtNanos, int blockTokens, int shadowCapacityBlocks) {
		this.id = id;
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

	/** Requests sent whose first token has not come back. */
	public int prefillRequests() {
		return prefillRequests.get();
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
	}

	public void updateEngine(EngineSnapshot snapshot) {
		this.engine = snapshot;
		this.engineFailed = false;
		if (snapshot.kvCapacityTokens() > 0) {
			// The shadow index follows the engine's real KV capacity once it is known.
			shadow.resize((int) Math.min(Integer.MAX_VALUE, Math.max(1, snapshot.kvCapacityTokens() / blockTokens)));
		}
	}

	public boolean healthy() {
		return healthy;
	}

	public void healthy(boolean healthy) {
		this.healthy = healthy;
	}

	public boolean draining() {
		return draining;
	}

	public void draining(boolean draining) {
		this.draining = draining;
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

	@Override
	public String toString() {
		return "InstanceState[" + id + ", pending=" + localPendingTokens() + ", inFlight=" + inFlight() + "]";
	}

}

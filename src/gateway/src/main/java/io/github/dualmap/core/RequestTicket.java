package io.github.dualmap.core;

import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * One request's ticket through {@link DispatchQueues}, from submission to its end
 * (queued, released, rejected or cancelled: {@link State}): the caller's handle for
 * cancelling it and for reporting its first token and its end. Mutable state is guarded
 * by the owning queues' lock; the getters give a consistent view only when read from its
 * listener or after it left the queue.
 */
public final class RequestTicket {

	/**
	 * Where a request is in its life; every request leaves {@link #QUEUED} exactly once.
	 */
	public enum State {

		/** Held by the router for its instance. */
		QUEUED,
		/** Sent to an instance. */
		RELEASED,
		/** Turned away with a {@link Rejection}. */
		REJECTED,
		/** Cancelled by the caller while queued (client gone). */
		CANCELLED

	}

	private final RoutingRequest request;

	private final boolean streaming;

	private final long key;

	private final long sequence;

	private final long submittedAtNanos;

	// When it is served in order of this time rather than by cached prefix: submission
	// plus
	// the queue's aging bound scaled to the request's SLO.
	final long agedAtNanos;

	// When it expires if still queued: submission plus its wait bound (its SLO class's,
	// else the queues'); after a rescue into another queue, the last moment its prefill
	// could start there and still make its SLO.
	long expiresAtNanos;

	// Whether it was rescued into another instance's queue at its wait bound: it is
	// rejected when it expires again.
	boolean rescuedToQueue;

	final DispatchListener listener;

	volatile State state = State.QUEUED;

	@Nullable Decision decision;

	// The queue the request waits in; its uncached tokens count there.
	@Nullable InstanceQueue queue;

	// The candidate that may pull it while it waits (idle pull); null when none.
	@Nullable InstanceState alternative;

	// Its two candidates on candidateRings (a membership's rings), kept while they stay.
	@Nullable Candidates candidates;

	@Nullable DualHashRing candidateRings;

	// Where a walk of ring 2 from its key starts on candidateRings; -1 until needed.
	int moveWalkStart = -1;

	// Its group in its queue's byOther (or withoutOther) while queued.
	InstanceQueue.@Nullable MoveGroup moveGroup;

	int cachedTokens;

	int uncachedTokens;

	// The last look at a shadow index for its prefix: the index, its version then and
	// the cached tokens found (QueueBook.cachedTokens).
	@Nullable ShadowKvIndex peekedShadow;

	long peekedVersion;

	int peekedTokens;

	int migrations;

	// Placed where the state it continues lives (Reason.PINNED): never migrated or
	// pulled.
	final boolean pinned;

	// Instances it must not go to (RoutingRequest.avoid): never placed, moved or pulled
	// there.
	final Set<String> avoid;

	@Nullable InstancePool.InFlight dispatch;

	// Non-streaming: when prefill is estimated to be over (first byte comes only at the
	// end).
	long prefillDeadlineNanos = Long.MAX_VALUE;

	boolean finished;

	// Its tenant's account with the queues' fair shares, once queued or released.
	FairShares.@Nullable Account account;

	// Output tokens charged to its tenant at release, corrected once when it finishes.
	int chargedOutput;

	boolean outputCorrected;

	RequestTicket(RoutingRequest request, boolean streaming, long key, long sequence, long submittedAtNanos,
			long agedAtNanos, long expiresAtNanos, @Nullable Decision decision, DispatchListener listener) {
		this.request = request;
		this.streaming = streaming;
		this.key = key;
		this.sequence = sequence;
		this.submittedAtNanos = submittedAtNanos;
		this.agedAtNanos = agedAtNanos;
		this.expiresAtNanos = expiresAtNanos;
		this.decision = decision;
		this.pinned = decision != null && decision.reason() == Reason.PINNED;
		this.avoid = request.avoid();
		this.cachedTokens = decision == null ? 0 : Math.max(0, decision.cachedTokens());
		this.uncachedTokens = decision == null ? request.promptTokens() : Math.max(0, decision.uncachedTokens());
		this.listener = listener;
	}

	public RoutingRequest request() {
		return request;
	}

	/**
	 * Whether the response streams (its first byte marks the end of prefill); for
	 * non-streaming responses prefill completion is estimated.
	 */
	public boolean streaming() {
		return streaming;
	}

	/** The routing key its candidates are computed from. */
	public long key() {
		return key;
	}

	/** Submission order, unique within one {@link DispatchQueues}. */
	public long sequence() {
		return sequence;
	}

	/** When it was submitted, on the pool's clock; its wait and age count from here. */
	public long submittedAtNanos() {
		return submittedAtNanos;
	}

	public State state() {
		return state;
	}

	/**
	 * The current placement: the policy's, or the rebalancer's after a move; {@code null}
	 * when no instance could be chosen.
	 */
	public @Nullable Decision decision() {
		return decision;
	}

	/** The instance it waits for or was sent to, {@code null} when none was chosen. */
	public @Nullable String instanceId() {
		Decision d = decision;
		return d == null ? null : d.instanceId();
	}

	/**
	 * Whether its current placement is the rescue's ({@link Reason#RESCUE}): sent, or
	 * queued again, elsewhere at its wait bound instead of being turned away, and not
	 * moved since. Once released, whether the rescue made its final placement.
	 */
	public boolean placedByRescue() {
		Decision d = decision;
		return d != null && d.reason() == Reason.RESCUE;
	}

	/**
	 * Whether it was placed on the instance holding the state it continues; such a
	 * request is never moved by rebalancing or pulled by an idle instance.
	 */
	public boolean pinned() {
		return pinned;
	}

	/** Times the rebalancer moved it. */
	public int migrations() {
		return migrations;
	}

	/** The dispatch handle once released, else {@code null}. */
	public InstancePool.@Nullable InFlight dispatch() {
		return dispatch;
	}

	@Override
	public String toString() {
		return "RequestTicket[" + request.id() + ", " + state + ", " + instanceId() + "]";
	}

}

package io.github.dualmap.core;

import org.jspecify.annotations.Nullable;

/**
 * The dispatch queues' release gate for one pool: whether an instance has prefill room
 * for a request now.
 * <p>
 * The local rule: fewer than {@link QueueSettings#maxPrefillRequests()} requests sent
 * there without a first token and room for the request's uncached tokens within
 * {@link QueueSettings#maxPrefillTokens()}, or nothing in prefill at all (a larger
 * request is never stranded). Under replica sync the peers' published prefill counts.
 * <p>
 * Gateway replicas without replica sync each apply that rule to their own prefill, so R
 * of them release up to R budgets to an instance and the excess waits in the engine's own
 * queue, where nothing can move it to the other candidate or turn it away when it can no
 * longer make its SLO. With {@link QueueSettings#holdOnEngineQueue()} a replica also
 * holds its releases to an instance while the engine's queue, as last scraped, holds
 * requests it did not send: more waiting there than this gateway (with its peers, under
 * replica sync) had in prefill when the snapshot arrived
 * ({@link InstanceState#prefillRequestsAtScrape()}). Every replica sees the same engine,
 * so together they keep its queue near what one gateway would leave there, and the rest
 * waits in the gateways' queues, still movable. For a single gateway the engine's queue
 * is its own (the requests it has in prefill, minus those already running), so the rule
 * holds nothing there, except behind requests the engine preempted. Comparing with this
 * gateway's prefill at the snapshot, not now, keeps its own requests that got their first
 * token since from looking like someone else's backlog until the next scrape.
 * <p>
 * The same holds while the engine has more than one prefill budget
 * ({@link QueueSettings#maxPrefillTokens()}) of someone else's prompts in prefill, by its
 * backlog estimated from its prefix-cache counters ({@link EngineBacklog}): another
 * replica's long prompt keeps a chunked-prefill engine from starting anything else for
 * seconds, with nothing waiting there yet for the queue rule to see, and a request
 * released behind it could neither move nor meet its SLO. Below that budget
 * {@link #foreignPrefill} tells the release pass that someone else's prompt is in prefill
 * there, so a request that can no longer make its SLO is not sent behind it
 * ({@link QueueSettings#shedBehindForeignPrefill()}), and {@link #otherSenders} that
 * another sender's requests run there at all, whose next ones a late request would hold
 * up ({@link QueueSettings#shedWhereOthersSend()}).
 * <p>
 * A snapshot older than {@code stale-after}, a failed scrape or none at all is unknown,
 * never saturated: the local rule alone applies. Once the other replicas publish their
 * load on the instance (replica sync with share-load) the release limits count their
 * prefill every flush, and the slower scrape holds nothing there.
 */
final class EngineQueueGate {

	private final QueueSettings settings;

	private final InstancePool pool;

	EngineQueueGate(QueueSettings settings, InstancePool pool) {
		this.settings = settings;
		this.pool = pool;
	}

	/** Whether {@code s} may start a request of {@code uncached} tokens now. */
	boolean hasRoom(InstanceState s, int uncached) {
		if (holding(s)) {
			return false;
		}
		return hasRoom(s.sharedPrefillRequests(), s.sharedPrefillTokens(), uncached, settings);
	}

	/**
	 * Whether {@code s} holds every release because its engine's queue holds requests
	 * this gateway did not send ({@link QueueSettings#holdOnEngineQueue()}).
	 */
	boolean holding(InstanceState s) {
		if (!settings.holdOnEngineQueue() || s.peerLoadShared()) {
			return false;
		}
		return foreignRequests(s) > 0 || foreignPrefillTokens(s) > settings.maxPrefillTokens();
	}

	/**
	 * Uncached tokens of another sender's prompt in prefill on {@code s}, as far as this
	 * gateway can tell without its peers' load: its last snapshot showed requests this
	 * gateway did not send, and the engine's estimated backlog, while that snapshot is
	 * fresh, exceeds this gateway's prefill there ({@link #foreignPrefillTokens}). 0 when
	 * either is not shown, and where peers publish their load (they say what they
	 * queued).
	 */
	long foreignPrefill(InstanceState s) {
		if (s.peerLoadShared() || s.foreignRequestsAtScrape() <= 0) {
			return 0;
		}
		return foreignPrefillTokens(s);
	}

	/**
	 * Whether the engine of {@code s}, as last scraped and still fresh, ran or queued
	 * requests this gateway did not send ({@link InstanceState#foreignRequestsAtScrape}):
	 * another sender, whose next requests queue behind what this gateway sends there.
	 * Peers that publish their load under replica sync are such senders too: what they
	 * publish is what they hold queued and in prefill, not what they will send next.
	 * False when the snapshot is stale, failed or missing, or counts no requests.
	 */
	boolean otherSenders(InstanceState s) {
		return s.othersSendAt(pool.now(), pool.settings().staleAfterNanos());
	}

	/**
	 * Uncached tokens the engine of {@code s} has in prefill beyond this gateway's own,
	 * by its estimated backlog while the last snapshot is fresh
	 * ({@link InstanceState#engineBacklogBeyond}); 0 when unknown or not estimated.
	 */
	long foreignPrefillTokens(InstanceState s) {
		long now = pool.now();
		return s.freshEngine(now, pool.settings().staleAfterNanos()) == null ? 0
				: s.engineBacklogBeyond(s.prefillTokens(), now);
	}

	/**
	 * Whether {@code s} has no room for a request of any size: its prefill is at the
	 * request limit, or over the token limit already. Then {@link #hasRoom} is false for
	 * every request, and this answers without the request.
	 */
	boolean full(InstanceState s) {
		int inPrefill = s.sharedPrefillRequests();
		return inPrefill != 0 && (inPrefill >= settings.maxPrefillRequests()
				|| s.sharedPrefillTokens() > settings.maxPrefillTokens());
	}

	/**
	 * The local rule: {@code inPrefill} requests with {@code prefillTokens} uncached
	 * tokens in prefill, a candidate of {@code uncached} tokens.
	 */
	static boolean hasRoom(int inPrefill, long prefillTokens, int uncached, QueueSettings settings) {
		return inPrefill == 0 || (inPrefill < settings.maxPrefillRequests()
				&& prefillTokens + uncached <= settings.maxPrefillTokens());
	}

	/**
	 * Requests waiting in the engine of {@code s}, as last scraped and still fresh,
	 * beyond those this gateway (with its peers) had in prefill there when the snapshot
	 * arrived; 0 when the engine view is unknown.
	 */
	int foreignRequests(InstanceState s) {
		return foreignRequests(s.freshEngine(pool.now(), pool.settings().staleAfterNanos()),
				s.prefillRequestsAtScrape());
	}

	/**
	 * Requests in {@code fresh}'s queue that are not among the {@code ownAtScrape} this
	 * gateway had in prefill when it was taken; 0 for a {@code null} (stale, failed or
	 * missing) snapshot.
	 */
	static int foreignRequests(@Nullable EngineSnapshot fresh, int ownAtScrape) {
		if (fresh == null || fresh.waiting() <= 0) {
			return 0;
		}
		return Math.max(0, fresh.waiting() - Math.max(0, ownAtScrape));
	}

}

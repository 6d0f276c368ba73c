package io.github.dualmap.core;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The SGLang Model Gateway's load selector ({@code least_load}'s
 * {@code select_min_expected_wait}, smg-project/smg
 * {@code model_gateway/src/policies/least_load.rs} at {@code 65e5d81e}), which its
 * {@code cache_aware} policy calls once per request on a final candidate set since smg
 * #2341: the candidates that hold the longest match and pass the spill gate, or every
 * instance on a miss or a spill. With it {@code cache_aware} polls engine loads in every
 * configuration. It takes the candidate with the lowest expected wait
 *
 * <pre>
 * (queued tokens + tokens this router sent since the last load poll) / throughput
 *     + kvPressureWeight x k / (1 - k)
 * </pre>
 *
 * where the load poll runs every {@code pollInterval} and reads each engine's waiting
 * requests and KV usage {@code k}. A vLLM engine reports no queued token count and, over
 * HTTP, no generation throughput: the queue counts {@code meanPrefillTokens} per waiting
 * request and the throughput is {@code defaultThroughput}. A request sent since the poll
 * counts its prompt tokens when the router knows them (gRPC workers) and
 * {@code meanPrefillTokens} otherwise (HTTP). An instance whose last poll failed, while
 * others have a load, scores its in-flight count x {@code meanPrefillTokens} / the
 * throughput; with no polled load anywhere the in-flight count decides. Ties go at
 * random, here by a hash of the request id. Thread-safe.
 */
final class ExpectedWaitSelector {

	/** {@code DEFAULT_KV_PRESSURE_WEIGHT}: seconds of the KV barrier. */
	static final double DEFAULT_KV_PRESSURE_WEIGHT = 0.15;

	/** {@code DEFAULT_MEAN_PREFILL_TOKENS}. */
	static final int DEFAULT_MEAN_PREFILL_TOKENS = 1024;

	/** {@code DEFAULT_THROUGHPUT}, tokens per second. */
	static final double DEFAULT_THROUGHPUT = 2000;

	/** The worker monitor's {@code load_check_interval_secs} default. */
	static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(10);

	// Upstream clamps k below the pole of k / (1 - k).
	private static final double MAX_KV_USAGE = 0.999;

	/** One instance's load as last polled. */
	private record Polled(int waiting, double kvUsage) {
	}

	private final double kvPressureWeight;

	private final int meanPrefillTokens;

	private final double defaultThroughput;

	private final long pollIntervalNanos;

	private final boolean tokensKnown;

	private final Map<String, Polled> polled = new HashMap<>();

	// Tokens sent to each instance since its last poll.
	private final Map<String, Long> sincePoll = new HashMap<>();

	private long nextPollNanos = Long.MIN_VALUE;

	private final TieBreaker ties = new TieBreaker();

	/**
	 * The upstream defaults.
	 * @param tokensKnown whether the router knows a request's prompt tokens (gRPC
	 * workers) rather than counting {@link #DEFAULT_MEAN_PREFILL_TOKENS} (HTTP)
	 */
	ExpectedWaitSelector(boolean tokensKnown) {
		this(DEFAULT_KV_PRESSURE_WEIGHT, DEFAULT_MEAN_PREFILL_TOKENS, DEFAULT_THROUGHPUT, DEFAULT_POLL_INTERVAL,
				tokensKnown);
	}

	ExpectedWaitSelector(double kvPressureWeight, int meanPrefillTokens, double defaultThroughput,
			Duration pollInterval, boolean tokensKnown) {
		if (!(kvPressureWeight >= 0) || Double.isInfinite(kvPressureWeight)) {
			throw new IllegalArgumentException("kvPressureWeight must be >= 0 and finite but was " + kvPressureWeight);
		}
		if (meanPrefillTokens <= 0) {
			throw new IllegalArgumentException("meanPrefillTokens must be > 0 but was " + meanPrefillTokens);
		}
		if (!(defaultThroughput > 0) || Double.isInfinite(defaultThroughput)) {
			throw new IllegalArgumentException("defaultThroughput must be > 0 and finite but was " + defaultThroughput);
		}
		if (pollInterval.isNegative() || pollInterval.isZero()) {
			throw new IllegalArgumentException("pollInterval must be > 0 but was " + pollInterval);
		}
		this.kvPressureWeight = kvPressureWeight;
		this.meanPrefillTokens = meanPrefillTokens;
		this.defaultThroughput = defaultThroughput;
		this.pollIntervalNanos = pollInterval.toNanos();
		this.tokensKnown = tokensKnown;
	}

	/**
	 * The candidate with the lowest expected wait, credited with {@code request}'s tokens
	 * until its next poll.
	 * @param candidates members of {@code pool}, not empty
	 */
	synchronized InstanceState select(List<InstanceState> candidates, RoutingRequest request, InstancePool pool) {
		if (candidates.isEmpty()) {
			throw new IllegalArgumentException("no candidates");
		}
		poll(pool);
		// Scoped to the candidates, as upstream scopes it.
		boolean fleetHasLoads = candidates.stream().anyMatch(s -> polled.containsKey(s.id()));
		InstanceState best = ties.lowest(candidates, s -> score(s, fleetHasLoads), request);
		PromptBlocks blocks = request.blocks();
		long tokens = tokensKnown && blocks != null ? blocks.promptTokens() : meanPrefillTokens;
		sincePoll.merge(best.id(), tokens, Long::sum);
		return best;
	}

	/**
	 * The load poll, when one is due: takes the scraped state of every instance whose
	 * scrape succeeded and restarts its since-poll count; an instance whose scrape failed
	 * has no load until a poll succeeds (the monitor's snapshot lacks it).
	 */
	private void poll(InstancePool pool) {
		long now = pool.now();
		if (now < nextPollNanos) {
			return;
		}
		// On the poll's own cadence, however long since the last request.
		nextPollNanos = nextPollNanos == Long.MIN_VALUE ? now + pollIntervalNanos
				: nextPollNanos + ((now - nextPollNanos) / pollIntervalNanos + 1) * pollIntervalNanos;
		for (InstanceState s : pool.instances()) {
			EngineSnapshot e = s.engineFailed() ? null : s.engine();
			// vLLM's poll needs its KV usage gauge; without it the poll fails.
			if (e != null && !Double.isNaN(e.kvUsage())) {
				polled.put(s.id(), new Polled(Math.max(0, e.waiting()), e.kvUsage()));
				sincePoll.remove(s.id());
			}
			else {
				polled.remove(s.id());
			}
		}
	}

	private double score(InstanceState s, boolean fleetHasLoads) {
		Polled p = polled.get(s.id());
		if (p != null) {
			long sent = sincePoll.getOrDefault(s.id(), 0L);
			double k = Math.min(Math.max(p.kvUsage(), 0), MAX_KV_USAGE);
			return ((double) p.waiting() * meanPrefillTokens + sent) / defaultThroughput
					+ kvPressureWeight * k / (1 - k);
		}
		if (fleetHasLoads) {
			return (double) s.inFlight() * meanPrefillTokens / defaultThroughput;
		}
		return s.inFlight();
	}

	/** Forgets instances not in {@code members}. */
	synchronized void retain(Set<String> members) {
		polled.keySet().retainAll(members);
		sincePoll.keySet().retainAll(members);
	}

	/** The polled load's waiting requests of {@code instanceId}, -1 if none (tests). */
	synchronized int polledWaiting(String instanceId) {
		Polled p = polled.get(instanceId);
		return p == null ? -1 : p.waiting();
	}

	/** Tokens credited to {@code instanceId} since its last poll (tests). */
	synchronized long sentSincePoll(String instanceId) {
		return sincePoll.getOrDefault(instanceId, 0L);
	}

}

package io.github.dualmap.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.github.dualmap.core.Candidates;
import io.github.dualmap.core.DispatchQueues;
import io.github.dualmap.core.DualHashRing;
import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.core.HotPrefixTable;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.PrefixDirectory;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.Rejection;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.gateway.ServicePool;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Reads one {@link ServicePool} into a {@link DualMapDescriptor.Pool}, warnings included.
 * Read-only: it creates no breaker and touches no LRU order.
 */
final class PoolInspection {

	/**
	 * Below this many instances dual mapping buys little: with two, both candidates of
	 * every key are the same two instances.
	 */
	static final int MIN_USEFUL_INSTANCES = 3;

	/**
	 * Keys sampled to estimate each instance's candidate shares; 4096 keys put the
	 * standard error of a 1/3 share near 0.7 percentage points.
	 */
	static final int SHARE_SAMPLE_KEYS = 4096;

	/** The statuses a rejected request is answered with. */
	static final List<Integer> REJECTION_STATUSES = List.of(Rejection.TOO_MANY_REQUESTS, Rejection.SERVICE_UNAVAILABLE);

	private static final HexFormat HEX = HexFormat.of();

	private PoolInspection() {
	}

	static DualMapDescriptor.Pool inspect(ServicePool service) {
		InstancePool pool = service.instancePool();
		SchedulerSettings settings = pool.settings();
		long now = pool.now();
		List<InstanceState> states = pool.instances();
		DualHashRing rings = pool.rings();
		Map<String, double[]> shares = candidateShares(rings);
		Map<String, CircuitBreaker.State> breakers = new HashMap<>();
		for (CircuitBreaker b : service.breakers().all()) {
			breakers.put(b.getName(), b.getState());
		}
		List<String> warnings = new ArrayList<>();
		List<DualMapDescriptor.Instance> instances = new ArrayList<>(states.size());
		int accepting = 0;
		for (InstanceState s : states) {
			if (s.acceptsNewWork()) {
				accepting++;
			}
			// A breaker is created closed on first use: none yet means closed.
			CircuitBreaker.State breaker = breakers.getOrDefault(s.id(), CircuitBreaker.State.CLOSED);
			DualMapDescriptor.Instance instance = instance(service, s, rings, shares, breaker, now);
			instances.add(instance);
			instanceWarnings(service.serviceId(), instance, warnings);
		}
		poolWarnings(service.serviceId(), instances, accepting, warnings);
		Duration kept = service.keptThroughEmptyLists();
		if (kept != null) {
			warnings.add("service '" + service.serviceId() + "': discovery has listed no instance for "
					+ kept.toSeconds() + " s (or could not be read); its " + instances.size()
					+ " known instances are kept until dualmap.discovery.empty-list-grace runs out");
		}
		List<DualMapDescriptor.HotPrefix> hot = new ArrayList<>();
		for (HotPrefixTable.HotPrefix h : pool.hotPrefixes().hotPrefixes()) {
			hot.add(new DualMapDescriptor.HotPrefix(hex(h.hash()), h.share()));
		}
		DualMapDescriptor.TtftModel model = new DualMapDescriptor.TtftModel(pool.estimator().nanosPerToken() / 1e6,
				settings.prefillNanosPerToken() / 1e6, DualMapDescriptor.millis(pool.estimator().baseNanos()));
		QueueSettings queueSettings = service.queues().settings();
		return new DualMapDescriptor.Pool(service.serviceId(), service.policyName(), queueSettings.mode().value(),
				DualMapDescriptor.millis(settings.defaultSloNanos()), DualMapDescriptor.Dispatch.of(queueSettings),
				states.size(), accepting, pool.ringRebuilds(), pool.loadCv(), pool.meanPendingTokens(), model,
				queue(service), List.copyOf(instances), List.copyOf(hot), directory(pool), List.copyOf(warnings));
	}

	static DualMapDescriptor.@Nullable Directory directory(InstancePool pool) {
		PrefixDirectory d = pool.directoryIfKept();
		return d == null ? null : new DualMapDescriptor.Directory(d.size(), d.capacity());
	}

	static DualMapDescriptor.Queue queue(ServicePool service) {
		DispatchQueues q = service.queues();
		Map<Integer, Long> byStatus = new TreeMap<>();
		for (int status : REJECTION_STATUSES) {
			byStatus.put(status, service.rejections(status));
		}
		return new DualMapDescriptor.Queue(q.queued(), q.migrations(), q.rerouted(), q.rescues(), q.rescuesQueued(),
				q.hopelessShed(), q.hopelessShedForOthers(), q.rejections(), q.releases(),
				Collections.unmodifiableMap(byStatus));
	}

	static String hex(long hash) {
		return HEX.toHexDigits(hash);
	}

	static DualMapDescriptor.Instance instance(ServicePool service, InstanceState s) {
		InstancePool pool = service.instancePool();
		CircuitBreaker.State breaker = service.breakers()
			.all()
			.stream()
			.filter(b -> b.getName().equals(s.id()))
			.map(CircuitBreaker::getState)
			.findFirst()
			.orElse(CircuitBreaker.State.CLOSED);
		return instance(service, s, pool.rings(), candidateShares(pool.rings()), breaker, pool.now());
	}

	private static DualMapDescriptor.Instance instance(ServicePool service, InstanceState s, DualHashRing rings,
			Map<String, double[]> shares, CircuitBreaker.State breaker, long now) {
		InstancePool pool = service.instancePool();
		ServiceInstance discovered = service.serviceInstance(s.id());
		double[] share = shares.getOrDefault(s.id(), new double[2]);
		return new DualMapDescriptor.Instance(s.id(), discovered == null ? null : discovered.getUri().toString(),
				s.weight(), rings.virtualNodesOf(s.id()), share[0], share[1], s.healthy(), breaker.name(),
				service.breakers().responsive(s.id()), s.draining(), service.isIdle(s.id()), pool.isHotspot(s),
				s.queuedTokens(), s.prefillTokens(), s.localPendingTokens(), pool.pendingTokens(s), s.inFlight(),
				service.queues().queued(s.id()), s.prefillRequests(), s.peerPrefillRequests(), s.peerPendingTokens(),
				s.peerQueuedTokens(), s.peerPrefillPairs(), s.dispatched(), finite(s.estimatedHitRate()),
				s.shadow().size(), s.shadow().capacityBlocks(), service.scrapeFailures(s.id()),
				DualMapDescriptor.millis(now - s.addedAtNanos()), ttftEstimateMs(s),
				engine(s, now, pool.settings().staleAfterNanos()));
	}

	private static @Nullable Long ttftEstimateMs(InstanceState s) {
		long estimate = s.coldTtftEstimateNanos();
		return estimate < 0 ? null : DualMapDescriptor.millis(estimate);
	}

	private static DualMapDescriptor.@Nullable Engine engine(InstanceState s, long now, long staleAfterNanos) {
		EngineSnapshot e = s.engine();
		if (e == null) {
			return null;
		}
		boolean stale = s.freshEngine(now, staleAfterNanos) == null;
		long estimated = s.freshEngineBacklogTokens(now, staleAfterNanos);
		Long backlog = estimated < 0 ? null : estimated;
		return new DualMapDescriptor.Engine(e.waiting() < 0 ? null : e.waiting(), e.running() < 0 ? null : e.running(),
				finite(e.kvUsage()), finite(e.prefixHitRate()), e.kvCapacityTokens() <= 0 ? null : e.kvCapacityTokens(),
				backlog, e.countsRequests() ? s.foreignRequestsAtScrape() : null,
				// A scrape that lands while the view is built is newer than its clock
				// reading.
				DualMapDescriptor.millis(Math.max(0, e.ageNanos(now))), stale, s.engineFailed());
	}

	private static @Nullable Double finite(double v) {
		// JSON has no NaN: an unknown ratio is null.
		return Double.isFinite(v) ? v : null;
	}

	/**
	 * Share of sampled keys for which each instance is the first and the second
	 * candidate. Keys are consecutive longs: the rings hash them before placing them, so
	 * they spread like real routing keys.
	 */
	private static Map<String, double[]> candidateShares(DualHashRing rings) {
		Map<String, double[]> shares = new HashMap<>();
		if (rings.isEmpty()) {
			return shares;
		}
		double unit = 1.0 / SHARE_SAMPLE_KEYS;
		for (long key = 0; key < SHARE_SAMPLE_KEYS; key++) {
			Candidates c = rings.candidates(key);
			shares.computeIfAbsent(c.first(), id -> new double[2])[0] += unit;
			shares.computeIfAbsent(c.second(), id -> new double[2])[1] += unit;
		}
		return shares;
	}

	private static void poolWarnings(String service, List<DualMapDescriptor.Instance> instances, int accepting,
			List<String> warnings) {
		int size = instances.size();
		if (size == 0) {
			warnings.add("service '" + service
					+ "' has no known instances: discovery reports none, so its requests are answered 503");
			return;
		}
		if (size < MIN_USEFUL_INSTANCES) {
			warnings.add("service '" + service + "' has " + size + " instance" + (size == 1 ? "" : "s")
					+ "; dual mapping buys little below " + MIN_USEFUL_INSTANCES
					+ " (every key's two candidates are the same instances)");
		}
		if (accepting == 0) {
			// How many are out for each reason, in a fixed order.
			Map<String, Integer> out = new LinkedHashMap<>();
			for (OutReason r : OutReason.values()) {
				out.put(r.summary, 0);
			}
			for (DualMapDescriptor.Instance i : instances) {
				OutReason r = OutReason.of(i);
				if (r != null) {
					out.merge(r.summary, 1, Integer::sum);
				}
			}
			List<String> counts = new ArrayList<>();
			out.forEach((reason, n) -> {
				if (n > 0) {
					counts.add(n + " " + reason);
				}
			});
			// (Read apart from the count of accepting instances: one may have changed
			// since.)
			warnings.add("service '" + service + "' has no instance accepting new requests"
					+ (counts.isEmpty() ? "" : " (" + String.join(", ", counts) + ")"));
		}
	}

	/**
	 * Why an instance gets no new requests; the first that applies when several do.
	 * Unhealthy means an open breaker, a half-open one with every probe out, or no answer
	 * for {@code dualmap.scrape.unresponsive-after}: the warnings must not blame one for
	 * another.
	 */
	private enum OutReason {

		UNRESPONSIVE("unresponsive"), BREAKER_OPEN("circuit breaker open"),
		PROBING("circuit breaker half open with every probe out"), OTHER("circuit breaker refusing"),
		DRAINING("draining");

		private final String summary;

		OutReason(String summary) {
			this.summary = summary;
		}

		static @Nullable OutReason of(DualMapDescriptor.Instance i) {
			if (!i.healthy()) {
				if (!i.responsive()) {
					return UNRESPONSIVE;
				}
				if (isOpen(i.breaker())) {
					return BREAKER_OPEN;
				}
				return CircuitBreaker.State.HALF_OPEN.name().equals(i.breaker()) ? PROBING : OTHER;
			}
			return i.draining() ? DRAINING : null;
		}

	}

	private static boolean isOpen(String breaker) {
		return CircuitBreaker.State.OPEN.name().equals(breaker)
				|| CircuitBreaker.State.FORCED_OPEN.name().equals(breaker);
	}

	private static void instanceWarnings(String service, DualMapDescriptor.Instance i, List<String> warnings) {
		String name = "instance '" + i.id() + "' of service '" + service + "'";
		if (!i.healthy()) {
			// A drained instance is out by the operator's choice: no warning of its own.
			List<String> why = new ArrayList<>();
			if (!i.responsive()) {
				why.add("it has not answered for dualmap.scrape.unresponsive-after (no scrape answered, no response"
						+ " byte), until it answers");
			}
			if (isOpen(i.breaker())) {
				why.add("its circuit breaker is open (too many failed or refused requests), until a probe after"
						+ " dualmap.breaker.wait-duration-in-open-state succeeds");
			}
			else if (CircuitBreaker.State.HALF_OPEN.name().equals(i.breaker()) && i.responsive()) {
				why.add("its circuit breaker is half open and every probe permit is out, until the probes' answers"
						+ " close or open it");
			}
			if (why.isEmpty()) {
				why.add("its circuit breaker is " + i.breaker());
			}
			warnings.add(name + " gets no new requests: " + String.join("; ", why));
		}
		DualMapDescriptor.Engine e = i.engine();
		if (e != null && e.lastScrapeFailed()) {
			warnings.add(name + ": scraping its metrics fails (" + i.scrapeFailures()
					+ " failures so far); its engine state is unknown");
		}
		else if (e != null && e.stale()) {
			warnings.add(name + ": its engine state is " + e.ageMs() + " ms old and ignored as stale");
		}
		else if (e == null && i.scrapeFailures() > 0) {
			warnings
				.add(name + ": scraping its metrics has failed " + i.scrapeFailures() + " times and never succeeded");
		}
	}

}

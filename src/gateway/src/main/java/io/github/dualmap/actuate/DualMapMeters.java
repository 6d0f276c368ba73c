package io.github.dualmap.actuate;

import java.time.Duration;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.DispatchQueues;
import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.PrefixDirectory;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.gateway.DualMapListener;
import io.github.dualmap.gateway.DualMapLoadBalancer;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.RetryCause;
import io.github.dualmap.gateway.ServicePool;
import io.github.dualmap.gateway.SloResolver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.config.MeterFilter;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.cloud.client.ServiceInstance;

/**
 * The {@code dualmap.*} Micrometer meters: decisions by reason, TTFT and SLO attainment
 * of streamed requests, load spread, pending tokens, queue depth, migrations, re-routes,
 * releases and rejections, engine-reported prefix cache hits, scrape errors and ring
 * rebuilds; enough to compare {@code dualmap.policy} values side by side. Tags are pool
 * (service) ids, instance ids, reasons, the policy name and SLO outcomes only: never
 * anything derived from a prompt. The pool's tag is {@code pool} and an instance's
 * {@code instance.id}, so neither collides with a target label Prometheus sets on every
 * series it scrapes ({@code instance}, and {@code service} under the Prometheus
 * Operator): a collision would rename ours to {@code exported_*} and put the gateway's
 * own address where an alert names the engine. Per-instance meters are removed when their
 * instance leaves the pool.
 */
public class DualMapMeters implements MeterBinder, DisposableBean {

	/** Names of every meter tagged with an instance, removed when it leaves. */
	static final Set<String> INSTANCE_METERS = Set.of("dualmap.decisions", "dualmap.ttft", "dualmap.queue.wait",
			"dualmap.pending.tokens", "dualmap.inflight", "dualmap.queue.depth", "dualmap.engine.prefix.hit.rate",
			"dualmap.engine.backlog.tokens", "dualmap.engine.foreign.requests", "dualmap.engine.prefix.queries",
			"dualmap.engine.prefix.hits", "dualmap.estimated.hit.rate", "dualmap.scrape.errors",
			"dualmap.instance.healthy", "dualmap.instance.draining", "dualmap.instance.ttft.estimate");

	private final DualMapRegistry registry;

	private final List<Recorder> recorders = new CopyOnWriteArrayList<>();

	private final Set<String> sloClasses;

	/** Bucket bounds of the latency histograms, sorted. */
	private final Duration[] latencyBuckets;

	/**
	 * Bucket bounds of the latency histograms ({@code dualmap.ttft},
	 * {@code dualmap.queue.wait}) by default: 50 ms, 100 ms, 250 ms, 500 ms, 1 s, 2 s, 5
	 * s, 10 s, 30 s, 60 s.
	 */
	public static final List<Duration> DEFAULT_LATENCY_BUCKETS = List.of(Duration.ofMillis(50), Duration.ofMillis(100),
			Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2),
			Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(60));

	/**
	 * Meters with SLO outcome series of the classes every gateway has,
	 * {@value SloResolver#DEFAULT_CLASS} and {@value SloResolver#HEADER_CLASS}.
	 * @param registry the pools to measure
	 */
	public DualMapMeters(DualMapRegistry registry) {
		this(registry, List.of());
	}

	/**
	 * Meters with SLO outcome series of {@value SloResolver#DEFAULT_CLASS},
	 * {@value SloResolver#HEADER_CLASS} and every configured class, registered per
	 * service before the first request.
	 * @param registry the pools to measure
	 * @param sloClasses the configured SLO class names ({@code dualmap.slo.classes})
	 */
	public DualMapMeters(DualMapRegistry registry, Collection<String> sloClasses) {
		this(registry, sloClasses, DEFAULT_LATENCY_BUCKETS);
	}

	/**
	 * @param registry the pools to measure
	 * @param sloClasses the configured SLO class names ({@code dualmap.slo.classes})
	 * @param latencyBuckets the upper bounds of the latency histograms' buckets (the SLO
	 * objectives among them); duplicates count once
	 */
	public DualMapMeters(DualMapRegistry registry, Collection<String> sloClasses, Collection<Duration> latencyBuckets) {
		this.registry = registry;
		this.latencyBuckets = latencyBuckets.stream().distinct().sorted().toArray(Duration[]::new);
		if (this.latencyBuckets.length == 0 || this.latencyBuckets[0].toNanos() <= 0) {
			throw new IllegalArgumentException(
					"latency buckets must be > 0 and at least one but were " + latencyBuckets);
		}
		Set<String> classes = new LinkedHashSet<>();
		classes.add(SloResolver.DEFAULT_CLASS);
		classes.add(SloResolver.HEADER_CLASS);
		classes.addAll(sloClasses);
		this.sloClasses = Collections.unmodifiableSet(classes);
	}

	/**
	 * Gives the timer and long task timer of the {@code dualmap.dispatch} observation
	 * (made by Micrometer's observation handler, without a description) theirs.
	 */
	public static MeterFilter dispatchDescriptions() {
		return new MeterFilter() {
			@Override
			public Meter.Id map(Meter.Id id) {
				if (id.getDescription() != null || !id.getName().startsWith(DualMapLoadBalancer.OBSERVATION)) {
					return id;
				}
				String description = switch (id.getName()) {
					case DualMapLoadBalancer.OBSERVATION -> "Dispatch of a request, from the load balancer's choice to "
							+ "its release to an instance (the queue wait included) or its rejection";
					case DualMapLoadBalancer.OBSERVATION + ".active" ->
						"Requests being dispatched now: waiting " + "in the dispatch queues for their release";
					default -> null;
				};
				return description == null ? id : new Meter.Id(id.getName(), Tags.of(id.getTagsAsIterable()),
						id.getBaseUnit(), description, id.getType());
			}
		};
	}

	@Override
	public void bindTo(MeterRegistry meters) {
		Recorder recorder = new Recorder(meters);
		this.recorders.add(recorder);
		// Listen first: membership is loaded from discovery at startup, and a change
		// between binding and listening would otherwise leave meters of the old set.
		// Reconciling twice is harmless.
		this.registry.addListener(recorder);
		for (ServicePool service : this.registry.services().values()) {
			recorder.bindService(service);
		}
	}

	@Override
	public void destroy() {
		for (Recorder r : this.recorders) {
			this.registry.removeListener(r);
		}
		this.recorders.clear();
	}

	/**
	 * Records into one {@link MeterRegistry}; one per registry the binder is bound to.
	 */
	private final class Recorder implements DualMapListener {

		private final MeterRegistry meters;

		// Instance ids with registered meters, per service; guarded by this.
		private final Map<String, Set<String>> bound = new HashMap<>();

		// The meters recorded on every request, looked up once: registering through a
		// builder costs a tag sort and an id per call. Entries of an instance that leaves
		// go with its meters.
		private final Map<MeterKey, Counter> decisions = new ConcurrentHashMap<>();

		private final Map<MeterKey, Timer> ttfts = new ConcurrentHashMap<>();

		private final Map<MeterKey, Timer> waits = new ConcurrentHashMap<>();

		private final Map<MeterKey, Counter> slos = new ConcurrentHashMap<>();

		Recorder(MeterRegistry meters) {
			this.meters = meters;
		}

		void bindService(ServicePool service) {
			String id = service.serviceId();
			InstancePool pool = service.instancePool();
			Tags tags = Tags.of("pool", id);
			Gauge.builder("dualmap.load.cv", pool, InstancePool::loadCv)
				.tags(tags)
				.description("Coefficient of variation of in-flight plus queued requests across instances")
				.strongReference(true)
				.register(this.meters);
			Gauge.builder("dualmap.instances", pool, InstancePool::size)
				.tags(tags)
				.description("Instances on the rings")
				.strongReference(true)
				.register(this.meters);
			Gauge.builder("dualmap.directory.blocks", pool, p -> {
				PrefixDirectory d = p.directoryIfKept();
				return d == null ? 0 : d.size();
			})
				.tags(tags)
				.description("Block hashes the pool's prefix directory knows an instance for (0 without one)")
				.strongReference(true)
				.register(this.meters);
			FunctionCounter.builder("dualmap.ring.rebuilds", pool, InstancePool::ringRebuilds)
				.tags(tags)
				.description("Rebuilds of the dual hash rings after membership or weight changes")
				.register(this.meters);
			DispatchQueues queues = service.queues();
			FunctionCounter.builder("dualmap.migrations", queues, DispatchQueues::migrations)
				.tags(tags)
				.description(
						"Queued requests moved to another instance: off a hotspot, or pulled by an idle other candidate")
				.register(this.meters);
			FunctionCounter.builder("dualmap.reroutes", queues, DispatchQueues::rerouted)
				.tags(tags)
				.description("Queued requests moved because their instance left, was drained or became unhealthy")
				.register(this.meters);
			FunctionCounter.builder("dualmap.queue.rescues", queues, DispatchQueues::rescues)
				.tags(tags)
				.description("Requests placed at their wait bound on another instance that could still make their "
						+ "SLO, instead of being rejected (sent at once or queued there)")
				.register(this.meters);
			FunctionCounter.builder("dualmap.queue.rescues.queued", queues, DispatchQueues::rescuesQueued)
				.tags(tags)
				.description("Rescued requests that joined another instance's queue because none could start them "
						+ "at once")
				.register(this.meters);
			FunctionCounter.builder("dualmap.queue.hopeless", queues, DispatchQueues::hopelessShed)
				.tags(tags)
				.description("Requests answered 503 when about to be released, because their wait plus their TTFT "
						+ "estimate there exceeded their SLO while others waited (dualmap.dispatch.shed-hopeless)")
				.register(this.meters);
			FunctionCounter.builder("dualmap.queue.hopeless.others", queues, DispatchQueues::hopelessShedForOthers)
				.tags(tags)
				.description("Of dualmap.queue.hopeless, the requests shed while nothing else waited in this gateway's "
						+ "queues, for other senders' requests on the instance: peers' published queues, or another "
						+ "sender the engine showed (dualmap.dispatch.shed-where-others-send, "
						+ "shed-behind-foreign-prefill)")
				.register(this.meters);
			FunctionCounter.builder("dualmap.queue.shed", queues, DispatchQueues::shed)
				.tags(tags)
				.description("Queued requests answered 429 to make room for an arrival with a tighter TTFT SLO")
				.register(this.meters);
			FunctionCounter.builder("dualmap.queue.releases", queues, DispatchQueues::releases)
				.tags(tags)
				.description("Requests released from the dispatch queues to an instance")
				.register(this.meters);
			for (RetryCause cause : RetryCause.values()) {
				FunctionCounter.builder("dualmap.retries", service, p -> p.retries(cause))
					.tags(tags.and("cause", cause.tag()))
					.description("Requests sent once more to another instance: after a connect failure, "
							+ "a response status of dualmap.retry.statuses, or their instance stopped answering")
					.register(this.meters);
			}
			for (int status : PoolInspection.REJECTION_STATUSES) {
				FunctionCounter.builder("dualmap.rejections", service, p -> p.rejections(status))
					.tags(tags.and("status", Integer.toString(status)))
					.description("Requests answered 429 or 503 instead of being sent to an instance")
					.register(this.meters);
			}
			// Both outcomes of every class from the start, so attainment ratios exist
			// before the first miss, and a class none of whose requests met its SLO shows
			// 0 rather than no data.
			for (String sloClass : DualMapMeters.this.sloClasses) {
				sloCounter(id, sloClass, "within");
				sloCounter(id, sloClass, "over");
			}
			reconcile(service);
		}

		@Override
		public void onDecision(String service, RoutingRequest request, Decision decision) {
			ServicePool pool = poolIfMember(service, decision.instanceId());
			if (pool != null) {
				this.decisions
					.computeIfAbsent(new MeterKey(service, decision.instanceId(), decision.reason().value()),
							k -> Counter.builder("dualmap.decisions")
								.tags("pool", service, "instance.id", k.instance(), "reason", k.detail(), "policy",
										pool.policyName())
								.description("Requests dispatched, by the reason of the choice")
								.register(this.meters))
					.increment();
				this.waits.computeIfAbsent(new MeterKey(service, decision.instanceId(), ""), k -> latency(
						"dualmap.queue.wait", k,
						"Time from reading a request to sending it to its instance: the wait in the dispatch queue"))
					.record(Math.max(0, pool.instancePool().now() - request.arrivalNanos()), TimeUnit.NANOSECONDS);
			}
		}

		@Override
		public void onFirstToken(String service, String instanceId, long ttftNanos, long sloTtftNanos,
				String sloClass) {
			if (poolIfMember(service, instanceId) != null) {
				this.ttfts
					.computeIfAbsent(new MeterKey(service, instanceId, ""), k -> latency("dualmap.ttft", k,
							"Time to first token (first response body byte) since the gateway read the request"))
					.record(ttftNanos, TimeUnit.NANOSECONDS);
			}
			sloCounter(service, sloClass, ttftNanos <= sloTtftNanos ? "within" : "over").increment();
		}

		/**
		 * A per-instance latency histogram with the configured buckets only (no
		 * percentile histogram: its 70-odd buckets per instance would multiply the
		 * series).
		 */
		private Timer latency(String name, MeterKey key, String description) {
			return Timer.builder(name)
				.tags("pool", key.service(), "instance.id", key.instance())
				.description(description)
				.serviceLevelObjectives(DualMapMeters.this.latencyBuckets)
				.register(this.meters);
		}

		@Override
		public void onMembershipChanged(String service, List<ServiceInstance> instances) {
			ServicePool pool = DualMapMeters.this.registry.service(service);
			if (pool != null) {
				reconcile(pool);
			}
		}

		/** The pool of {@code service} while {@code instanceId} is in it, else null. */
		private @Nullable ServicePool poolIfMember(String service, String instanceId) {
			ServicePool pool = DualMapMeters.this.registry.service(service);
			// A late event for an instance that already left would re-create its meters.
			return pool != null && pool.instancePool().instance(instanceId) != null ? pool : null;
		}

		private Counter sloCounter(String service, String sloClass, String outcome) {
			// MeterKey's instance slot holds the class here.
			return this.slos.computeIfAbsent(new MeterKey(service, sloClass, outcome),
					k -> Counter.builder("dualmap.slo")
						.tags("pool", service, "class", sloClass, "outcome", outcome)
						.description("Requests whose first token came within or over their TTFT SLO, by SLO class")
						.register(this.meters));
		}

		/**
		 * Registers meters of instances that joined and removes every meter of instances
		 * that left. Reads the pool's current membership rather than the event's, so
		 * events delivered out of order still end in the right state.
		 */
		private synchronized void reconcile(ServicePool service) {
			String id = service.serviceId();
			Set<String> current = new HashSet<>();
			for (InstanceState s : service.instancePool().instances()) {
				current.add(s.id());
			}
			Set<String> known = this.bound.computeIfAbsent(id, k -> new HashSet<>());
			for (String gone : Set.copyOf(known)) {
				if (!current.contains(gone)) {
					removeInstance(id, gone);
					known.remove(gone);
				}
			}
			for (String joined : current) {
				if (known.add(joined)) {
					bindInstance(service, joined);
				}
			}
		}

		private void bindInstance(ServicePool service, String instanceId) {
			Tags tags = Tags.of("pool", service.serviceId(), "instance.id", instanceId);
			InstancePool pool = service.instancePool();
			gauge("dualmap.pending.tokens", tags, service, instanceId, "Pending uncached tokens as policies see them",
					s -> pool.pendingTokens(s));
			gauge("dualmap.inflight", tags, service, instanceId, "Requests sent and not finished", s -> s.inFlight());
			gauge("dualmap.instance.healthy", tags, service, instanceId,
					"1 while the instance may get requests (its circuit breaker lets them through and it answers), else 0",
					s -> s.healthy() ? 1 : 0);
			gauge("dualmap.instance.draining", tags, service, instanceId, "1 while the instance is drained, else 0",
					s -> s.draining() ? 1 : 0);
			gauge("dualmap.queue.depth", tags, service, instanceId,
					"Requests waiting in the gateway's dispatch queue for the instance",
					s -> service.queues().queued(instanceId));
			gauge("dualmap.estimated.hit.rate", tags, service, instanceId,
					"Share of routed prompt tokens the router's shadow index expected cached",
					InstanceState::estimatedHitRate);
			gauge("dualmap.instance.ttft.estimate", "seconds", tags, service, instanceId,
					"TTFT the instance's own fitted model expects of a cold " + InstanceState.REFERENCE_PROMPT_TOKENS
							+ "-token prompt with nothing ahead of it: an engine that slows down shows here as its "
							+ "first tokens teach it (NaN with dualmap.ttft.model: linear, and while the fit's standard error for "
							+ "that prompt is above " + Math.round(100 * InstanceState.REFERENCE_MAX_RELATIVE_ERROR)
							+ " % of the estimate)",
					s -> {
						long estimate = s.coldTtftEstimateNanos();
						return estimate < 0 ? Double.NaN : estimate / 1e9;
					});
			gauge("dualmap.engine.prefix.hit.rate", tags, service, instanceId,
					"Engine-reported prefix cache hit rate over the engine's lifetime (NaN when unknown or stale)",
					s -> {
						EngineSnapshot e = s.freshEngine(pool.now(), pool.settings().staleAfterNanos());
						return e == null ? Double.NaN : e.prefixHitRate();
					});
			gauge("dualmap.engine.backlog.tokens", tags, service, instanceId,
					"Uncached prompt tokens the engine has admitted into prefill and not yet computed, every router's "
							+ "requests, estimated from its prefix-cache counters (NaN when not estimated or stale)",
					s -> {
						long backlog = s.freshEngineBacklogTokens(pool.now(), pool.settings().staleAfterNanos());
						return backlog < 0 ? Double.NaN : backlog;
					});
			gauge("dualmap.engine.foreign.requests", tags, service, instanceId,
					"Requests the engine held, running and waiting, at its last scrape beyond this gateway's in flight "
							+ "there: other gateway replicas' or clients that bypass the gateway (NaN when the engine "
							+ "reports no counts or the scrape is stale or failed)",
					s -> {
						EngineSnapshot e = s.freshEngine(pool.now(), pool.settings().staleAfterNanos());
						return e == null || !e.countsRequests() ? Double.NaN : s.foreignRequestsAtScrape();
					});
			// The engine's own monotonic counters, so hit rates over any window are
			// rate(hits) / rate(queries); the last good scrape holds while scraping
			// fails.
			FunctionCounter.builder("dualmap.engine.prefix.queries", service, p -> engineCounter(p, instanceId, true))
				.tags(tags)
				.baseUnit("tokens")
				.description("Engine-reported prefix cache queries")
				.register(this.meters);
			FunctionCounter.builder("dualmap.engine.prefix.hits", service, p -> engineCounter(p, instanceId, false))
				.tags(tags)
				.baseUnit("tokens")
				.description("Engine-reported prefix cache hits")
				.register(this.meters);
			FunctionCounter.builder("dualmap.scrape.errors", service, p -> p.scrapeFailures(instanceId))
				.tags(tags)
				.description("Failed or unparsable scrapes of the instance's metrics endpoint")
				.register(this.meters);
		}

		private void gauge(String name, Tags tags, ServicePool service, String instanceId, String description,
				ToDoubleFunction<InstanceState> value) {
			gauge(name, null, tags, service, instanceId, description, value);
		}

		/**
		 * A gauge of the instance in {@code baseUnit} ({@code null}: none); NaN once it
		 * left.
		 */
		private void gauge(String name, @Nullable String baseUnit, Tags tags, ServicePool service, String instanceId,
				String description, ToDoubleFunction<InstanceState> value) {
			Gauge.builder(name, service, p -> {
				InstanceState s = p.instancePool().instance(instanceId);
				return s == null ? Double.NaN : value.applyAsDouble(s);
			}).tags(tags).baseUnit(baseUnit).description(description).strongReference(true).register(this.meters);
		}

		private static double engineCounter(ServicePool service, String instanceId, boolean queries) {
			InstanceState s = service.instancePool().instance(instanceId);
			@Nullable EngineSnapshot e = s == null ? null : s.engine();
			double v = e == null ? 0 : queries ? e.prefixQueriesTokens() : e.prefixHitsTokens();
			return Double.isFinite(v) ? v : 0;
		}

		private void removeInstance(String service, String instanceId) {
			MeterKey.removeInstance(this.decisions, service, instanceId);
			MeterKey.removeInstance(this.ttfts, service, instanceId);
			MeterKey.removeInstance(this.waits, service, instanceId);
			for (Meter m : this.meters.getMeters()) {
				Meter.Id mid = m.getId();
				if (INSTANCE_METERS.contains(mid.getName()) && service.equals(mid.getTag("pool"))
						&& instanceId.equals(mid.getTag("instance.id"))) {
					this.meters.remove(m);
				}
			}
		}

	}

	/**
	 * A cached meter: its service, instance ({@code ""} for per-service meters) and one
	 * more tag value (a reason, an outcome, or {@code ""}).
	 */
	private record MeterKey(String service, String instance, String detail) {

		static void removeInstance(Map<MeterKey, ?> cache, String service, String instance) {
			cache.keySet().removeIf(k -> k.service.equals(service) && k.instance.equals(instance));
		}

	}

}

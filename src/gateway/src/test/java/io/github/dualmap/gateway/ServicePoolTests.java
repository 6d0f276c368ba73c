package io.github.dualmap.gateway;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import com.sun.net.httpserver.HttpServer;
import io.github.dualmap.core.Candidates;
import io.github.dualmap.core.DispatchMode;
import io.github.dualmap.core.DualHashRing;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.NanoClock;
import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.Reason;
import io.github.dualmap.core.Rejection;
import io.github.dualmap.core.RingMember;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.stats.MetricsScraper;
import io.github.dualmap.stats.ScrapeSettings;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.http.HttpStatus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A service pool's dispatch queues driven as the load balancer drives them, without
 * Spring: release on prefill capacity, cancel while queued, queue bounds, draining,
 * idleness and slow start, on a clock the test moves.
 */
@ExtendWith(OutputCaptureExtension.class)
class ServicePoolTests {

	private static final Duration WAIT = Duration.ofSeconds(5);

	private final AtomicLong now = new AtomicLong(1_000_000_000L);

	private final NanoClock clock = this.now::get;

	private final PrefixHasher hasher = PrefixHasher.ofDefaults();

	private int ids;

	private ServicePool pool(SchedulerSettings settings, QueueSettings queues, String... instances) {
		ServicePool service = DualMapRegistry.builder()
			.settings(settings)
			.queueSettings(queues)
			.services("llm")
			.clock(this.clock)
			.build()
			.service("llm");
		members(service, instances);
		return service;
	}

	private static void members(ServicePool service, String... ids) {
		List<ServiceInstance> list = new ArrayList<>();
		for (int i = 0; i < ids.length; i++) {
			list.add(new DefaultServiceInstance(ids[i], "llm", "10.0.0." + (i + 1), 8000, false, Map.of()));
		}
		service.updateMembership(list);
	}

	private RoutingRequest request(String prompt) {
		return new RoutingRequest("r" + this.ids++,
				this.hasher.ofText("m", ("System prompt of " + prompt + ". ").repeat(40) + " question"),
				Duration.ofSeconds(5).toNanos(), this.now.get());
	}

	private static RoutedAttempt now(ServicePool service, RoutingRequest request) {
		return service.submit(request, true).block(WAIT);
	}

	private static QueueSettings oneInPrefill() {
		return QueueSettings.custom().maxPrefillRequests(1).build();
	}

	@Test
	void aQueuedRequestIsReleasedByTheFirstTokenAndACancelLeavesTheQueue() {
		ServicePool service = pool(SchedulerSettings.ofDefaults(), oneInPrefill(), "a");
		RoutedAttempt first = now(service, request("x"));
		AtomicReference<RoutedAttempt> second = new AtomicReference<>();
		service.submit(request("x"), true).subscribe(second::set);
		assertThat(second.get()).isNull();
		assertThat(service.queues().queued("a")).isEqualTo(1);
		first.firstByte(true);
		assertThat(second.get()).isNotNull();
		assertThat(service.queues().queued()).isZero();
		Disposable third = service.submit(request("x"), true).subscribe();
		assertThat(service.queues().queued("a")).isEqualTo(1);
		third.dispose();
		assertThat(service.queues().queued()).isZero();
		assertThat(service.instancePool().instance("a").queuedTokens()).isZero();
		assertThat(service.isIdle("a")).isFalse();
		second.get().firstByte(true);
		second.get().complete(HttpStatus.OK);
		first.complete(HttpStatus.OK);
		assertThat(service.queues().releases()).isEqualTo(2);
		assertThat(service.isIdle("a")).isTrue();
		assertThat(service.instancePool().instance("a").inFlight()).isZero();
	}

	@Test
	void withTheDirectoryANextTurnFollowsARetryOffItsRingPair() {
		ServicePool service = DualMapRegistry.builder()
			.policy("dualmap-directory")
			.services("llm")
			.clock(this.clock)
			.build()
			.service("llm");
		members(service, "a", "b", "c", "d", "e", "f");
		String history = ("System prompt of a long conversation. ").repeat(40);
		RoutingRequest turn1 = new RoutingRequest("t1", this.hasher.ofText("m", history + " first question"),
				WAIT.toNanos(), this.now.get());
		Candidates pair = service.instancePool().rings().candidates(service.instancePool().routingKey(turn1.blocks()));
		// Its try on the pair failed to connect: the retry goes elsewhere.
		RoutedAttempt retried = service.submit(turn1.placed(Set.of(pair.first(), pair.second()), null, true), true)
			.block(WAIT);
		assertThat(retried.instanceId()).isNotIn(pair.first(), pair.second());
		retried.firstByte(true);
		retried.complete(HttpStatus.OK);
		// The next turn's pair is the same; the directory knows where its history went.
		RoutingRequest turn2 = new RoutingRequest("t2",
				this.hasher.ofText("m", history + " first question and its answer, then a second question"),
				WAIT.toNanos(), this.now.get());
		RoutedAttempt next = now(service, turn2);
		assertThat(next.instanceId()).isEqualTo(retried.instanceId());
		assertThat(next.decision().reason()).isEqualTo(Reason.DIRECTORY);
		assertThat(next.decision().cachedTokens()).isPositive();
	}

	@Test
	void aRetryThatAvoidsAnIdleInstanceWaitsForTheOtherInsteadOfBouncingInto503() {
		ServicePool service = pool(
				SchedulerSettings.custom().prefillNanosPerToken(10_000_000).calibrationAlpha(0).build(), oneInPrefill(),
				"a", "b");
		// b busy with one request in prefill; a idle, but the retry failed to connect to
		// a.
		RoutedAttempt busy = service.submit(request("busy").placed(Set.of("a"), null, true), true).block(WAIT);
		assertThat(busy.instanceId()).isEqualTo("b");
		AtomicReference<RoutedAttempt> retried = new AtomicReference<>();
		AtomicReference<Throwable> failed = new AtomicReference<>();
		service.submit(request("retry").placed(Set.of("a"), null, true), true).subscribe(retried::set, failed::set);

		assertThat(failed.get()).isNull();
		assertThat(retried.get()).isNull();
		assertThat(service.queues().queued("b")).isEqualTo(1);
		assertThat(service.queues().pulls()).isZero();

		busy.firstByte(true);
		assertThat(failed.get()).isNull();
		assertThat(retried.get().instanceId()).isEqualTo("b");
		retried.get().firstByte(true);
		retried.get().complete(HttpStatus.OK);
		busy.complete(HttpStatus.OK);
		assertThat(service.instancePool().instance("b").inFlight()).isZero();
	}

	@Test
	void aRequestPlacedAgainAfterABreakerRefusedItKeepsTheWaitItHadAlreadySpent() {
		// One probe at a time in half-open: the second release to a is refused.
		CircuitBreakerConfig oneProbe = CircuitBreakerConfig.custom().permittedNumberOfCallsInHalfOpenState(1).build();
		ServicePool service = DualMapRegistry.builder()
			.queueSettings(QueueSettings.custom()
				.maxPrefillRequests(1)
				.idlePull(false)
				.maxWait(Duration.ofSeconds(30))
				.build())
			.services("llm")
			.breakers(oneProbe)
			.clock(this.clock)
			.build()
			.service("llm");
		members(service, "a", "b");
		RoutedAttempt onB = service.submit(request("busy b").placed(Set.of("a"), null, true), true).block(WAIT);
		assertThat(onB.instanceId()).isEqualTo("b");
		service.breakers().breaker("a").transitionToOpenState();
		service.breakers().breaker("a").transitionToHalfOpenState();
		RoutedAttempt probe = service.submit(request("shared").placed(Set.of("b"), null, true), true).block(WAIT);
		assertThat(probe.instanceId()).isEqualTo("a");
		AtomicReference<RoutedAttempt> released = new AtomicReference<>();
		AtomicReference<Throwable> failed = new AtomicReference<>();
		// Same prompt as the probe: a holds its prefix.
		service.submit(request("shared"), true).subscribe(released::set, failed::set);
		assertThat(service.queues().queued("a")).isEqualTo(1);

		// 20 s later the probe's first byte releases the waiting request to a, whose
		// breaker refuses it (its one probe is out): it is placed again, behind busy b.
		this.now.addAndGet(Duration.ofSeconds(20).toNanos());
		probe.firstByte(true);
		assertThat(released.get()).isNull();
		assertThat(failed.get()).isNull();
		assertThat(service.queues().queued("b")).isEqualTo(1);

		// 11 s more: 31 s of waiting in all, past the 30 s bound (not 11 s of a new
		// wait).
		this.now.addAndGet(Duration.ofSeconds(11).toNanos());
		service.queues().tick(this.now.get());
		assertThat(released.get()).isNull();
		assertThat(failed.get()).isInstanceOf(DispatchRejectedException.class);
		assertThat(((DispatchRejectedException) failed.get()).rejection().status())
			.isEqualTo(Rejection.SERVICE_UNAVAILABLE);
		probe.complete(HttpStatus.OK);
		onB.firstByte(true);
		onB.complete(HttpStatus.OK);
	}

	@Test
	void aRequestTriedAgainAfterItsInstanceFailedKeepsTheQueueWaitItHadAlreadySpent() {
		ServicePool service = DualMapRegistry.builder()
			.queueSettings(QueueSettings.custom()
				.maxPrefillRequests(1)
				.idlePull(false)
				.maxWait(Duration.ofSeconds(30))
				.build())
			.services("llm")
			.clock(this.clock)
			.build()
			.service("llm");
		members(service, "a", "b");
		RoutedAttempt onA = service.submit(request("busy a").placed(Set.of("b"), null, true), true).block(WAIT);
		RoutedAttempt onB = service.submit(request("busy b").placed(Set.of("a"), null, true), true).block(WAIT);
		AtomicReference<RoutedAttempt> first = new AtomicReference<>();
		service.submit(request("waits").placed(Set.of("b"), null, true), true).subscribe(first::set);
		// 20 s in a's queue, then released to a, which refuses the connection.
		this.now.addAndGet(Duration.ofSeconds(20).toNanos());
		onA.firstByte(true);
		assertThat(first.get().instanceId()).isEqualTo("a");
		assertThat(first.get().queueWaitNanos()).isEqualTo(Duration.ofSeconds(20).toNanos());
		first.get().fail(new java.net.ConnectException("refused"));

		// The retry, kept off a, waits behind busy b: 11 s more is 31 s of queueing in
		// all, past the 30 s bound (not 11 s of a new wait).
		AtomicReference<RoutedAttempt> retried = new AtomicReference<>();
		AtomicReference<Throwable> failed = new AtomicReference<>();
		service.submit(request("waits").placed(Set.of("a"), null, true), true, first.get().queueWaitNanos())
			.subscribe(retried::set, failed::set);
		assertThat(service.queues().queued("b")).isEqualTo(1);
		this.now.addAndGet(Duration.ofSeconds(11).toNanos());
		service.queues().tick(this.now.get());
		assertThat(retried.get()).isNull();
		assertThat(failed.get()).isInstanceOf(DispatchRejectedException.class);
		onA.complete(HttpStatus.OK);
		onB.firstByte(true);
		onB.complete(HttpStatus.OK);
	}

	@Test
	void aFullQueueIsRejectedWith429AndRetryAfter() {
		ServicePool service = pool(SchedulerSettings.ofDefaults(),
				QueueSettings.custom().maxPrefillRequests(1).maxQueuedPerPool(1).build(), "a");
		RoutedAttempt first = now(service, request("x"));
		Disposable queued = service.submit(request("x"), true).subscribe();
		assertThatThrownBy(() -> now(service, request("x"))).isInstanceOfSatisfying(DispatchRejectedException.class,
				ex -> {
					assertThat(ex.rejection().status()).isEqualTo(429);
					assertThat(ex.code()).isEqualTo(DispatchRejectedException.QUEUE_FULL);
					assertThat(ex.rejection().retryAfterSeconds()).isBetween(1L, 30L);
					assertThat(new String(ex.toOpenAiError().toJson())).contains("\"type\":\"rate_limit_exceeded\"",
							"\"code\":\"queue_full\"");
				});
		queued.dispose();
		first.complete(HttpStatus.OK);
		assertThat(service.isIdle("a")).isTrue();
	}

	@Test
	void drainingMovesQueuedRequestsAwayAndReportsIdleOnceTheLastRequestEnds() {
		ServicePool service = pool(SchedulerSettings.ofDefaults(), oneInPrefill(), "a", "b");
		RoutedAttempt first = now(service, request("x"));
		String home = first.instanceId();
		String other = home.equals("a") ? "b" : "a";
		AtomicReference<RoutedAttempt> queued = new AtomicReference<>();
		service.submit(request("x"), true).subscribe(queued::set);
		assertThat(service.queues().queued(home)).isEqualTo(1);
		assertThat(service.drain(home)).isTrue();
		assertThat(service.isDraining(home)).isTrue();
		assertThat(queued.get()).isNotNull();
		assertThat(queued.get().instanceId()).isEqualTo(other);
		assertThat(queued.get().decision().reason()).isEqualTo(Reason.FALLBACK);
		assertThat(service.queues().rerouted()).isEqualTo(1);
		queued.get().firstByte(true);
		RoutedAttempt later = now(service, request("x"));
		assertThat(later.instanceId()).isEqualTo(other);
		assertThat(service.isIdle(home)).isFalse();
		first.complete(HttpStatus.OK);
		assertThat(service.isIdle(home)).isTrue();
		queued.get().complete(HttpStatus.OK);
		later.complete(HttpStatus.OK);
		assertThat(service.undrain(home)).isTrue();
		assertThat(service.instancePool().instance(home).acceptsNewWork()).isTrue();
		List<String> placed = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			RoutedAttempt a = now(service, request("tenant " + i));
			placed.add(a.instanceId());
			a.complete(HttpStatus.OK);
		}
		assertThat(placed).contains(home);
		assertThat(service.drain("no-such-instance")).isFalse();
	}

	@Test
	void aNewInstanceGetsARampingShareDuringSlowStart() {
		SchedulerSettings settings = SchedulerSettings.custom().slowStart(Duration.ofSeconds(60)).build();
		ServicePool service = pool(settings, QueueSettings.custom().mode(DispatchMode.PASS_THROUGH).build(), "a", "b");
		this.now.addAndGet(Duration.ofMinutes(5).toNanos());
		members(service, "a", "b", "c");
		double cold = shareOfC(service, "cold");
		this.now.addAndGet(Duration.ofSeconds(30).toNanos());
		double half = shareOfC(service, "half");
		this.now.addAndGet(Duration.ofSeconds(30).toNanos());
		double warm = shareOfC(service, "warm");
		assertThat(cold).isLessThan(half);
		assertThat(half).isLessThan(warm);
		assertThat(warm).isGreaterThan(0.2);
	}

	@Test
	void scrapeFailuresOfADepartedInstanceAreDroppedAndNotCountedAfterItLeft() {
		ServicePool service = pool(SchedulerSettings.ofDefaults(), QueueSettings.ofDefaults(), "a", "b");
		service.countScrapeFailure("a");
		service.countScrapeFailure("b");
		service.countScrapeFailure("b");
		members(service, "a");
		assertThat(service.scrapeFailures()).containsOnlyKeys("a");
		assertThat(service.scrapeFailures("b")).isZero();
		// A late failure of the departed instance does not bring its count back.
		service.countScrapeFailure("b");
		assertThat(service.scrapeFailures()).containsOnlyKeys("a");
		// Back in discovery, it starts from zero.
		members(service, "a", "b");
		assertThat(service.scrapeFailures("b")).isZero();
		assertThat(service.scrapeFailures("a")).isEqualTo(1);
	}

	@Test
	void rejectionsAreCountedByStatusAndOtherStatusesAreRefused() {
		ServicePool service = pool(SchedulerSettings.ofDefaults(),
				QueueSettings.custom().maxPrefillRequests(1).maxQueuedPerPool(1).build(), "a");
		RoutedAttempt first = now(service, request("x"));
		Disposable queued = service.submit(request("x"), true).subscribe();
		assertThatThrownBy(() -> now(service, request("x"))).isInstanceOf(DispatchRejectedException.class);
		assertThat(service.rejections(429)).isEqualTo(1);
		assertThat(service.rejections(503)).isZero();
		assertThatThrownBy(() -> service.rejections(500)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("500");
		queued.dispose();
		first.complete(HttpStatus.OK);
	}

	/**
	 * Share of 90 distinct prompts, held in flight together so load builds up, that go to
	 * instance c.
	 */
	private double shareOfC(ServicePool service, String phase) {
		List<RoutedAttempt> held = new ArrayList<>();
		for (int i = 0; i < 90; i++) {
			held.add(now(service, request(phase + " tenant " + i)));
		}
		long toC = held.stream().filter(a -> a.instanceId().equals("c")).count();
		held.forEach(a -> a.complete(HttpStatus.OK));
		return toC / 90.0;
	}

	@Test
	void membershipFollowsTheInstancesAndASupplierRepeatingItsListCostsNoRebuild() {
		ServicePool service = pool(SchedulerSettings.ofDefaults(), QueueSettings.ofDefaults());
		List<ServiceInstance> first = List.of(instance("a", "1"), instance("b", "1"));
		assertThat(service.updateMembership(first)).isTrue();
		long rebuilds = service.instancePool().ringRebuilds();
		// The same objects, in the list or in a new one: nothing to do.
		assertThat(service.updateMembership(first)).isFalse();
		assertThat(service.updateMembership(new ArrayList<>(first))).isFalse();
		// New but equal objects: compared, still the same membership.
		assertThat(service.updateMembership(List.of(instance("a", "1"), instance("b", "1")))).isFalse();
		assertThat(service.instancePool().ringRebuilds()).isEqualTo(rebuilds);
		// A changed weight is a change, and so is going back to the first objects.
		assertThat(service.updateMembership(List.of(instance("a", "2"), instance("b", "1")))).isTrue();
		assertThat(service.instancePool().instance("a").weight()).isEqualTo(2.0);
		assertThat(service.updateMembership(first)).isTrue();
		assertThat(service.instancePool().instance("a").weight()).isEqualTo(1.0);
		assertThat(service.updateMembership(List.of(instance("a", "1")))).isTrue();
		assertThat(service.instancePool().size()).isEqualTo(1);
	}

	@Test
	void equalInstancesInNewObjectsAreComparedFieldByFieldWithoutRebuildingTheMembership() {
		ServicePool service = pool(SchedulerSettings.ofDefaults(), QueueSettings.ofDefaults());
		AtomicInteger uris = new AtomicInteger();
		assertThat(service.updateMembership(List.of(counting("a", "1", uris), counting("b", "1", uris)))).isTrue();
		int afterFirst = uris.get();
		assertThat(afterFirst).isPositive();
		for (int i = 0; i < 5; i++) {
			assertThat(service.updateMembership(List.of(counting("a", "1", uris), counting("b", "1", uris)))).isFalse();
		}
		// The fast path never built a URI; a real change still goes the whole way.
		assertThat(uris.get()).isEqualTo(afterFirst);
		assertThat(service.updateMembership(List.of(counting("a", "1", uris), counting("b", "3", uris)))).isTrue();
		assertThat(service.instancePool().instance("b").weight()).isEqualTo(3.0);
		assertThat(uris.get()).isGreaterThan(afterFirst);
	}

	/**
	 * A weight above the maximum is taken as the maximum, with a warning naming the
	 * instance and the value: an unbounded one stalled or exhausted the ring build, and
	 * one past an int's range gave the instance a single virtual node.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "20000", "2e7", "1e300", "Infinity" })
	void aWeightAboveTheMaximumIsClampedWithAWarning(String weight, CapturedOutput output) {
		ServicePool service = pool(SchedulerSettings.ofDefaults(), QueueSettings.ofDefaults());
		assertThat(service.updateMembership(List.of(instance("a", weight), instance("b", "1")))).isTrue();
		assertThat(service.instancePool().instance("a").weight()).isEqualTo(RingMember.MAX_WEIGHT);
		assertThat(service.instancePool().rings().virtualNodesOf("a"))
			.isEqualTo(DualHashRing.DEFAULT_VIRTUAL_NODES * (int) RingMember.MAX_WEIGHT);
		assertThat(service.instancePool().rings().virtualNodesOf("b")).isEqualTo(DualHashRing.DEFAULT_VIRTUAL_NODES);
		assertThat(output).contains("Instance 'a' of service 'llm' has metadata dualmap.weight='" + weight
				+ "', above the maximum weight 100; using weight 100");
	}

	/**
	 * An edit of an instance's metadata alone (a pod annotation naming another metrics
	 * path) is a membership change: scraping follows it at the next list, and the
	 * instance keeps its state, without waiting for any other change in the membership.
	 */
	@Test
	void aChangedMetricsPathAloneIsFollowedAndTheInstanceKeepsItsState() throws Exception {
		List<String> scraped = new CopyOnWriteArrayList<>();
		HttpServer engine = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		engine.createContext("/", exchange -> {
			scraped.add(exchange.getRequestURI().getPath());
			exchange.sendResponseHeaders(404, -1);
			exchange.close();
		});
		engine.start();
		DualMapRegistry registry = DualMapRegistry.builder().services("llm").clock(this.clock).build();
		ServicePool service = registry.service("llm");
		EngineScraping scraping = new EngineScraping(registry,
				listener -> new MetricsScraper(
						new ScrapeSettings(Duration.ofMillis(20), Duration.ofSeconds(1), 0, 4096), NanoClock.SYSTEM,
						listener),
				id -> "/metrics", "dualmap.metrics-path");
		int port = engine.getAddress().getPort();
		try {
			assertThat(service.updateMembership(List
				.of(new DefaultServiceInstance("a", "llm", "127.0.0.1", port, false, Map.of("dualmap.weight", "2")))))
				.isTrue();
			scraping.start();
			awaitScraped(scraped, "/metrics");
			RoutedAttempt held = now(service, request("x"));
			InstanceState before = service.instancePool().instance("a");
			CircuitBreaker breaker = service.breakers().breaker("a");
			assertThat(before.inFlight()).isOne();
			assertThat(service.updateMembership(List.of(new DefaultServiceInstance("a", "llm", "127.0.0.1", port, false,
					Map.of("dualmap.weight", "2", "dualmap.metrics-path", "/engine/metrics")))))
				.isTrue();
			awaitScraped(scraped, "/engine/metrics");
			assertThat(service.instancePool().instance("a")).isSameAs(before);
			assertThat(before.inFlight()).isOne();
			assertThat(before.weight()).isEqualTo(2.0);
			assertThat(service.breakers().breaker("a")).isSameAs(breaker);
			held.complete(HttpStatus.OK);
			assertThat(before.inFlight()).isZero();
		}
		finally {
			scraping.stop();
			engine.stop(0);
		}
	}

	/** Waits for the scraper to ask for {@code path} (the bound is not a speed). */
	private static void awaitScraped(List<String> scraped, String path) throws InterruptedException {
		long deadline = System.nanoTime() + WAIT.toNanos();
		while (!scraped.contains(path)) {
			assertThat(System.nanoTime()).as("waited for a scrape of %s; scraped %s", path, scraped)
				.isLessThan(deadline);
			Thread.sleep(5);
		}
	}

	/** An instance that counts how often its URI is built. */
	private static ServiceInstance counting(String id, String weight, AtomicInteger uris) {
		return new DefaultServiceInstance(id, "llm", "10.0.0." + (id.charAt(0) - 'a' + 1), 8000, false,
				Map.of("dualmap.weight", weight)) {
			@Override
			public java.net.URI getUri() {
				uris.incrementAndGet();
				return super.getUri();
			}
		};
	}

	private static ServiceInstance instance(String id, String weight) {
		return new DefaultServiceInstance(id, "llm", "10.0.0." + (id.charAt(0) - 'a' + 1), 8000, false,
				Map.of("dualmap.weight", weight));
	}

	/**
	 * A client that leaves just as its request is released: the try ends once and leaves
	 * nothing behind in the pool's set of tries in flight (one ended in the gap between
	 * being handed over and being added stayed there for ever).
	 */
	@Test
	void triesCancelledAsTheyAreReleasedLeaveNothingInFlight() throws Exception {
		ServicePool service = pool(SchedulerSettings.ofDefaults(), QueueSettings.ofDefaults(), "a", "b", "c");
		ExecutorService other = Executors.newSingleThreadExecutor();
		try {
			for (int i = 0; i < 50_000; i++) {
				AtomicReference<Subscription> subscription = new AtomicReference<>();
				int spin = i & 63;
				Future<?> cancel = other.submit(() -> {
					while (subscription.get() == null) {
						Thread.onSpinWait();
					}
					for (int k = 0; k < spin; k++) {
						Thread.onSpinWait();
					}
					subscription.get().cancel();
				});
				service
					.submit(new RoutingRequest("r" + i, this.hasher.ofText("m", "p" + (i % 50)),
							Duration.ofSeconds(5).toNanos(), this.now.get()), true)
					.subscribe(new BaseSubscriber<RoutedAttempt>() {
						@Override
						protected void hookOnSubscribe(Subscription s) {
							request(1);
							subscription.set(s);
						}

						@Override
						protected void hookOnNext(RoutedAttempt attempt) {
							attempt.complete(HttpStatus.OK);
						}
					});
				cancel.get();
			}
		}
		finally {
			other.shutdown();
		}
		assertThat(service.triesInFlight()).isZero();
	}

	@Test
	void anEmptyInstanceListKeepsTheLastMembershipForTheGracePeriod() {
		// Spring's discovery supplier answers a failed or timed-out read with an empty
		// list: taken at its word, it rejected every queued request and forgot drains,
		// in-flight counts and breakers.
		ServicePool service = pool(SchedulerSettings.ofDefaults(), oneInPrefill(), "a", "b", "c");
		service.emptyListGrace(Duration.ofSeconds(30));
		assertThat(service.drain("c")).isTrue();
		RoutedAttempt first = now(service, request("x"));
		AtomicReference<Throwable> rejected = new AtomicReference<>();
		AtomicReference<RoutedAttempt> queued = new AtomicReference<>();
		// Same prompt, same instance: waits behind the first in its queue.
		service.submit(request("x"), true).subscribe(queued::set, rejected::set);
		assertThat(service.queues().queued()).isEqualTo(1);

		assertThat(service.updateMembership(List.of())).isFalse();
		this.now.addAndGet(Duration.ofSeconds(29).toNanos());
		assertThat(service.updateMembership(List.of())).isFalse();
		assertThat(service.instancePool().size()).isEqualTo(3);
		assertThat(service.queues().queued()).isEqualTo(1);
		assertThat(rejected.get()).isNull();
		assertThat(service.isDraining("c")).isTrue();
		assertThat(service.instancePool().instance(first.instanceId()).inFlight()).isEqualTo(1);

		// Discovery answers again: nothing was lost, and the grace starts over.
		members(service, "a", "b", "c");
		assertThat(service.isDraining("c")).isTrue();
		this.now.addAndGet(Duration.ofSeconds(29).toNanos());
		assertThat(service.updateMembership(List.of())).isFalse();
		assertThat(service.instancePool().size()).isEqualTo(3);

		// Still empty a grace after the first empty list: the pool is empty (scaled to
		// zero).
		this.now.addAndGet(Duration.ofSeconds(30).toNanos());
		assertThat(service.updateMembership(List.of())).isTrue();
		assertThat(service.instancePool().size()).isZero();
		assertThat(rejected.get()).isNotNull();
		first.complete(HttpStatus.OK);
	}

	@Test
	void withoutAGraceAnEmptyListEmptiesThePoolAtOnce() {
		ServicePool service = pool(SchedulerSettings.ofDefaults(), oneInPrefill(), "a", "b");
		service.emptyListGrace(Duration.ZERO);
		assertThat(service.updateMembership(List.of())).isTrue();
		assertThat(service.instancePool().size()).isZero();
	}

	@Test
	void aMembershipWhoseListenerFailedIsToldAgainWithTheNextEqualList() {
		// A list whose application failed counted as applied: the next equal list took
		// the fast path, and a new instance was never scraped. The failure did not
		// reach the request that brought the list either.
		DualMapRegistry registry = DualMapRegistry.builder().services("llm").clock(this.clock).build();
		List<List<String>> told = new ArrayList<>();
		AtomicInteger calls = new AtomicInteger();
		registry.addListener(new DualMapListener() {
			@Override
			public void onMembershipChanged(String service, List<ServiceInstance> instances) {
				if (calls.incrementAndGet() == 2) {
					throw new IllegalStateException("listener failed once");
				}
				told.add(instances.stream().map(ServiceInstance::getInstanceId).toList());
			}
		});
		ServicePool service = registry.service("llm");
		members(service, "a");
		members(service, "a", "b");
		assertThat(service.instancePool().size()).isEqualTo(2);
		assertThat(told).containsExactly(List.of("a"));
		members(service, "a", "b");
		assertThat(told).containsExactly(List.of("a"), List.of("a", "b"));
		// Settled: an equal list is the fast path again.
		members(service, "a", "b");
		assertThat(calls.get()).isEqualTo(3);
	}

}

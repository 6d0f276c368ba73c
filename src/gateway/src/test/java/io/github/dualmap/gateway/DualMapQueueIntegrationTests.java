package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import io.github.dualmap.core.DispatchMode;
import io.github.dualmap.core.DispatchQueues;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.cloud.client.discovery.simple.InstanceProperties;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryProperties;
import org.springframework.cloud.client.discovery.simple.reactive.SimpleReactiveDiscoveryProperties;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The gateway in queue mode in front of three stub engines whose first byte the tests
 * delay: a slow instance's backlog migrates to the other candidate, full queues answer
 * 429 with {@code Retry-After}, a client that disconnects while queued leaves the queue,
 * and requests queued for an instance removed from discovery are served by the others.
 * Small queue bounds make each situation reachable with a handful of requests. The stubs'
 * delays do not depend on the prompt and change from test to test, so the pool runs the
 * linear TTFT model (one rate for all): per-instance models would learn each stub's
 * delays from earlier tests and move work by them.
 */
@GatewayIntegrationTest(classes = DualMapQueueIntegrationTests.App.class,
		properties = { "dualmap.scrape.enabled=false", "dualmap.hot-prefix.window=1000",
				"dualmap.hot-prefix.min-samples=1000", "dualmap.dispatch.max-prefill-requests=1",
				"dualmap.dispatch.max-queued-per-instance=4", "dualmap.dispatch.max-queued-per-pool=6",
				"dualmap.dispatch.migration-margin=0", "dualmap.dispatch.max-wait=20s",
				"dualmap.hotspot.max-queue-wait=300ms", "dualmap.discovery.refresh-interval=100ms",
				"dualmap.slo.classes.hurried.ttft=1s", "dualmap.slo.classes.hurried.max-wait=300ms",
				// The queue's moves, wait bound and rejections as these tests count them:
				// the full policy's eager moves, half the SLO, no rescue into another
				// queue (each has tests of its own in DispatchQueuesTests).
				"dualmap.policy=dualmap", "dualmap.dispatch.move-late-only=false",
				"dualmap.dispatch.max-wait-share=0.5", "dualmap.dispatch.rescue-to-queue=false",
				// These tests make one stub slow on purpose and count the moves the
				// pool-wide estimate gives; with per-instance TTFT models the slow stub's
				// burst is turned away (503) instead (DispatchQueuesTtftModelTests covers
				// the queue with them).
				"dualmap.ttft.model=linear" })
class DualMapQueueIntegrationTests {

	@Discovered
	static final List<StubEngine> ENGINES = List.of(new StubEngine("a"), new StubEngine("b"), new StubEngine("c"));

	@LocalServerPort
	int port;

	@Autowired
	DualMapRegistry registry;

	@Autowired
	Recorder recorder;

	@Autowired
	MeterRegistry meters;

	@Autowired
	ObjectProvider<SimpleDiscoveryProperties> discovery;

	@Autowired
	ObjectProvider<SimpleReactiveDiscoveryProperties> reactiveDiscovery;

	@AfterEach
	void settle() {
		StubEngine.settle(ENGINES, this.registry.service("llm"));
	}

	record Result(int status, String instance, String reason, String retryAfter, String body, String queueMs,
			String requestId) {

		Result(int status, String instance, String reason, String retryAfter, String body) {
			this(status, instance, reason, retryAfter, body, "", "");
		}

	}

	WebClient client() {
		return WebClient.create("http://127.0.0.1:" + this.port);
	}

	Mono<Result> post(String prompt) {
		return post(prompt, "go");
	}

	Mono<Result> post(String prompt, String question) {
		return post(prompt, question, null);
	}

	/** With an {@code x-slo-ttft-ms} objective when {@code sloMs} is not null. */
	Mono<Result> post(String prompt, String question, String sloMs) {
		String body = """
				{"model":"m","stream":true,"messages":[{"role":"system","content":"%s"},{"role":"user","content":"%s"}]}"""
			.formatted(("You are the assistant for " + prompt + ". ").repeat(20), question);
		return client().post().uri("/v1/chat/completions").headers(h -> {
			if (sloMs != null) {
				h.set(SloResolver.TTFT_HEADER, sloMs);
			}
		})
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchangeToMono(r -> r.bodyToMono(String.class)
				.defaultIfEmpty("")
				.map(b -> new Result(r.statusCode().value(), header(r.headers().asHttpHeaders(), "x-dualmap-instance"),
						header(r.headers().asHttpHeaders(), "x-dualmap-reason"),
						header(r.headers().asHttpHeaders(), HttpHeaders.RETRY_AFTER), b,
						header(r.headers().asHttpHeaders(), DispatchAccountingFilter.QUEUE_HEADER),
						header(r.headers().asHttpHeaders(), "x-request-id"))));
	}

	static String header(HttpHeaders headers, String name) {
		String v = headers.getFirst(name);
		return v == null ? "" : v;
	}

	/**
	 * {@code n} concurrent requests sharing the system prompt, each with its own
	 * question, so each brings uncached tokens and a backlog shows in the TTFT model.
	 */
	List<Result> burst(String prompt, int n) {
		return Flux.range(0, n)
			.flatMap(i -> post(prompt, ("Details of question " + i + ". ").repeat(25)), n)
			.collectList()
			.block(Duration.ofSeconds(60));
	}

	StubEngine engine(String instanceId) {
		return ENGINES.stream().filter(e -> e.instanceId().equals(instanceId)).findFirst().orElseThrow();
	}

	String home(String prompt) {
		Result r = post(prompt).block(Duration.ofSeconds(10));
		assertThat(r.status()).isEqualTo(200);
		return r.instance();
	}

	@Test
	void queueModeIsTheDefault() {
		assertThat(this.registry.queueSettings().mode()).isEqualTo(DispatchMode.QUEUE);
		// Membership is loaded at startup, before any request.
		assertThat(this.registry.service("llm").instancePool().size()).isEqualTo(3);
	}

	@Test
	void theBacklogOfASlowInstanceMigratesToTheOtherCandidate() {
		String home = home("migration");
		engine(home).firstByteDelay.set(Duration.ofMillis(1500));
		DispatchQueues queues = this.registry.service("llm").queues();
		long migrationsBefore = queues.migrations();
		List<Result> results = burst("migration", 5);
		assertThat(results).hasSize(5).allSatisfy(r -> {
			assertThat(r.status()).isEqualTo(200);
			assertThat(r.body()).isEqualTo(String.join("", StubEngine.EVENTS));
		});
		assertThat(queues.migrations()).isGreaterThan(migrationsBefore);
		assertThat(results).anySatisfy(r -> {
			assertThat(r.instance()).isNotEqualTo(home);
			// The idle other candidate pulls before the slow one counts as a hotspot.
			assertThat(r.reason()).isIn("hotspot", "idle-pull");
		});
	}

	@Test
	void fullQueuesAnswer429WithRetryAfterAndAnOpenAiError() {
		ENGINES.forEach(e -> e.firstByteDelay.set(Duration.ofMillis(1000)));
		List<Result> results = burst("overload", 16);
		assertThat(results).hasSize(16).allSatisfy(r -> assertThat(r.status()).isIn(200, 429));
		List<Result> rejected = results.stream().filter(r -> r.status() == 429).toList();
		assertThat(rejected).isNotEmpty().allSatisfy(r -> {
			assertThat(Long.parseLong(r.retryAfter())).isPositive();
			assertThat(r.body()).startsWith("{\"error\":{")
				.contains("\"type\":\"rate_limit_exceeded\"", "\"code\":\"queue_full\"");
		});
		// Each answer, the gateway's refusals included, names its request.
		assertThat(results).extracting(Result::requestId).doesNotContain("").doesNotHaveDuplicates();
	}

	@Test
	void aFullPoolShedsAQueuedLooseRequestForATightOneAndItsClientGets429() {
		ENGINES.forEach(e -> e.firstByteDelay.set(Duration.ofMillis(1500)));
		ServicePool service = this.registry.service("llm");
		long shedBefore = service.queues().shed();
		List<Result> batch = new CopyOnWriteArrayList<>();
		Disposable batchClients = Flux.range(0, 9)
			.flatMap(i -> post("batch tenant " + i, "a long report", "60000"), 9)
			.subscribe(batch::add);
		try {
			// One request in prefill per instance at most; the pool bound (6) holds the
			// rest.
			await().atMost(Duration.ofSeconds(5)).until(() -> service.queues().queued() == 6);
			// 10 s: it may wait half of that (dispatch.max-wait-share), longer than the
			// 1.5 s prefills of the requests ahead of it take.
			Result interactive = post("interactive tenant", "quick", "10000").block(Duration.ofSeconds(20));
			assertThat(interactive.status()).isEqualTo(200);
			await().atMost(Duration.ofSeconds(20)).until(() -> batch.size() == 9);
			List<Result> shed = batch.stream().filter(r -> r.body().contains("tighter TTFT SLO")).toList();
			assertThat(shed).singleElement().satisfies(r -> {
				assertThat(r.status()).isEqualTo(429);
				assertThat(Long.parseLong(r.retryAfter())).isPositive();
				assertThat(r.body()).contains("\"code\":\"queue_full\"");
			});
			assertThat(service.queues().shed()).isEqualTo(shedBefore + 1);
			// The others were served (or, had more than six waited, refused at the
			// bound).
			assertThat(batch).allSatisfy(r -> assertThat(r.status()).isIn(200, 429));
		}
		finally {
			batchClients.dispose();
		}
	}

	@Test
	void aClassWithItsOwnWaitBoundExpiresWhileOthersWait() {
		ENGINES.forEach(e -> e.firstByteDelay.set(Duration.ofMillis(1500)));
		ServicePool service = this.registry.service("llm");
		List<Result> patient = new CopyOnWriteArrayList<>();
		Disposable clients = Flux.range(0, 6).flatMap(i -> post("patient tenant " + i), 6).subscribe(patient::add);
		try {
			// One request in prefill per instance; the other three wait.
			await().atMost(Duration.ofSeconds(5)).until(() -> service.queues().queued() == 3);
			Result hurried = client().post()
				.uri("/v1/chat/completions")
				.header("x-slo-class", "hurried")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue("{\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"now\"}]}")
				.exchangeToMono(r -> r.bodyToMono(String.class)
					.map(b -> new Result(r.statusCode().value(), "", "",
							header(r.headers().asHttpHeaders(), HttpHeaders.RETRY_AFTER), b)))
				.block(Duration.ofSeconds(10));
			assertThat(hurried.status()).isEqualTo(503);
			assertThat(hurried.body()).contains("\"code\":\"queue_wait_exceeded\"", "waited 300 ms");
			assertThat(Long.parseLong(hurried.retryAfter())).isPositive();
			// The default class waits on (dispatch.max-wait 20 s) and is served; the
			// three that waited for a prefill slot (1.5 s) say so.
			await().atMost(Duration.ofSeconds(20)).until(() -> patient.size() == 6);
			assertThat(patient).allSatisfy(r -> assertThat(r.status()).isEqualTo(200));
			assertThat(patient.stream().filter(r -> Long.parseLong(r.queueMs()) >= 1000)).hasSize(3);
			assertThat(patient.stream().filter(r -> Long.parseLong(r.queueMs()) < 1000)).hasSize(3);
		}
		finally {
			clients.dispose();
		}
	}

	@Test
	void aRequestThatWaitedHalfItsOwnSloExpiresWhileOthersWait() {
		ENGINES.forEach(e -> e.firstByteDelay.set(Duration.ofMillis(1500)));
		ServicePool service = this.registry.service("llm");
		List<Result> patient = new CopyOnWriteArrayList<>();
		Disposable clients = Flux.range(0, 6).flatMap(i -> post("waiting tenant " + i), 6).subscribe(patient::add);
		try {
			await().atMost(Duration.ofSeconds(5)).until(() -> service.queues().queued() == 3);
			// Its own 600 ms objective: after 300 ms in the queue it could no longer be
			// met.
			Result tight = post("tight tenant", "now", "600").block(Duration.ofSeconds(10));
			assertThat(tight.status()).isEqualTo(503);
			assertThat(tight.body()).contains("\"code\":\"queue_wait_exceeded\"", "waited 300 ms");
			assertThat(Long.parseLong(tight.retryAfter())).isPositive();
			// The default 5 s objective lets the others wait their 1.5 s.
			await().atMost(Duration.ofSeconds(20)).until(() -> patient.size() == 6);
			assertThat(patient).allSatisfy(r -> assertThat(r.status()).isEqualTo(200));
		}
		finally {
			clients.dispose();
		}
	}

	@Test
	void aClientThatDisconnectsWhileQueuedLeavesTheQueue() {
		String home = home("disconnect");
		engine(home).firstByteDelay.set(Duration.ofMillis(1500));
		ServicePool service = this.registry.service("llm");
		Mono<Result> held = post("disconnect").cache();
		held.subscribe();
		await().atMost(Duration.ofSeconds(5)).until(() -> service.instancePool().instance(home).prefillRequests() == 1);
		long releases = service.queues().releases();
		Disposable leaving = post("disconnect").subscribe();
		await().atMost(Duration.ofSeconds(5)).until(() -> service.queues().queued(home) == 1);
		leaving.dispose();
		await().atMost(Duration.ofSeconds(5)).until(() -> service.queues().queued() == 0);
		assertThat(service.instancePool().instance(home).queuedTokens()).isZero();
		// Its observation ends as cancelled.
		await().atMost(Duration.ofSeconds(5)).until(() -> !this.recorder.dispatches("cancelled").isEmpty());
		assertThat(held.block(Duration.ofSeconds(10)).status()).isEqualTo(200);
		// Had it stayed queued it would have been released at the first byte.
		assertThat(service.queues().releases()).isEqualTo(releases);
	}

	@Test
	void everyChoiceIsObservedAsAChildOfItsServerRequest() {
		Recorder recorder = this.recorder;
		recorder.stopped.clear();
		Result released = post("observed").block(Duration.ofSeconds(10));
		assertThat(released.status()).isEqualTo(200);
		await().atMost(Duration.ofSeconds(5)).until(() -> recorder.dispatches("released").size() == 1);
		Observation.Context context = recorder.dispatches("released").get(0);
		assertThat(context.getLowCardinalityKeyValue("pool").getValue()).isEqualTo("llm");
		assertThat(context.getLowCardinalityKeyValue("reason").getValue()).isEqualTo(released.reason());
		assertThat(context.getHighCardinalityKeyValue("instance.id").getValue()).isEqualTo(released.instance());
		// The id the client got back (x-request-id), so one value finds the span.
		assertThat(context.getHighCardinalityKeyValue("request.id").getValue()).isEqualTo(released.requestId())
			.isNotBlank();
		assertThat(context.getParentObservation()).isNotNull();
		assertThat(context.getParentObservation().getContextView().getName()).isEqualTo("http.server.requests");
		// Refused by full queues: rejected, with the error and no reason.
		long timed = rejectedTimerCount();
		ENGINES.forEach(e -> e.firstByteDelay.set(Duration.ofMillis(1000)));
		List<Result> burst = burst("observed full", 12);
		long refused = burst.stream().filter(r -> r.status() == 429).count();
		assertThat(refused).isPositive();
		await().atMost(Duration.ofSeconds(10)).until(() -> recorder.dispatches("released").size() == 1 + 12 - refused);
		assertThat(recorder.dispatches("rejected")).hasSize((int) refused).allSatisfy(c -> {
			assertThat(c.getError()).isInstanceOf(DispatchRejectedException.class);
			assertThat(c.getLowCardinalityKeyValue("reason").getValue()).isEqualTo("none");
		});
		// Its timer, by outcome.
		assertThat(rejectedTimerCount()).isEqualTo(timed + refused);
	}

	long rejectedTimerCount() {
		Timer timer = this.meters.find(DualMapLoadBalancer.OBSERVATION)
			.tags("pool", "llm", "outcome", "rejected")
			.timer();
		return timer == null ? 0 : timer.count();
	}

	@Test
	void requestsQueuedForAnInstanceRemovedFromDiscoveryAreServedByOthers() {
		String home = home("removal");
		StubEngine removed = engine(home);
		removed.firstByteDelay.set(Duration.ofMillis(1500));
		ServicePool service = this.registry.service("llm");
		int servedBefore = removed.served.get();
		List<Result> results = new ArrayList<>();
		Disposable clients = Flux.range(0, 4).flatMap(i -> post("removal"), 4).subscribe(results::add);
		try {
			await().atMost(Duration.ofSeconds(5)).until(() -> service.queues().queued(home) >= 2);
			setDiscovered(ENGINES.stream().filter(e -> e != removed).toList());
			await().atMost(Duration.ofSeconds(10)).until(() -> results.size() == 4);
			assertThat(results).allSatisfy(r -> assertThat(r.status()).isEqualTo(200));
			// Only the request already sent to it; the queued ones went elsewhere.
			assertThat(removed.served.get() - servedBefore).isEqualTo(1);
			assertThat(results.stream().filter(r -> !r.instance().equals(home))).hasSize(3);
		}
		finally {
			clients.dispose();
			setDiscovered(ENGINES);
			await().atMost(Duration.ofSeconds(5)).until(() -> service.instancePool().size() == 3);
		}
	}

	private void setDiscovered(List<StubEngine> engines) {
		List<InstanceProperties> instances = new ArrayList<>();
		for (StubEngine e : engines) {
			InstanceProperties p = new InstanceProperties();
			p.setUri(java.net.URI.create(e.uri()));
			p.setServiceId("llm");
			instances.add(p);
		}
		Map<String, List<InstanceProperties>> byService = new HashMap<>();
		byService.put("llm", instances);
		this.discovery.ifAvailable(d -> d.setInstances(new HashMap<>(byService)));
		this.reactiveDiscovery.ifAvailable(d -> d.setInstances(new HashMap<>(byService)));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		Recorder recorder() {
			return new Recorder();
		}

	}

	/** Keeps every observation that stopped. */
	static class Recorder implements ObservationHandler<Observation.Context> {

		final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

		@Override
		public void onStop(Observation.Context context) {
			this.stopped.add(context);
		}

		List<Observation.Context> dispatches(String outcome) {
			return this.stopped.stream()
				.filter(c -> DualMapLoadBalancer.OBSERVATION.equals(c.getName())
						&& outcome.equals(c.getLowCardinalityKeyValue("outcome").getValue()))
				.toList();
		}

	}

}

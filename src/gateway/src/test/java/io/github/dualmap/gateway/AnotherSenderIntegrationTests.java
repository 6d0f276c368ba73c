package io.github.dualmap.gateway;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import io.github.dualmap.core.Candidates;
import io.github.dualmap.core.DispatchQueues;
import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.prompt.PromptParser;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Another sender seen through the engines' metrics alone, as a gateway replica without
 * replica sync sees the others (or clients that bypass the gateway): two stub engines
 * whose {@code /metrics} gauges the test sets, scraped every 50 ms over HTTP, and counted
 * in {@code dualmap_engine_foreign_requests}.
 * <ul>
 * <li>Where the last fresh scrape counts requests this gateway did not send, a request
 * that can no longer make its SLO is answered 503 rather than sent, though nothing waits
 * in the gateway's own queues ({@code dualmap.dispatch.shed-where-others-send}; counted
 * in {@code dualmap_queue_hopeless_others_total}); where the engines run only the
 * gateway's own requests, or their last scrape failed, it is sent, late, since alone it
 * delays no one the gateway can tell of.
 * <li>Where the engine queues requests this gateway did not send, it releases nothing
 * there ({@code dualmap.dispatch.hold-on-engine-queue}): the request waits in the
 * gateway's queue, where it can still move, until a scrape shows that queue gone, or
 * until the scrapes fail (a failed scrape holds nothing); and while its prefix-cache
 * counters show more than a prefill budget of prompts it did not send admitted and not
 * yet computed ({@code dualmap.scrape.engine-backlog}), drained at the instance's cost
 * per token.
 * <li>The engine's count of the gateway's own requests in flight is no other sender's; a
 * request sent straight to the engine is.
 * <li>A prompt neither candidate is known to hold goes to the first candidate in ring
 * order where the engines show another sender, as every replica routing it would send it
 * ({@code dualmap.tie-break: auto}), and to the lower estimate where they show none.
 * </ul>
 */
@GatewayIntegrationTest(properties = { "dualmap.scrape.interval=50ms", "dualmap.scrape.timeout=300ms",
		"dualmap.scrape.stale-after=1s", "dualmap.hot-prefix.window=1000", "dualmap.hot-prefix.min-samples=1000",
		// One rate for every stub, not recalibrated by the stubs' instant answers: the
		// estimate of the long prompt below is its own prefill at the configured rate,
		// well past its objective on either instance, in every test.
		"dualmap.ttft.model=linear", "dualmap.ttft.calibration-alpha=0" })
class AnotherSenderIntegrationTests {

	@Discovered
	static final List<StubEngine> ENGINES = List.of(new StubEngine("a"), new StubEngine("b"));

	static final String PATH = "/v1/chat/completions";

	/**
	 * A prompt whose own prefill the pool estimates at more than its objective; its topic
	 * opens it, so no test finds another's prompt cached (block hashes are chained).
	 */
	static String late(String topic) {
		return """
				{"model":"m","stream":true,"messages":[{"role":"system","content":"You summarise reports on %s."},\
				{"role":"user","content":"%s"}]}""".formatted(topic,
				"Summarise every paragraph of this long report. ".repeat(6_000));
	}

	static final String OBJECTIVE_MS = "1000";

	@Autowired
	WebTestClient client;

	@Autowired
	DualMapRegistry registry;

	@Autowired
	PromptParser parser;

	@Autowired
	MeterRegistry meters;

	@AfterEach
	void noOtherSender() {
		ENGINES.forEach(e -> {
			e.reset();
			e.running.set(0);
			e.prefixCache.set(null);
		});
		awaitForeignRequests(0);
		StubEngine.settle(ENGINES, this.registry.service("llm"));
	}

	@Test
	void theLatePromptIsPastItsObjectiveOnEitherInstance() {
		int tokens = this.parser.parse(PATH, late("estimates").getBytes(StandardCharsets.UTF_8))
			.blocks()
			.promptTokens();
		assertThat(pool().estimator().estimate(0, tokens))
			.isGreaterThan(Duration.ofMillis(Long.parseLong(OBJECTIVE_MS)).toNanos());
	}

	@Test
	void aLateRequestIsAnswered503WhereTheEnginesRunAnotherSendersRequests() {
		ENGINES.forEach(e -> e.running.set(2));
		awaitForeignRequests(2);
		DispatchQueues queues = this.registry.service("llm").queues();
		long releases = queues.releases();
		long shed = queues.hopelessShed();
		double forOthers = this.meters.get("dualmap.queue.hopeless.others").functionCounter().count();
		int served = served();
		EntityExchangeResult<String> r = postLate("other senders");
		assertThat(r.getStatus().value()).isEqualTo(503);
		assertThat(r.getResponseBody()).startsWith("{\"error\":{")
			.contains("\"code\":\"queue_wait_exceeded\"")
			.contains("would need about");
		assertThat(r.getResponseHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isNotNull();
		assertThat(queues.hopelessShed()).isEqualTo(shed + 1);
		assertThat(this.meters.get("dualmap.queue.hopeless.others").functionCounter().count())
			.as("nothing of the gateway's own waited")
			.isEqualTo(forOthers + 1);
		assertThat(queues.releases()).isEqualTo(releases);
		assertThat(served()).isEqualTo(served);
	}

	@Test
	void aLateRequestIsSentWhereTheEnginesRunOnlyThisGatewaysRequests() {
		awaitForeignRequests(0);
		long shed = this.registry.service("llm").queues().hopelessShed();
		int served = served();
		EntityExchangeResult<String> r = postLate("own requests only");
		assertThat(r.getStatus().value()).isEqualTo(200);
		assertThat(this.registry.service("llm").queues().hopelessShed()).isEqualTo(shed);
		assertThat(served()).isEqualTo(served + 1);
	}

	@Test
	void aFailedScrapeShowsNoOtherSender() {
		ENGINES.forEach(e -> e.running.set(2));
		awaitForeignRequests(2);
		failScrapes();
		EntityExchangeResult<String> r = postLate("failed scrapes");
		assertThat(r.getStatus().value()).isEqualTo(200);
	}

	@Test
	void theEnginesCountOfThisGatewaysOwnRequestsIsNoOtherSenders() {
		ENGINES.forEach(e -> {
			e.countsItsRequests.set(true);
			e.firstByteDelay.set(Duration.ofSeconds(2));
		});
		Mono<EntityExchangeResult<String>> own = Mono.fromCallable(() -> postOnTime("own")).cache();
		own.subscribeOn(Schedulers.boundedElastic()).subscribe();
		await().atMost(Duration.ofSeconds(5))
			.until(() -> pool().instances().stream().anyMatch(s -> s.prefillRequests() == 1));
		InstanceState there = pool().instances().stream().filter(s -> s.prefillRequests() == 1).findFirst().get();
		awaitNextScrape();
		awaitNextScrape();
		// The engine runs one request, the gateway's own.
		assertThat(there.engine().running()).isEqualTo(1);
		assertThat(there.foreignRequestsAtScrape()).isZero();
		assertThat(foreignRequestsGauge(there)).isZero();
		// A client that bypasses the gateway sends one straight to the engine.
		Mono<Integer> direct = WebClient.create(engine(there.id()).uri())
			.post()
			.uri(PATH)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(onTime("direct"))
			.exchangeToMono(r -> r.releaseBody().thenReturn(r.statusCode().value()))
			.cache();
		direct.subscribe();
		await().atMost(Duration.ofSeconds(5)).until(() -> there.foreignRequestsAtScrape() == 1);
		assertThat(foreignRequestsGauge(there)).isEqualTo(1);
		assertThat(own.block(Duration.ofSeconds(10)).getStatus().value()).isEqualTo(200);
		assertThat(direct.block(Duration.ofSeconds(10))).isEqualTo(200);
	}

	@Test
	void aReleaseWaitsWhileTheEnginesQueueAnotherSendersRequests() {
		ENGINES.forEach(e -> e.waiting.set(3));
		awaitForeignRequests(3);
		DispatchQueues queues = this.registry.service("llm").queues();
		int served = served();
		Mono<EntityExchangeResult<String>> held = Mono.fromCallable(() -> postOnTime("held")).cache();
		held.subscribeOn(Schedulers.boundedElastic()).subscribe();
		await().atMost(Duration.ofSeconds(5)).until(() -> queues.queued() == 1);
		// Three scrapes later it still waits, and no engine has seen it.
		for (int i = 0; i < 3; i++) {
			awaitNextScrape();
		}
		assertThat(queues.queued()).isEqualTo(1);
		assertThat(served()).isEqualTo(served);
		ENGINES.forEach(e -> e.waiting.set(0));
		EntityExchangeResult<String> r = held.block(Duration.ofSeconds(10));
		assertThat(r.getStatus().value()).isEqualTo(200);
		assertThat(Long.parseLong(r.getResponseHeaders().getFirst(DispatchAccountingFilter.QUEUE_HEADER)))
			.isGreaterThanOrEqualTo(100);
		assertThat(served()).isEqualTo(served + 1);
	}

	@Test
	void aFailedScrapeHoldsNothing() {
		ENGINES.forEach(e -> e.waiting.set(3));
		awaitForeignRequests(3);
		failScrapes();
		EntityExchangeResult<String> r = postOnTime("not held");
		assertThat(r.getStatus().value()).isEqualTo(200);
	}

	@Test
	void aReleaseWaitsWhileTheEngineComputesAnotherSendersLongPrompt() {
		ENGINES.forEach(e -> e.prefixCache.set(new long[] { 1_000, 0 }));
		awaitNextScrape();
		awaitNextScrape();
		// 100,000 uncached tokens admitted since, none of them this gateway's: 2.5 s of
		// prefill at 25 us per token, held while more than 16,384 are left (the estimate
		// stays above 50,000 for over a second: time for the await to see it).
		ENGINES.forEach(e -> e.prefixCache.set(new long[] { 101_000, 0 }));
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(pool().instances())
				.allSatisfy(s -> assertThat(s.freshEngineBacklogTokens(pool().now(), Duration.ofSeconds(1).toNanos()))
					.isGreaterThan(50_000)));
		EntityExchangeResult<String> r = postOnTime("behind a long prompt");
		assertThat(r.getStatus().value()).isEqualTo(200);
		assertThat(Long.parseLong(r.getResponseHeaders().getFirst(DispatchAccountingFilter.QUEUE_HEADER)))
			.isGreaterThanOrEqualTo(100);
	}

	@Test
	void aPromptNoCandidateHoldsGoesToRingOrderWhereTheEnginesShowAnotherSender() {
		ENGINES.forEach(e -> e.running.set(3));
		awaitForeignRequests(3);
		assertThat(behindAPrefillOnItsFirstCandidate("ring order")).isEqualTo("first");
	}

	@Test
	void aPromptNoCandidateHoldsGoesToTheLowerEstimateWhereTheEnginesShowNoOtherSender() {
		awaitForeignRequests(0);
		assertThat(behindAPrefillOnItsFirstCandidate("estimate")).isEqualTo("second");
	}

	/**
	 * Sends a prompt (of {@code topic}) while its first candidate in ring order has
	 * another prompt in prefill, so its estimate there is the higher one, by far less
	 * than the SLO switch needs.
	 * @return which of its candidates it went to, {@code first} or {@code second}
	 */
	private String behindAPrefillOnItsFirstCandidate(String topic) {
		String body = onTime(topic);
		Candidates pair = candidates(body);
		String earlier = null;
		for (int i = 0; earlier == null; i++) {
			String other = onTime(topic + " earlier " + i);
			if (candidates(other).equals(pair)) {
				earlier = other;
			}
		}
		engine(pair.first()).firstByteDelay.set(Duration.ofSeconds(1));
		String first = earlier;
		Mono<EntityExchangeResult<String>> inPrefill = Mono.fromCallable(() -> post(first, "10000")).cache();
		inPrefill.subscribeOn(Schedulers.boundedElastic()).subscribe();
		await().atMost(Duration.ofSeconds(5)).until(() -> pool().instance(pair.first()).prefillRequests() == 1);
		EntityExchangeResult<String> r = post(body, "10000");
		assertThat(r.getStatus().value()).isEqualTo(200);
		assertThat(r.getResponseHeaders().getFirst(DispatchAccountingFilter.REASON_HEADER)).isEqualTo("affinity");
		assertThat(inPrefill.block(Duration.ofSeconds(10)).getStatus().value()).isEqualTo(200);
		String instance = r.getResponseHeaders().getFirst(DispatchAccountingFilter.INSTANCE_HEADER);
		return instance.equals(pair.first()) ? "first" : instance.equals(pair.second()) ? "second" : instance;
	}

	/** The candidates of {@code body}'s prompt, as the pool routes it now. */
	private Candidates candidates(String body) {
		PromptBlocks blocks = this.parser.parse(PATH, body.getBytes(StandardCharsets.UTF_8)).blocks();
		return pool().rings().candidates(blocks.keyAt(pool().hotPrefixes().peekDepth(blocks)));
	}

	private static StubEngine engine(String instanceId) {
		return ENGINES.stream().filter(e -> e.instanceId().equals(instanceId)).findFirst().orElseThrow();
	}

	/**
	 * A short prompt with a 10 s objective: it waits up to 5 s in the gateway's queue.
	 */
	private EntityExchangeResult<String> postOnTime(String topic) {
		return post(onTime(topic), "10000");
	}

	private static String onTime(String topic) {
		return """
				{"model":"m","stream":true,"messages":[{"role":"user","content":"A question on %s."}]}"""
			.formatted(topic);
	}

	private EntityExchangeResult<String> post(String body, String objectiveMs) {
		return this.client.post()
			.uri(PATH)
			.header(SloResolver.TTFT_HEADER, objectiveMs)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	/** The engines' scrapes hang from now on: until every instance's last one failed. */
	private void failScrapes() {
		ENGINES.forEach(e -> e.scrapesHang.set(true));
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(pool().instances()).allSatisfy(s -> assertThat(s.engineFailed()).isTrue()));
		assertThat(pool().instances()).allSatisfy(s -> assertThat(foreignRequestsGauge(s)).isNaN());
	}

	/** Until every instance has been scraped again. */
	private void awaitNextScrape() {
		List<EngineSnapshot> last = pool().instances().stream().map(InstanceState::engine).toList();
		await().atMost(Duration.ofSeconds(5)).until(() -> {
			List<InstanceState> now = pool().instances();
			for (int i = 0; i < now.size(); i++) {
				if (now.get(i).engine() == last.get(i)) {
					return false;
				}
			}
			return true;
		});
	}

	private EntityExchangeResult<String> postLate(String topic) {
		return post(late(topic), OBJECTIVE_MS);
	}

	/**
	 * Until every instance's last scrape counts {@code n} requests this gateway did not
	 * send (it has none in flight).
	 */
	private void awaitForeignRequests(int n) {
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(pool().instances()).allSatisfy(s -> {
			assertThat(s.engineFailed()).isFalse();
			assertThat(s.foreignRequestsAtScrape()).isEqualTo(n);
			assertThat(foreignRequestsGauge(s)).isEqualTo(n);
		}));
	}

	/** What {@code dualmap_engine_foreign_requests} shows for {@code s}. */
	private double foreignRequestsGauge(InstanceState s) {
		return this.meters.get("dualmap.engine.foreign.requests")
			.tags("pool", "llm", "instance.id", s.id())
			.gauge()
			.value();
	}

	private static int served() {
		return ENGINES.stream().mapToInt(e -> e.served.get()).sum();
	}

	private InstancePool pool() {
		return this.registry.service("llm").instancePool();
	}

}

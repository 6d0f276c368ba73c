package io.github.dualmap.gateway;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import io.github.dualmap.core.Candidates;
import io.github.dualmap.core.DispatchQueues;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.prompt.PromptParser;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The rescue at the wait bound through the gateway, with the dispatch defaults: a request
 * whose two candidates are busy past half its SLO is sent to the third instance when it
 * has room ({@code dispatch.rescue}), or joins another instance's queue when none has
 * ({@code dispatch.rescue-to-queue}) and is served there, or answered 503 once its last
 * possible start has passed. Three stub engines, one request in prefill per instance;
 * each test learns the candidates of its prompts from the pool's rings, so it knows which
 * instance is which. The stubs' first-byte delays do not depend on the prompt, so the
 * pool runs the linear TTFT model: one rate for all, and an idle pair of candidates ties
 * to ring order (per-instance models would learn each stub's delays apart and break ties
 * by them).
 */
@GatewayIntegrationTest(properties = { "dualmap.scrape.enabled=false", "dualmap.hot-prefix.window=1000",
		"dualmap.hot-prefix.min-samples=1000", "dualmap.dispatch.max-prefill-requests=1",
		// occupy() fills an instance by sending a tenant whose first candidate it is:
		// with the pool-wide TTFT model idle instances' estimates are equal and the first
		// candidate wins the tie; per-instance models that learned the earlier tests'
		// slow stubs break it differently.
		"dualmap.ttft.model=linear", "management.endpoints.web.exposure.include=dualmap" })
class DualMapRescueIntegrationTests {

	@Discovered
	static final List<StubEngine> ENGINES = List.of(new StubEngine("a"), new StubEngine("b"), new StubEngine("c"));

	static final String PATH = "/v1/chat/completions";

	@LocalServerPort
	int port;

	@Autowired
	DualMapRegistry registry;

	@Autowired
	PromptParser parser;

	@Autowired
	MeterRegistry meters;

	@AfterEach
	void settle() {
		StubEngine.settle(ENGINES, this.registry.service("llm"));
	}

	record Result(int status, String instance, String reason, long queueMs, String body) {
	}

	static String body(String tenant) {
		// The tenant's name opens the prompt, so tenants differ in their first block (the
		// routing key at the minimum depth).
		return """
				{"model":"m","stream":true,"messages":[{"role":"system","content":"%s"},{"role":"user","content":"go"}]}"""
			.formatted(("Tenant " + tenant + " has its own system prompt. ").repeat(20));
	}

	Mono<Result> post(String tenant, String sloMs) {
		return postBody(body(tenant), sloMs);
	}

	Mono<Result> postBody(String body, String sloMs) {
		return WebClient.create("http://127.0.0.1:" + this.port).post().uri(PATH).headers(h -> {
			if (sloMs != null) {
				h.set(SloResolver.TTFT_HEADER, sloMs);
			}
		})
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchangeToMono(r -> r.bodyToMono(String.class).defaultIfEmpty("").map(b -> {
				HttpHeaders h = r.headers().asHttpHeaders();
				String queued = h.getFirst(DispatchAccountingFilter.QUEUE_HEADER);
				return new Result(r.statusCode().value(), String.valueOf(h.getFirst("x-dualmap-instance")),
						String.valueOf(h.getFirst("x-dualmap-reason")), queued == null ? -1 : Long.parseLong(queued),
						b);
			}));
	}

	/** The candidates of a tenant's prompt, as the pool routes it now. */
	Candidates candidates(String tenant) {
		InstancePool pool = this.registry.service("llm").instancePool();
		PromptBlocks blocks = this.parser.parse(PATH, body(tenant).getBytes(StandardCharsets.UTF_8)).blocks();
		return pool.rings().candidates(blocks.keyAt(pool.hotPrefixes().peekDepth(blocks)));
	}

	/** A tenant named {@code prefix} and a number whose candidates are {@code wanted}. */
	String tenant(String prefix, Predicate<Candidates> wanted) {
		for (int i = 0; i < 10_000; i++) {
			String tenant = prefix + i;
			if (wanted.test(candidates(tenant))) {
				return tenant;
			}
		}
		throw new AssertionError("no tenant with the wanted candidates");
	}

	StubEngine engine(String instanceId) {
		return ENGINES.stream().filter(e -> e.instanceId().equals(instanceId)).findFirst().orElseThrow();
	}

	/**
	 * Sets the first-byte delays of {@code pair}'s first and second candidates and of the
	 * third instance, as the test needs them.
	 */
	void firstByteDelays(Candidates pair, Duration first, Duration second, Duration spare) {
		engine(pair.first()).firstByteDelay.set(first);
		engine(pair.second()).firstByteDelay.set(second);
		engine(third(pair)).firstByteDelay.set(spare);
	}

	static String third(Candidates c) {
		return ENGINES.stream()
			.map(StubEngine::instanceId)
			.filter(id -> !id.equals(c.first()) && !id.equals(c.second()))
			.findFirst()
			.orElseThrow();
	}

	/**
	 * Fills the one prefill slot of each of {@code instances}, in order, with a request
	 * of a tenant whose first candidate it is: {@code tenant} itself on its own first
	 * candidate, else a tenant named after it.
	 * @return the requests holding the slots
	 */
	List<Mono<Result>> occupy(String tenant, String... instances) {
		List<Mono<Result>> held = new ArrayList<>();
		for (String instance : instances) {
			String own = candidates(tenant).first().equals(instance) ? tenant
					: tenant(tenant + instance + "-", c -> c.first().equals(instance));
			Mono<Result> r = post(own, null).cache();
			r.subscribe();
			await().atMost(Duration.ofSeconds(5))
				.until(() -> this.registry.service("llm").instancePool().instance(instance).prefillRequests() == 1);
			held.add(r);
		}
		return held;
	}

	static void assertServed(List<Mono<Result>> held) {
		for (Mono<Result> r : held) {
			assertThat(r.block(Duration.ofSeconds(10)).status()).isEqualTo(200);
		}
	}

	double meter(String name) {
		return this.meters.get(name).tag("pool", "llm").functionCounter().count();
	}

	@Test
	void aRequestWhoseCandidatesAreBusyIsSentToAnInstanceWithRoomAtItsWaitBound() {
		Candidates pair = candidates("rescue-");
		String spare = third(pair);
		firstByteDelays(pair, Duration.ofSeconds(3), Duration.ofSeconds(3), Duration.ZERO);
		DispatchQueues queues = this.registry.service("llm").queues();
		long rescues = queues.rescues();
		long queued = queues.rescuesQueued();
		double counted = meter("dualmap.queue.rescues");
		List<Mono<Result>> held = occupy("rescue-", pair.second(), pair.first());
		// A 2 s objective: its wait bound is 1 s (half of it), long before either
		// candidate has room again.
		Result rescued = post("rescue-", "2000").block(Duration.ofSeconds(10));
		assertThat(rescued.status()).isEqualTo(200);
		assertThat(rescued.body()).isEqualTo(String.join("", StubEngine.EVENTS));
		assertThat(rescued.instance()).isEqualTo(spare);
		assertThat(rescued.reason()).isEqualTo("rescue");
		assertThat(rescued.queueMs()).isBetween(1000L, 2900L);
		assertThat(queues.rescues()).isEqualTo(rescues + 1);
		assertThat(queues.rescuesQueued()).isEqualTo(queued);
		assertThat(meter("dualmap.queue.rescues")).isEqualTo(counted + 1);
		assertServed(held);
	}

	@Test
	void withNoInstanceFreeItJoinsAnotherQueueAndIsServedThereInTime() {
		Candidates pair = candidates("queued-");
		String spare = third(pair);
		firstByteDelays(pair, Duration.ofSeconds(6), Duration.ofSeconds(3), Duration.ofSeconds(3));
		DispatchQueues queues = this.registry.service("llm").queues();
		long rescues = queues.rescues();
		long queued = queues.rescuesQueued();
		double counted = meter("dualmap.queue.rescues.queued");
		List<Mono<Result>> held = occupy("queued-", pair.second(), spare, pair.first());
		// A 4 s objective: at its 2 s wait bound every instance is busy; the other two
		// free up at about 3 s, before its last possible start.
		Result rescued = post("queued-", "4000").block(Duration.ofSeconds(15));
		assertThat(rescued.status()).isEqualTo(200);
		assertThat(rescued.instance()).isIn(pair.second(), spare);
		assertThat(rescued.reason()).isEqualTo("rescue");
		assertThat(rescued.queueMs()).isBetween(2000L, 4000L);
		assertThat(queues.rescues()).isEqualTo(rescues + 1);
		assertThat(queues.rescuesQueued()).isEqualTo(queued + 1);
		assertThat(meter("dualmap.queue.rescues.queued")).isEqualTo(counted + 1);
		assertServed(held);
	}

	@Test
	void aRequestRescuedIntoAQueueThatDoesNotFreeInTimeIsAnswered503Once() {
		Candidates pair = candidates("late-");
		String spare = third(pair);
		ENGINES.forEach(e -> e.firstByteDelay.set(Duration.ofSeconds(6)));
		DispatchQueues queues = this.registry.service("llm").queues();
		long queued = queues.rescuesQueued();
		long releases = queues.releases();
		List<Mono<Result>> held = occupy("late-", pair.second(), spare, pair.first());
		Result late = post("late-", "3000").block(Duration.ofSeconds(15));
		assertThat(late.status()).isEqualTo(503);
		assertThat(late.body()).startsWith("{\"error\":{").contains("\"code\":\"queue_wait_exceeded\"");
		assertThat(queues.rescuesQueued()).isEqualTo(queued + 1);
		assertServed(held);
		// Only the three that held the prefill slots were ever sent.
		assertThat(queues.releases()).isEqualTo(releases + 3);
	}

	@Test
	void aRequestThatWouldMissItsSloWhereItIsAboutToBeSentIsAnswered503AndNeverSent() {
		Candidates pair = candidates("hopeless-");
		String spare = third(pair);
		firstByteDelays(pair, Duration.ofMillis(400), Duration.ofMillis(400), Duration.ofSeconds(3));
		DispatchQueues queues = this.registry.service("llm").queues();
		long shed = queues.hopelessShed();
		long releases = queues.releases();
		double counted = meter("dualmap.queue.hopeless");
		List<Mono<Result>> held = occupy("hopeless-", pair.second(), spare, pair.first());
		// Another request waits meanwhile: the tenant that holds the spare's slot, queued
		// there (its prefix is cached there) behind a slot busy for 3 s.
		String spareTenant = tenant("hopeless-" + spare + "-", c -> c.first().equals(spare));
		Mono<Result> waiting = post(spareTenant, "60000").cache();
		waiting.subscribe();
		await().atMost(Duration.ofSeconds(5)).until(() -> queues.queued() == 1);

		// A prompt whose own prefill the pool estimates at more than its 1.5 s objective.
		String longBody = body("hopeless-").replace("\"go\"",
				"\"" + "Summarise every paragraph of this long report carefully. ".repeat(6_000) + "\"");
		int tokens = this.parser.parse(PATH, longBody.getBytes(StandardCharsets.UTF_8)).blocks().promptTokens();
		assertThat(this.registry.service("llm").instancePool().estimator().estimate(0, tokens))
			.isGreaterThan(Duration.ofMillis(1_500).toNanos());
		long start = System.nanoTime();
		Result hopeless = postBody(longBody, "1500").block(Duration.ofSeconds(10));
		long tookMs = (System.nanoTime() - start) / 1_000_000;
		assertThat(hopeless.status()).isEqualTo(503);
		assertThat(hopeless.body()).startsWith("{\"error\":{")
			.contains("\"code\":\"queue_wait_exceeded\"")
			.contains("would need about");
		// Answered when its instance had room for it, before its wait bound (750 ms).
		assertThat(tookMs).isLessThan(750);
		assertThat(queues.hopelessShed()).isEqualTo(shed + 1);
		assertThat(meter("dualmap.queue.hopeless")).isEqualTo(counted + 1);
		assertThat(waiting.block(Duration.ofSeconds(10)).status()).isEqualTo(200);
		assertServed(held);
		// The three that held the slots and the one that waited; never the long one.
		assertThat(queues.releases()).isEqualTo(releases + 4);
	}

}

package io.github.dualmap.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dualmap.core.AttentionTtftModel;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.NanoClock;
import io.github.dualmap.core.PrefillWork;
import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.core.TtftModel;
import io.github.dualmap.gateway.DispatchRejectedException;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.EngineScraping;
import io.github.dualmap.gateway.RoutedAttempt;
import io.github.dualmap.gateway.ServicePool;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.http.HttpStatus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The {@code dualmap.*} meters without Spring: tags, SLO outcomes of streamed requests,
 * queue meters, removal of a departed instance's meters, and no prompt-derived tag
 * values.
 */
class DualMapMetersTests {

	private final AtomicLong now = new AtomicLong(1_000_000_000L);

	private final NanoClock clock = this.now::get;

	private final DualMapRegistry registry = DualMapRegistry.builder().services("llm").clock(this.clock).build();

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final PrefixHasher hasher = PrefixHasher.ofDefaults();

	private final ServicePool pool = this.registry.service("llm");

	private int ids;

	private static ServiceInstance instance(String id) {
		return new DefaultServiceInstance(id, "llm", "10.0.0." + id.charAt(id.length() - 1), 8000, false, Map.of());
	}

	/**
	 * Places one request through the pool's dispatch queues and waits for its release.
	 */
	private RoutedAttempt submit(PromptBlocks blocks, Duration slo, boolean streaming) {
		RoutedAttempt attempt = this.pool
			.submit(new RoutingRequest("r" + this.ids++, blocks, slo.toNanos(), this.now.get()), streaming)
			.block(Duration.ofSeconds(5));
		assertThat(attempt).isNotNull();
		return attempt;
	}

	/**
	 * Routes one streaming request, lets its first byte arrive after {@code ttft} and
	 * ends it.
	 */
	private RoutedAttempt serve(PromptBlocks blocks, Duration ttft, Duration slo) {
		RoutedAttempt attempt = submit(blocks, slo, true);
		this.now.addAndGet(ttft.toNanos());
		attempt.firstByte(true);
		attempt.complete(HttpStatus.OK);
		return attempt;
	}

	private double ttftEstimate(String instanceId) {
		return this.meters.get("dualmap.instance.ttft.estimate")
			.tags("pool", "llm", "instance.id", instanceId)
			.gauge()
			.value();
	}

	@Test
	void eachInstancesFittedTtftModelShowsInItsEstimateOfAReferencePrompt() {
		new DualMapMeters(this.registry).bindTo(this.meters);
		this.pool.updateMembership(List.of(instance("i1"), instance("i2"), instance("i3")));
		assertThat(this.meters.get("dualmap.instance.ttft.estimate")
			.tags("pool", "llm", "instance.id", "i1")
			.gauge()
			.getId()
			.getBaseUnit()).isEqualTo("seconds");
		// Before any first token every fit is its priors, which do not know the reference
		// prompt's cost: unknown, not a number an alert could compare.
		assertThat(ttftEstimate("i1")).isNaN();
		assertThat(ttftEstimate("i2")).isNaN();
		PrefillWork reference = PrefillWork.of(0, InstanceState.REFERENCE_PROMPT_TOKENS);
		AttentionTtftModel i1 = this.pool.instancePool().instance("i1").ttftModel();
		AttentionTtftModel i2 = this.pool.instancePool().instance("i2").ttftModel();
		assertThat(i1).isNotNull();
		assertThat(i2).isNotNull();
		long prior = i1.estimate(PrefillWork.NONE, reference);
		// i1 and i2 answer such prompts as their priors expect: now they know it.
		for (int i = 0; i < 100; i++) {
			i1.observe(PrefillWork.NONE, reference, prior);
			i2.observe(PrefillWork.NONE, reference, prior);
		}
		assertThat(ttftEstimate("i1")).isCloseTo(prior / 1e9, within(prior / 1e9 / 100));
		assertThat(ttftEstimate("i2")).isEqualTo(ttftEstimate("i1"));
		assertThat(ttftEstimate("i3")).isNaN();
		// i1's engine then answers three times slower: its own fit, and so its estimate,
		// follow; i2's stays.
		for (int i = 0; i < 400; i++) {
			i1.observe(PrefillWork.NONE, reference, 3 * prior);
		}
		assertThat(ttftEstimate("i1")).isGreaterThan(2 * prior / 1e9).isLessThanOrEqualTo(3 * prior / 1e9 * 1.01);
		assertThat(ttftEstimate("i2")).isCloseTo(prior / 1e9, within(prior / 1e9 / 100));
		assertThat(ttftEstimate("i3")).isNaN();

		// The pool-wide linear model fits no instance: unknown.
		DualMapRegistry linear = DualMapRegistry.builder()
			.services("llm")
			.settings(SchedulerSettings.custom().ttftModel(TtftModel.LINEAR).build())
			.clock(this.clock)
			.build();
		SimpleMeterRegistry linearMeters = new SimpleMeterRegistry();
		new DualMapMeters(linear).bindTo(linearMeters);
		linear.service("llm").updateMembership(List.of(instance("i1")));
		assertThat(linearMeters.get("dualmap.instance.ttft.estimate")
			.tags("pool", "llm", "instance.id", "i1")
			.gauge()
			.value()).isNaN();
	}

	@Test
	void decisionsTtftAndSloAreRecordedWithServiceInstanceReasonAndPolicyTags() {
		new DualMapMeters(this.registry).bindTo(this.meters);
		this.pool.updateMembership(List.of(instance("i1"), instance("i2"), instance("i3")));
		PromptBlocks blocks = this.hasher.ofText("m", "system prompt ".repeat(100));
		RoutedAttempt first = serve(blocks, Duration.ofMillis(200), Duration.ofSeconds(5));
		serve(blocks, Duration.ofMillis(300), Duration.ofSeconds(5));
		serve(blocks, Duration.ofSeconds(2), Duration.ofSeconds(1));
		String home = first.instanceId();

		assertThat(this.meters.get("dualmap.decisions")
			.tags("pool", "llm", "instance.id", home, "reason", "affinity", "policy", "dualmap")
			.counter()
			.count()).isEqualTo(3);
		assertThat(this.meters.get("dualmap.ttft").tags("pool", "llm", "instance.id", home).timer().count())
			.isEqualTo(3);
		// The pool's policy keeps no prefix directory.
		assertThat(this.meters.get("dualmap.directory.blocks").tags("pool", "llm").gauge().value()).isZero();
		assertThat(this.meters.get("dualmap.slo")
			.tags("pool", "llm", "class", "default", "outcome", "within")
			.counter()
			.count()).isEqualTo(2);
		assertThat(this.meters.get("dualmap.slo")
			.tags("pool", "llm", "class", "default", "outcome", "over")
			.counter()
			.count()).isEqualTo(1);
		// A request of another class counts under its class.
		RoutedAttempt batch = submit(blocks, Duration.ofSeconds(60), true);
		batch.sloClass("batch");
		this.now.addAndGet(Duration.ofSeconds(10).toNanos());
		batch.firstByte(true);
		batch.complete(HttpStatus.OK);
		assertThat(this.meters.get("dualmap.slo")
			.tags("pool", "llm", "class", "batch", "outcome", "within")
			.counter()
			.count()).isEqualTo(1);
		assertThat(this.meters.find("dualmap.slo").tags("class", "batch", "outcome", "over").counters()).isEmpty();
		assertThat(this.meters.get("dualmap.ring.rebuilds").tags("pool", "llm").functionCounter().count()).isEqualTo(1);
		assertThat(this.meters.get("dualmap.instances").tags("pool", "llm").gauge().value()).isEqualTo(3);
		assertThat(this.meters.get("dualmap.inflight").tags("pool", "llm", "instance.id", home).gauge().value())
			.isZero();
		assertThat(this.meters.get("dualmap.pending.tokens").tags("pool", "llm", "instance.id", home).gauge().value())
			.isZero();
		// The second and third requests found the first one's prefix in the shadow index.
		assertThat(
				this.meters.get("dualmap.estimated.hit.rate").tags("pool", "llm", "instance.id", home).gauge().value())
			.isGreaterThan(0.5);
		assertThat(this.meters.get("dualmap.engine.prefix.hit.rate")
			.tags("pool", "llm", "instance.id", home)
			.gauge()
			.value()).isNaN();
		assertThat(this.meters.get("dualmap.engine.backlog.tokens")
			.tags("pool", "llm", "instance.id", home)
			.gauge()
			.value()).as("never scraped: unknown").isNaN();
		assertThat(this.meters.get("dualmap.engine.foreign.requests")
			.tags("pool", "llm", "instance.id", home)
			.gauge()
			.value()).as("never scraped: unknown").isNaN();
	}

	@Test
	void everySloClassHasBothOutcomesBeforeItsFirstRequest() {
		// A class whose every request misses must show 0 % attainment, not no data: the
		// ratio's numerator needs a "within" series that exists before the first hit.
		new DualMapMeters(this.registry, List.of("interactive", "batch")).bindTo(this.meters);
		for (String sloClass : List.of("default", "header", "interactive", "batch")) {
			for (String outcome : List.of("within", "over")) {
				assertThat(this.meters.find("dualmap.slo")
					.tags("pool", "llm", "class", sloClass, "outcome", outcome)
					.counter()).as(sloClass + " " + outcome).isNotNull();
			}
		}
		assertThat(this.meters.find("dualmap.slo").counters()).hasSize(8);
	}

	@Test
	void theTtftCountsTheTimeTheRequestSpentInTheGateway() {
		new DualMapMeters(this.registry).bindTo(this.meters);
		this.pool.updateMembership(List.of(instance("i1"), instance("i2"), instance("i3")));
		// Read 3 s ago (it waited in the queues since), first byte 1 s after its release:
		// the client saw 4 s, over its 3.5 s objective, though the engine took only 1 s.
		RoutedAttempt attempt = this.pool
			.submit(new RoutingRequest("r" + this.ids++, this.hasher.ofText("m", "waited ".repeat(100)),
					Duration.ofMillis(3500).toNanos(), this.now.get() - Duration.ofSeconds(3).toNanos()), true)
			.block(Duration.ofSeconds(5));
		assertThat(attempt).isNotNull();
		assertThat(attempt.queuedNanos()).isEqualTo(Duration.ofSeconds(3).toNanos());
		this.now.addAndGet(Duration.ofSeconds(1).toNanos());
		attempt.firstByte(true);
		attempt.complete(HttpStatus.OK);
		assertThat(this.meters.get("dualmap.ttft")
			.tags("pool", "llm", "instance.id", attempt.instanceId())
			.timer()
			.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(4000.0);
		assertThat(this.meters.get("dualmap.slo").tags("outcome", "over").counter().count()).isEqualTo(1);
		assertThat(this.meters.get("dualmap.slo").tags("outcome", "within").counter().count()).isZero();
	}

	@Test
	void eachInstanceSaysWhetherItMayGetRequestsAndWhetherItIsDrained() {
		new DualMapMeters(this.registry).bindTo(this.meters);
		this.pool.updateMembership(List.of(instance("i1"), instance("i2")));
		assertThat(healthy("i1")).isEqualTo(1);
		this.pool.breakers().breaker("i1").transitionToOpenState();
		assertThat(healthy("i1")).isZero();
		this.pool.breakers().breaker("i1").transitionToHalfOpenState();
		this.pool.breakers().markUnresponsive("i1");
		assertThat(healthy("i1")).isZero();
		this.pool.breakers().markResponsive("i1");
		assertThat(healthy("i1")).isEqualTo(1);
		assertThat(this.meters.get("dualmap.instance.draining").tags("instance.id", "i2").gauge().value()).isZero();
		this.pool.drain("i2");
		assertThat(this.meters.get("dualmap.instance.draining").tags("instance.id", "i2").gauge().value()).isEqualTo(1);
		assertThat(healthy("i2")).isEqualTo(1);
	}

	private double healthy(String instance) {
		return this.meters.get("dualmap.instance.healthy").tags("pool", "llm", "instance.id", instance).gauge().value();
	}

	@Test
	void theFirstByteOfANonStreamingResponseIsNoTtftAndCountsForNoSlo() {
		new DualMapMeters(this.registry).bindTo(this.meters);
		this.pool.updateMembership(List.of(instance("i1"), instance("i2"), instance("i3")));
		RoutedAttempt attempt = submit(this.hasher.ofText("m", "whole answer ".repeat(100)), Duration.ofSeconds(5),
				false);
		// The first byte of a non-streaming response comes when generation ended.
		this.now.addAndGet(Duration.ofSeconds(8).toNanos());
		attempt.firstByte(true);
		attempt.complete(HttpStatus.OK);
		assertThat(this.meters.get("dualmap.decisions")
			.tags("pool", "llm", "instance.id", attempt.instanceId())
			.counter()
			.count()).isEqualTo(1);
		assertThat(this.meters.find("dualmap.ttft").timers()).isEmpty();
		assertThat(this.meters.get("dualmap.slo").tags("outcome", "over").counter().count()).isZero();
		assertThat(this.meters.get("dualmap.slo").tags("outcome", "within").counter().count()).isZero();
	}

	@Test
	void queueDepthReleasesReroutesAndRejectionsFollowTheDispatchQueues() {
		DualMapRegistry registry = DualMapRegistry.builder()
			.services("llm")
			.queueSettings(QueueSettings.custom().maxPrefillRequests(1).maxQueuedPerPool(2).build())
			.clock(this.clock)
			.build();
		ServicePool pool = registry.service("llm");
		new DualMapMeters(registry).bindTo(this.meters);
		pool.updateMembership(List.of(instance("i1"), instance("i2"), instance("i3")));
		PromptBlocks blocks = this.hasher.ofText("m", "one tenant ".repeat(100));
		RoutedAttempt first = pool.submit(request(blocks), true).block(Duration.ofSeconds(5));
		String home = first.instanceId();
		Disposable second = pool.submit(request(blocks), true).subscribe();
		Disposable third = pool.submit(request(blocks), true).subscribe();
		assertThat(this.meters.get("dualmap.queue.depth").tags("instance.id", home).gauge().value()).isEqualTo(2);
		// Sent at once: no wait.
		assertThat(this.meters.get("dualmap.queue.wait").tags("instance.id", home).timer().max(TimeUnit.MILLISECONDS))
			.isZero();
		assertThatThrownBy(() -> pool.submit(request(blocks), true).block(Duration.ofSeconds(5)))
			.isInstanceOf(DispatchRejectedException.class);
		assertThat(this.meters.get("dualmap.rejections").tags("pool", "llm", "status", "429").functionCounter().count())
			.isEqualTo(1);
		assertThat(this.meters.get("dualmap.rejections").tags("pool", "llm", "status", "503").functionCounter().count())
			.isZero();
		assertThat(this.meters.get("dualmap.queue.releases").tags("pool", "llm").functionCounter().count())
			.isEqualTo(1);

		// Draining the home moves both queued requests to other instances at once, after
		// 1.5 s in the queue.
		this.now.addAndGet(Duration.ofMillis(1_500).toNanos());
		pool.drain(home);
		assertThat(this.meters.get("dualmap.queue.depth").tags("instance.id", home).gauge().value()).isZero();
		assertThat(this.meters.get("dualmap.reroutes").tags("pool", "llm").functionCounter().count()).isEqualTo(2);
		// Each moved request is released where it went, or waits there behind the other.
		double stillQueued = this.meters.find("dualmap.queue.depth")
			.gauges()
			.stream()
			.mapToDouble(io.micrometer.core.instrument.Gauge::value)
			.sum();
		assertThat(this.meters.get("dualmap.queue.releases").tags("pool", "llm").functionCounter().count())
			.isEqualTo(3 - stillQueued);
		assertThat(this.meters.get("dualmap.migrations").tags("pool", "llm").functionCounter().count()).isZero();
		assertThat(this.meters.find("dualmap.queue.wait").timers().stream().mapToLong(t -> t.count()).sum())
			.as("one per release")
			.isEqualTo(3 - (long) stillQueued);
		assertThat(this.meters.find("dualmap.queue.wait")
			.timers()
			.stream()
			.filter(t -> !home.equals(t.getId().getTag("instance.id")))
			.mapToDouble(t -> t.max(TimeUnit.MILLISECONDS))
			.max()
			.orElse(0)).isEqualTo(1_500);

		// The depth gauge leaves with its instance.
		List<ServiceInstance> rest = new ArrayList<>();
		for (String id : List.of("i1", "i2", "i3")) {
			if (!id.equals(home)) {
				rest.add(instance(id));
			}
		}
		pool.updateMembership(rest);
		assertThat(this.meters.find("dualmap.queue.depth").tag("instance.id", home).gauges()).isEmpty();
		assertThat(this.meters.find("dualmap.queue.depth").gauges()).hasSize(2);
		second.dispose();
		third.dispose();
		first.complete(HttpStatus.OK);
	}

	private RoutingRequest request(PromptBlocks blocks) {
		return new RoutingRequest("q" + this.ids++, blocks, Duration.ofSeconds(5).toNanos(), this.now.get());
	}

	@Test
	void inFlightAndLoadSpreadFollowOpenRequests() {
		new DualMapMeters(this.registry).bindTo(this.meters);
		this.pool.updateMembership(List.of(instance("i1"), instance("i2"), instance("i3")));
		RoutedAttempt open = submit(this.hasher.ofText("m", "held ".repeat(200)), Duration.ofSeconds(5), true);
		assertThat(this.meters.get("dualmap.inflight")
			.tags("pool", "llm", "instance.id", open.instanceId())
			.gauge()
			.value()).isEqualTo(1);
		assertThat(this.meters.get("dualmap.pending.tokens")
			.tags("pool", "llm", "instance.id", open.instanceId())
			.gauge()
			.value()).isPositive();
		// One busy instance of three: mean 1/3, standard deviation sqrt(2)/3.
		assertThat(this.meters.get("dualmap.load.cv").tags("pool", "llm").gauge().value()).isCloseTo(Math.sqrt(2),
				org.assertj.core.data.Offset.offset(1e-9));
		open.complete(HttpStatus.OK);
		assertThat(this.meters.get("dualmap.load.cv").tags("pool", "llm").gauge().value()).isZero();
	}

	@Test
	void metersOfAnInstanceThatLeavesAreRemovedAndThoseOfANewOneAdded() {
		new DualMapMeters(this.registry).bindTo(this.meters);
		this.pool.updateMembership(List.of(instance("i1"), instance("i2"), instance("i3")));
		for (int i = 0; i < 30; i++) {
			serve(this.hasher.ofText("m", "tenant " + i + " ".repeat(300)), Duration.ofMillis(50),
					Duration.ofSeconds(5));
		}
		assertThat(instanceTagValues()).containsExactlyInAnyOrder("i1", "i2", "i3");
		assertThat(this.meters.find("dualmap.decisions").tag("instance.id", "i3").counters()).isNotEmpty();

		this.pool.updateMembership(List.of(instance("i1"), instance("i2"), instance("i4")));

		assertThat(instanceTagValues()).containsExactlyInAnyOrder("i1", "i2", "i4");
		for (String name : DualMapMeters.INSTANCE_METERS) {
			assertThat(this.meters.find(name).tag("instance.id", "i4").meters()).as(name + " of the new instance")
				.hasSize(name.equals("dualmap.decisions") || name.equals("dualmap.ttft")
						|| name.equals("dualmap.queue.wait") ? 0 : 1);
		}
		assertThat(this.meters.get("dualmap.ring.rebuilds").functionCounter().count()).isEqualTo(2);
		// Service-level meters stay: both outcomes of default and header.
		assertThat(this.meters.find("dualmap.slo").counters()).hasSize(4);
		assertThat(this.meters.find("dualmap.load.cv").gauges()).hasSize(1);

		// An instance that comes back records into new meters, not the removed ones.
		this.pool.updateMembership(List.of(instance("i3")));
		for (int i = 0; i < 3; i++) {
			serve(this.hasher.ofText("m", "tenant " + i + " ".repeat(300)), Duration.ofMillis(50),
					Duration.ofSeconds(5));
		}
		assertThat(this.meters.find("dualmap.decisions").tag("instance.id", "i3").counters()).singleElement()
			.satisfies(c -> assertThat(c.count()).isEqualTo(3));
		assertThat(this.meters.get("dualmap.ttft").tags("instance.id", "i3").timer().count()).isEqualTo(3);
	}

	@Test
	void scrapeFailuresAreCountedPerInstance() {
		new DualMapMeters(this.registry).bindTo(this.meters);
		this.pool.updateMembership(List.of(instance("i1"), instance("i2"), instance("i3")));
		EngineScraping scraping = new EngineScraping(this.registry, listener -> {
			throw new IllegalStateException("not started in this test");
		}, service -> "/metrics", "dualmap.metrics-path");
		scraping.onFailure("llm", "i2", new java.net.ConnectException("refused"));
		scraping.onFailure("llm", "i2", new java.net.ConnectException("refused"));
		assertThat(this.meters.get("dualmap.scrape.errors")
			.tags("pool", "llm", "instance.id", "i2")
			.functionCounter()
			.count()).isEqualTo(2);
		assertThat(this.meters.get("dualmap.scrape.errors")
			.tags("pool", "llm", "instance.id", "i1")
			.functionCounter()
			.count()).isZero();
	}

	@Test
	void instancesKnownBeforeBindingGetMetersToo() {
		this.pool.updateMembership(List.of(instance("i1"), instance("i2")));
		new DualMapMeters(this.registry).bindTo(this.meters);
		assertThat(instanceTagValues()).containsExactlyInAnyOrder("i1", "i2");
	}

	@Test
	void noTagValueIsPromptTextOrAPrefixHash() {
		new DualMapMeters(this.registry).bindTo(this.meters);
		this.pool.updateMembership(List.of(instance("i1"), instance("i2"), instance("i3")));
		List<String> prompts = new ArrayList<>();
		List<PromptBlocks> chains = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			String prompt = "shared system prompt for everyone " + (i % 3) + " question " + i;
			prompts.add(prompt);
			PromptBlocks blocks = this.hasher.ofText("m", prompt.repeat(20));
			chains.add(blocks);
			serve(blocks, Duration.ofMillis(10), Duration.ofSeconds(5));
		}
		List<String> forbidden = new ArrayList<>(prompts);
		for (PromptBlocks b : chains) {
			for (long hash : b.chain()) {
				forbidden.add(Long.toString(hash));
				forbidden.add(Long.toUnsignedString(hash));
				forbidden.add(HexFormat.of().toHexDigits(hash));
				forbidden.add(Long.toHexString(hash));
			}
		}
		// The latency histograms' bucket bounds ("le", in seconds) are configuration.
		List<String> tagValues = this.meters.getMeters()
			.stream()
			.flatMap(m -> m.getId().getTags().stream())
			.filter(t -> !t.getKey().equals("le") || !DualMapMeters.DEFAULT_LATENCY_BUCKETS.stream()
				.map(d -> d.toNanos() / 1e9)
				.toList()
				.contains(Double.parseDouble(t.getValue())))
			.map(Tag::getValue)
			.toList();
		assertThat(tagValues).isNotEmpty();
		assertThat(tagValues).allSatisfy(v -> {
			assertThat(v).isIn("llm", "i1", "i2", "i3", "affinity", "slo-switch", "hotspot", "fallback", "third-choice",
					"load", "dualmap", "within", "over", "429", "503", "default", "header", "connect", "status",
					"unresponsive");
			assertThat(forbidden).doesNotContain(v);
		});
	}

	private Set<String> instanceTagValues() {
		return this.meters.getMeters()
			.stream()
			.map(Meter::getId)
			.map(id -> id.getTag("instance.id"))
			.filter(java.util.Objects::nonNull)
			.collect(java.util.stream.Collectors.toSet());
	}

}

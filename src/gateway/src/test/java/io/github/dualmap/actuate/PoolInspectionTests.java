package io.github.dualmap.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dualmap.core.AttentionTtftModel;
import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.NanoClock;
import io.github.dualmap.core.PrefillWork;
import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.core.TtftModel;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.InstanceBreakers;
import io.github.dualmap.gateway.ServicePool;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.http.HttpStatus;

import static org.assertj.core.api.Assertions.assertThat;

/** The actuator view of one instance, on a clock the test controls. */
class PoolInspectionTests {

	private final AtomicLong now = new AtomicLong(1_000_000_000L);

	private final NanoClock clock = this.now::get;

	private final DualMapRegistry registry = DualMapRegistry.builder().services("llm").clock(this.clock).build();

	private final ServicePool service = this.registry.service("llm");

	@Test
	void theWarningsNameWhyAnInstanceGetsNoNewRequests() {
		List<ServiceInstance> members = new ArrayList<>();
		for (String id : List.of("open", "silent", "probing", "drained")) {
			members.add(new DefaultServiceInstance(id, "llm", "10.0.0." + (members.size() + 1), 8000, false, Map.of()));
		}
		this.service.updateMembership(members);
		InstanceBreakers breakers = this.service.breakers();
		breakers.breaker("open").transitionToOpenState();
		// Taken out as unresponsive, its breaker closed.
		breakers.markUnresponsive("silent");
		// Half open with every probe permit out: the next choice of it was refused.
		CircuitBreaker probing = breakers.breaker("probing");
		probing.transitionToOpenState();
		probing.transitionToHalfOpenState();
		while (probing.tryAcquirePermission()) {
			// take every permit
		}
		breakers.refused("probing");
		this.service.drain("drained");

		List<String> warnings = PoolInspection.inspect(this.service).warnings();
		assertThat(warnings).noneMatch(w -> w.contains("CLOSED"));
		assertThat(warning(warnings, "'open'")).contains("circuit breaker is open");
		assertThat(warning(warnings, "'silent'")).contains("has not answered")
			.contains("dualmap.scrape.unresponsive-after")
			.doesNotContain("breaker");
		assertThat(warning(warnings, "'probing'")).contains("half open").contains("probe");
		assertThat(warnings).noneMatch(w -> w.contains("'drained'"));
		assertThat(warning(warnings, "no instance accepting")).contains("1 circuit breaker open")
			.contains("1 unresponsive")
			.contains("1 circuit breaker half open with every probe out")
			.contains("1 draining");
	}

	@Test
	void eachInstanceShowsWhatItsOwnTtftFitExpectsOfAColdReferencePrompt() {
		this.service.updateMembership(List.of(new DefaultServiceInstance("a", "llm", "10.0.0.1", 8000, false, Map.of()),
				new DefaultServiceInstance("b", "llm", "10.0.0.2", 8000, false, Map.of())));
		InstanceState a = this.service.instancePool().instance("a");
		InstanceState b = this.service.instancePool().instance("b");
		PrefillWork reference = PrefillWork.of(0, InstanceState.REFERENCE_PROMPT_TOKENS);
		long prior = a.ttftModel().estimate(PrefillWork.NONE, reference);
		// Both at their priors: unknown.
		assertThat(PoolInspection.inspect(this.service).instances())
			.allSatisfy(i -> assertThat(i.ttftEstimateMs()).isNull());
		// b answers such prompts as expected, a three times slower.
		for (int i = 0; i < 400; i++) {
			a.ttftModel().observe(PrefillWork.NONE, reference, 3 * prior);
			b.ttftModel().observe(PrefillWork.NONE, reference, prior);
		}
		Map<String, Long> shown = new HashMap<>();
		for (DualMapDescriptor.Instance i : PoolInspection.inspect(this.service).instances()) {
			shown.put(i.id(), i.ttftEstimateMs());
		}
		assertThat(shown.get("b")).isEqualTo(DualMapDescriptor.millis(prior));
		assertThat(shown.get("a")).isGreaterThan(2 * shown.get("b"));

		// c has seen only short prompts, whose first tokens come after up to 30 ms of
		// other
		// work (decode steps) besides their prefill, as a lightly loaded engine's do: the
		// reference prompt's cost would be an extrapolation its fit cannot vouch for,
		// however many it has seen.
		this.service.updateMembership(List.of(new DefaultServiceInstance("a", "llm", "10.0.0.1", 8000, false, Map.of()),
				new DefaultServiceInstance("b", "llm", "10.0.0.2", 8000, false, Map.of()),
				new DefaultServiceInstance("c", "llm", "10.0.0.3", 8000, false, Map.of())));
		AttentionTtftModel c = this.service.instancePool().instance("c").ttftModel();
		Random random = new Random(1);
		for (int i = 0; i < 2_000; i++) {
			PrefillWork shortPrompt = PrefillWork.of(random.nextInt(300), 30 + random.nextInt(300));
			long firstToken = Math
				.round(7e6 + 20_000.0 * shortPrompt.tokens() + 30e6 * random.nextDouble() * random.nextDouble());
			c.observe(PrefillWork.NONE, shortPrompt, firstToken);
		}
		assertThat(PoolInspection.inspect(this.service).instances()).filteredOn(i -> i.id().equals("c"))
			.singleElement()
			.satisfies(i -> assertThat(i.ttftEstimateMs()).isNull());

		// The pool-wide linear model fits no instance of its own.
		ServicePool linear = DualMapRegistry.builder()
			.services("llm")
			.settings(SchedulerSettings.custom().ttftModel(TtftModel.LINEAR).build())
			.clock(this.clock)
			.build()
			.service("llm");
		linear.updateMembership(List.of(new DefaultServiceInstance("a", "llm", "10.0.0.1", 8000, false, Map.of())));
		assertThat(PoolInspection.inspect(linear).instances().get(0).ttftEstimateMs()).isNull();
	}

	private static String warning(List<String> warnings, String about) {
		List<String> matching = warnings.stream().filter(w -> w.contains(about)).toList();
		assertThat(matching).as(about + " in " + warnings).hasSize(1);
		return matching.get(0);
	}

	@Test
	void aPoolKeptThroughEmptyDiscoveryListsSaysSo() {
		this.service.emptyListGrace(Duration.ofSeconds(60));
		this.service
			.updateMembership(List.of(new DefaultServiceInstance("i1", "llm", "10.0.0.1", 8000, false, Map.of()),
					new DefaultServiceInstance("i2", "llm", "10.0.0.2", 8000, false, Map.of())));
		assertThat(PoolInspection.inspect(this.service).warnings()).noneMatch(w -> w.contains("discovery"));
		this.service.updateMembership(List.of());
		this.now.addAndGet(Duration.ofSeconds(12).toNanos());
		assertThat(warning(PoolInspection.inspect(this.service).warnings(), "listed no instance")).contains("12 s")
			.contains("2 known instances")
			.contains("dualmap.discovery.empty-list-grace");
		this.service
			.updateMembership(List.of(new DefaultServiceInstance("i1", "llm", "10.0.0.1", 8000, false, Map.of())));
		assertThat(PoolInspection.inspect(this.service).warnings()).noneMatch(w -> w.contains("listed no instance"));
	}

	@Test
	void theAgeOfEngineStateIsNeverNegative() {
		this.service
			.updateMembership(List.of(new DefaultServiceInstance("i1", "llm", "10.0.0.1", 8000, false, Map.of())));
		InstanceState s = this.service.instancePool().instance("i1");
		// Scraped 3 ms ago, then a scrape that lands while the view is being built: its
		// time is after the view's clock reading.
		s.updateEngine(new EngineSnapshot(this.now.get() - 3_000_000, 0, 1, 0.25, 100, 40, 0));
		assertThat(PoolInspection.instance(this.service, s).engine().ageMs()).isEqualTo(3);
		s.updateEngine(new EngineSnapshot(this.now.get() + 4_000_000, 0, 1, 0.25, 100, 40, 0));
		assertThat(PoolInspection.instance(this.service, s).engine().ageMs()).isZero();
	}

	@Test
	void theEnginesEstimatedBacklogIsShownWhileItsScrapeIsFresh() {
		this.service
			.updateMembership(List.of(new DefaultServiceInstance("i1", "llm", "10.0.0.1", 8000, false, Map.of())));
		InstanceState s = this.service.instancePool().instance("i1");
		s.updateEngine(new EngineSnapshot(this.now.get(), 0, 1, 0.25, 1_000, 400, 0));
		assertThat(PoolInspection.instance(this.service, s).engine().backlogTokens()).as("a first snapshot: a baseline")
			.isZero();
		// Another router's prompt admitted since: 50,400 tokens queried, 400 of them
		// hits.
		s.updateEngine(new EngineSnapshot(this.now.get(), 0, 1, 0.25, 51_400, 800, 0));
		assertThat(PoolInspection.instance(this.service, s).engine().backlogTokens()).isEqualTo(50_000);
		this.now.addAndGet(Duration.ofMillis(100).toNanos());
		assertThat(PoolInspection.instance(this.service, s).engine().backlogTokens()).as("drained as prefill runs")
			.isBetween(1L, 49_999L);
		this.now.addAndGet(Duration.ofSeconds(3).toNanos());
		DualMapDescriptor.Engine stale = PoolInspection.instance(this.service, s).engine();
		assertThat(stale.stale()).isTrue();
		assertThat(stale.backlogTokens()).as("stale: unknown").isNull();

		ServicePool off = DualMapRegistry.builder()
			.services("llm")
			.settings(SchedulerSettings.custom().engineBacklog(false).build())
			.clock(this.clock)
			.build()
			.service("llm");
		off.updateMembership(List.of(new DefaultServiceInstance("i1", "llm", "10.0.0.1", 8000, false, Map.of())));
		InstanceState o = off.instancePool().instance("i1");
		o.updateEngine(new EngineSnapshot(this.now.get(), 0, 1, 0.25, 1_000, 400, 0));
		o.updateEngine(new EngineSnapshot(this.now.get(), 0, 1, 0.25, 51_400, 800, 0));
		assertThat(PoolInspection.instance(off, o).engine().backlogTokens()).as("not estimated").isNull();
	}

	@Test
	void theEnginesRequestsBeyondThisGatewaysAreShownAsForeign() {
		this.service
			.updateMembership(List.of(new DefaultServiceInstance("i1", "llm", "10.0.0.1", 8000, false, Map.of())));
		InstanceState s = this.service.instancePool().instance("i1");
		// This gateway has nothing in flight there; the engine runs 3 and queues 2.
		s.updateEngine(new EngineSnapshot(this.now.get(), 2, 3, 0.25, 0, 0, 0));
		assertThat(PoolInspection.instance(this.service, s).engine().foreignRequests()).isEqualTo(5);
		s.updateEngine(new EngineSnapshot(this.now.get(), 0, 0, 0.25, 0, 0, 0));
		assertThat(PoolInspection.instance(this.service, s).engine().foreignRequests()).isZero();
		s.updateEngine(new EngineSnapshot(this.now.get(), -1, -1, 0.25, 0, 0, 0));
		assertThat(PoolInspection.instance(this.service, s).engine().foreignRequests())
			.as("an engine that reports no counts: unknown")
			.isNull();
	}

	@Test
	void theDirectoryIsShownOnlyForAPoolThatKeepsOne() {
		List<ServiceInstance> members = List.of(
				new DefaultServiceInstance("a", "llm", "10.0.0.1", 8000, false, Map.of()),
				new DefaultServiceInstance("b", "llm", "10.0.0.2", 8000, false, Map.of()));
		this.service.updateMembership(members);
		assertThat(PoolInspection.inspect(this.service).directory()).isNull();
		ServicePool directory = DualMapRegistry.builder()
			.services("llm")
			.policy("dualmap-directory")
			.clock(this.clock)
			.build()
			.service("llm");
		directory.updateMembership(members);
		DualMapDescriptor.Directory empty = PoolInspection.inspect(directory).directory();
		assertThat(empty.blocks()).isZero();
		int perInstance = directory.instancePool().instances().get(0).shadow().capacityBlocks();
		assertThat(empty.capacityBlocks()).isEqualTo(2 * perInstance);
		RoutingRequest r = new RoutingRequest("r", PrefixHasher.ofDefaults().ofText("m", "hello ".repeat(200)),
				Duration.ofSeconds(5).toNanos(), this.now.get());
		directory.submit(r, false).block(Duration.ofSeconds(5)).complete(HttpStatus.OK);
		assertThat(PoolInspection.inspect(directory).directory().blocks()).isEqualTo(r.blocks().chain().length);
	}

}

package io.github.dualmap.gateway;

import java.net.ConnectException;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.stats.ScrapeAnsweredException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.http.HttpStatus;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An instance that stops answering (scrapes time out, no response byte comes) is taken
 * out after {@code dualmap.scrape.unresponsive-after} and put back by its first answer,
 * with its breaker still having its say; on a clock the test moves.
 */
class UnresponsiveInstanceTests {

	private static final Duration SILENCE = Duration.ofSeconds(10);

	private final AtomicLong now = new AtomicLong(1_000_000_000L);

	/** Run once at the next reading of the clock: another thread acting mid-check. */
	private final AtomicReference<Runnable> atNextReading = new AtomicReference<>();

	private final DualMapRegistry registry = DualMapRegistry.builder().services("llm").clock(() -> {
		Runnable action = this.atNextReading.getAndSet(null);
		if (action != null) {
			action.run();
		}
		return this.now.get();
	}).build();

	private final ServicePool service = this.registry.service("llm");

	private final EngineScraping scraping = new EngineScraping(this.registry, listener -> {
		throw new IllegalStateException("not started in this test");
	}, service -> "/metrics", "dualmap.metrics-path", SILENCE);

	private int ids;

	UnresponsiveInstanceTests() {
		this.service.updateMembership(members("a", "b", "c"));
	}

	private static List<ServiceInstance> members(String... ids) {
		List<ServiceInstance> members = new ArrayList<>();
		for (String id : ids) {
			members.add(
					new DefaultServiceInstance(id, "llm", "10.0.0." + (id.charAt(0) - 'a' + 1), 8000, false, Map.of()));
		}
		return members;
	}

	private void advance(Duration d) {
		this.now.addAndGet(d.toNanos());
	}

	private void timeout(String id) {
		this.scraping.onFailure("llm", id, new HttpTimeoutException("scrape took longer than 400 ms"));
	}

	private boolean accepts(String id) {
		return this.service.instancePool().instance(id).acceptsNewWork();
	}

	/** Where {@code n} requests with distinct prompts go. */
	private Set<String> route(int n) {
		Set<String> to = new HashSet<>();
		for (int i = 0; i < n; i++) {
			RoutedAttempt a = this.service
				.submit(new RoutingRequest("r" + this.ids++,
						PrefixHasher.ofDefaults().ofText("m", "prompt " + this.ids + " ".repeat(300)),
						Duration.ofSeconds(5).toNanos(), this.now.get()), true)
				.block(Duration.ofSeconds(5));
			to.add(a.instanceId());
			a.firstByte(true);
			a.complete(HttpStatus.OK);
		}
		return to;
	}

	@Test
	void silenceTakesAnInstanceOutAndAnyAnswerPutsItBack() {
		timeout("a");
		advance(Duration.ofSeconds(9));
		timeout("a");
		assertThat(accepts("a")).isTrue();
		advance(Duration.ofSeconds(2));
		timeout("a");
		assertThat(accepts("a")).isFalse();
		assertThat(this.service.breakers().responsive("a")).isFalse();
		assertThat(route(30)).doesNotContain("a").contains("b", "c");
		// A refused connection is no answer either; the others stay in.
		this.scraping.onFailure("llm", "a", new ConnectException("refused"));
		assertThat(accepts("a")).isFalse();
		assertThat(accepts("b")).isTrue();
		// An error status is an answer: the server is alive.
		this.scraping.onFailure("llm", "a", new ScrapeAnsweredException("metrics endpoint answered HTTP 500"));
		assertThat(accepts("a")).isTrue();
		assertThat(route(30)).contains("a");
		// Silent again, then a good scrape.
		advance(Duration.ofSeconds(11));
		timeout("a");
		assertThat(accepts("a")).isFalse();
		this.scraping.onSnapshot("llm", "a", new EngineSnapshot(this.now.get(), 0, 0, 0.1, 0, 0, 0));
		assertThat(accepts("a")).isTrue();
	}

	@Test
	void aResponseByteIsAnAnswerAndSoIsABodyThatDidNotParse() {
		advance(Duration.ofSeconds(11));
		timeout("b");
		assertThat(accepts("b")).isFalse();
		// A request sent before it went silent gets its first byte.
		this.scraping.onFailure("llm", "b", new IllegalArgumentException("not Prometheus text"));
		assertThat(accepts("b")).isTrue();
		advance(Duration.ofSeconds(11));
		timeout("b");
		assertThat(accepts("b")).isFalse();
		// Routed elsewhere, so put a request on b by hand: its first byte is an answer.
		this.service.breakers().markResponsive("b");
		RoutedAttempt onB = null;
		for (int i = 0; i < 200 && onB == null; i++) {
			RoutedAttempt a = this.service
				.submit(new RoutingRequest("s" + i, PrefixHasher.ofDefaults().ofText("m", "other " + i),
						Duration.ofSeconds(5).toNanos(), this.now.get()), true)
				.block(Duration.ofSeconds(5));
			if (a.instanceId().equals("b")) {
				onB = a;
			}
			else {
				a.complete(HttpStatus.OK);
			}
		}
		assertThat(onB).isNotNull();
		this.service.breakers().markUnresponsive("b");
		assertThat(accepts("b")).isFalse();
		onB.firstByte(true);
		onB.complete(HttpStatus.OK);
		assertThat(accepts("b")).isTrue();
	}

	@Test
	void anInstanceLeavingWhileItsSilenceIsCheckedKeepsNoFlagForWhenItComesBack() {
		advance(Duration.ofSeconds(11));
		// Discovery drops it while the scrape's check runs.
		this.atNextReading.set(() -> this.service.updateMembership(members("b", "c")));
		timeout("a");
		assertThat(this.service.breakers().responsive("a")).isTrue();
		// It comes back, and hangs: out after the silence bound, as any instance.
		this.service.updateMembership(members("a", "b", "c"));
		assertThat(accepts("a")).isTrue();
		advance(Duration.ofSeconds(11));
		timeout("a");
		assertThat(accepts("a")).isFalse();
	}

	@Test
	void anAnswerArrivingWhileItsSilenceIsCheckedIsNotLost() {
		advance(Duration.ofSeconds(11));
		this.atNextReading.set(() -> this.service.heard("a"));
		timeout("a");
		assertThat(accepts("a")).isTrue();
		assertThat(this.service.breakers().responsive("a")).isTrue();
	}

	@Test
	void theBreakerAndResponsivenessBothHaveToLetRequestsThrough() {
		advance(Duration.ofSeconds(11));
		timeout("c");
		assertThat(accepts("c")).isFalse();
		// Its breaker opens and closes meanwhile: still out, as nothing came from it.
		this.service.breakers().breaker("c").transitionToOpenState();
		this.service.breakers().breaker("c").transitionToClosedState();
		assertThat(accepts("c")).isFalse();
		// It answers, after failed scrapes, while its breaker is open: back, and its
		// breaker lets probes through at once.
		CircuitBreaker breaker = this.service.breakers().breaker("c");
		breaker.transitionToOpenState();
		this.scraping.onSnapshot("llm", "c", new EngineSnapshot(this.now.get(), 0, 0, 0.1, 0, 0, 0));
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
		assertThat(accepts("c")).isTrue();
		// A breaker that opens while scrapes keep answering keeps its wait: out until the
		// breaker lets calls through.
		breaker.transitionToOpenState();
		this.scraping.onSnapshot("llm", "c", new EngineSnapshot(this.now.get(), 0, 0, 0.1, 0, 0, 0));
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(accepts("c")).isFalse();
		breaker.transitionToHalfOpenState();
		assertThat(accepts("c")).isTrue();
	}

	@Test
	void aScrapeAnsweringAfterFailuresMovesAnOpenBreakerToHalfOpen() {
		CircuitBreaker breaker = this.service.breakers().breaker("a");
		breaker.transitionToOpenState();
		this.scraping.onFailure("llm", "a", new ConnectException("Connection refused"));
		assertThat(accepts("a")).isFalse();
		// A failed scrape that answered (an engine still starting) does not count as
		// back.
		this.scraping.onFailure("llm", "a", new ScrapeAnsweredException("503 Service Unavailable"));
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
		this.scraping.onSnapshot("llm", "a", new EngineSnapshot(this.now.get(), 0, 0, 0.1, 0, 0, 0));
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
		assertThat(accepts("a")).isTrue();
		// Instances whose breakers are closed are left alone.
		this.scraping.onFailure("llm", "b", new ConnectException("Connection refused"));
		this.scraping.onSnapshot("llm", "b", new EngineSnapshot(this.now.get(), 0, 0, 0.1, 0, 0, 0));
		assertThat(this.service.breakers().breaker("b").getState()).isEqualTo(CircuitBreaker.State.CLOSED);
	}

	/**
	 * A half-open breaker whose probes hold every permit refuses the next release: the
	 * instance then takes no work until its breaker moves, where before idle pulls and
	 * rebalancing kept choosing it (it looked idle), each choice refused, until clients
	 * got 503 "no instance accepts requests" beside healthy instances.
	 */
	@Test
	void anInstanceWhoseHalfOpenBreakerHasNoPermitLeftTakesNoWorkUntilItsBreakerMoves() {
		CircuitBreaker breaker = this.service.breakers().breaker("a");
		breaker.transitionToOpenState();
		breaker.transitionToHalfOpenState();
		while (breaker.tryAcquirePermission()) {
			// Probes in flight take every permit.
		}
		assertThat(accepts("a")).isTrue();
		RoutedAttempt attempt = this.service
			.submit(new RoutingRequest("p", PrefixHasher.ofDefaults().ofText("m", "pinned"),
					Duration.ofSeconds(5).toNanos(), this.now.get())
				.placed(Set.of(), "a", false), true)
			.block(Duration.ofSeconds(5));
		assertThat(attempt.instanceId()).isNotEqualTo("a");
		assertThat(accepts("a")).isFalse();
		assertThat(route(30)).doesNotContain("a");
		// Its probes end and the breaker closes (or opens and half-opens again): it is
		// back.
		breaker.transitionToClosedState();
		assertThat(accepts("a")).isTrue();
	}

	/**
	 * Probes whose clients leave give their permits back without moving the breaker: the
	 * instance is chosen again (it stayed out for good before: nothing chose it, so
	 * nothing asked its breaker again).
	 */
	@Test
	void aHalfOpenInstanceWhoseProbesAreCancelledIsChosenAgain() {
		CircuitBreaker breaker = this.service.breakers().breaker("a");
		breaker.transitionToOpenState();
		breaker.transitionToHalfOpenState();
		List<RoutedAttempt> probes = new ArrayList<>();
		for (int i = 0; i < 11; i++) {
			RoutedAttempt p = this.service
				.submit(new RoutingRequest("probe" + i, PrefixHasher.ofDefaults().ofText("m", "pinned" + i),
						Duration.ofSeconds(5).toNanos(), this.now.get())
					.placed(Set.of(), "a", false), true)
				.block(Duration.ofSeconds(5));
			if (p.instanceId().equals("a")) {
				probes.add(p);
			}
			else {
				p.complete(HttpStatus.OK);
			}
		}
		assertThat(accepts("a")).isFalse();
		probes.forEach(RoutedAttempt::cancel);
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
		assertThat(accepts("a")).isTrue();
		assertThat(route(50)).contains("a");
	}

	@Test
	void anInstanceThatNeverAnsweredIsOutAfterTheSilenceSinceItJoinedAndZeroTurnsItOff() {
		advance(Duration.ofSeconds(5));
		timeout("a");
		assertThat(accepts("a")).isTrue();
		advance(Duration.ofSeconds(5));
		timeout("a");
		assertThat(accepts("a")).isFalse();
		EngineScraping off = new EngineScraping(this.registry, listener -> {
			throw new IllegalStateException("not started in this test");
		}, service -> "/metrics", "dualmap.metrics-path", Duration.ZERO);
		advance(Duration.ofMinutes(5));
		off.onFailure("llm", "b", new HttpTimeoutException("scrape took longer than 400 ms"));
		assertThat(accepts("b")).isTrue();
	}

}

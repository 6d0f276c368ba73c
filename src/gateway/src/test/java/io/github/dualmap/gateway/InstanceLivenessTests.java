package io.github.dualmap.gateway;

import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.Reason;
import io.github.dualmap.core.RingMember;
import io.github.dualmap.core.RoutingPolicies;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.junit.jupiter.api.Test;
import reactor.core.Scannable;
import reactor.core.publisher.Sinks;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An instance's liveness against {@link InstanceLiveness} alone, on a clock the test
 * moves: when silence takes an instance out as unresponsive (counted from its last
 * answer, or its joining), what that changes (it takes no new work; the tries waiting on
 * its answer are abandoned), how its first answer puts it back, and how its state follows
 * the membership.
 */
class InstanceLivenessTests {

	private static final long SILENCE = Duration.ofSeconds(10).toNanos();

	private static final Throwable WHY = new ConnectException("refused");

	private final AtomicLong now = new AtomicLong(1_000_000_000L);

	private final InstancePool pool = new InstancePool("llm", SchedulerSettings.ofDefaults(), this.now::get);

	private final InstanceBreakers breakers = new InstanceBreakers(this.pool, CircuitBreakerConfig.ofDefaults());

	private final Object membershipLock = new Object();

	private final InstanceLiveness liveness = new InstanceLiveness("llm", this.pool, this.breakers,
			this.membershipLock);

	/** Only what a try's end reports to: the pool, breakers and policy above. */
	private final ServicePool service = new ServicePool("llm", this.pool,
			RoutingPolicies.create("dualmap", SchedulerSettings.ofDefaults()), QueueSettings.ofDefaults(),
			this.breakers, "dualmap.weight", List.of());

	private int requests;

	InstanceLivenessTests() {
		members("a", "b");
	}

	private void members(String... ids) {
		this.pool.updateMembership(List.of(ids).stream().map(id -> new RingMember(id, 1)).toList());
		this.breakers.retain(List.of(ids));
		this.liveness.retain(List.of(ids));
	}

	private void later(Duration d) {
		this.now.addAndGet(d.toNanos());
	}

	private boolean takesWork(String id) {
		return this.breakers.responsive(id) && this.pool.instance(id).acceptsNewWork();
	}

	@Test
	void aSilentInstanceIsTakenOutOnceSilentForTheWholeBoundCountedFromItsJoining() {
		later(Duration.ofSeconds(9));
		this.liveness.unanswered("a", SILENCE, WHY);
		assertThat(takesWork("a")).isTrue();
		later(Duration.ofSeconds(1));
		this.liveness.unanswered("a", SILENCE, WHY);
		assertThat(this.breakers.responsive("a")).isFalse();
		assertThat(this.pool.instance("a").healthy()).isFalse();
		assertThat(this.pool.instance("a").acceptsNewWork()).isFalse();
		// Its breaker did not open: the flag is the liveness's own.
		assertThat(this.breakers.breaker("a").getState()).isEqualTo(CircuitBreaker.State.CLOSED);
		assertThat(takesWork("b")).isTrue();
	}

	@Test
	void anAnswerRestartsTheSilence() {
		later(Duration.ofSeconds(8));
		this.liveness.heard("a");
		later(Duration.ofSeconds(8));
		this.liveness.unanswered("a", SILENCE, WHY);
		assertThat(takesWork("a")).isTrue();
		later(Duration.ofSeconds(2));
		this.liveness.unanswered("a", SILENCE, WHY);
		assertThat(takesWork("a")).isFalse();
	}

	@Test
	void theFirstAnswerOfAnUnresponsiveInstancePutsItBack() {
		later(Duration.ofSeconds(10));
		this.liveness.unanswered("a", SILENCE, WHY);
		assertThat(takesWork("a")).isFalse();
		this.liveness.heard("a");
		assertThat(takesWork("a")).isTrue();
		assertThat(this.pool.instance("a").healthy()).isTrue();
		// And its silence counts from that answer.
		later(Duration.ofSeconds(9));
		this.liveness.unanswered("a", SILENCE, WHY);
		assertThat(takesWork("a")).isTrue();
	}

	@Test
	void aStayingMemberKeepsItsSilenceAndAJoiningOneCountsAsHeardWhenItJoins() {
		later(Duration.ofSeconds(10));
		members("a", "b", "c");
		this.liveness.unanswered("a", SILENCE, WHY);
		this.liveness.unanswered("c", SILENCE, WHY);
		assertThat(takesWork("a")).isFalse();
		assertThat(takesWork("c")).isTrue();
	}

	@Test
	void aNonMemberIsNeverTakenOutNorHeard() {
		members("a");
		later(Duration.ofMinutes(1));
		// Not noted: no silence starts with an answer from an instance that is away.
		this.liveness.heard("b");
		later(Duration.ofSeconds(10));
		this.liveness.unanswered("b", SILENCE, WHY);
		assertThat(this.breakers.responsive("b")).isTrue();
		// Back as a member, its silence counts from its joining.
		members("a", "b");
		later(Duration.ofSeconds(9));
		this.liveness.unanswered("b", SILENCE, WHY);
		assertThat(takesWork("b")).isTrue();
	}

	@Test
	void theTriesWaitingOnAnInstanceTakenOutAreAbandonedAndNoOthers() {
		Sinks.Empty<Void> waitingOnA = Sinks.empty();
		RoutedAttempt onA = sent("a", waitingOnA);
		Sinks.Empty<Void> answeredByA = Sinks.empty();
		RoutedAttempt answered = sent("a", answeredByA);
		answered.answered();
		Sinks.Empty<Void> waitingOnB = Sinks.empty();
		RoutedAttempt onB = sent("b", waitingOnB);
		assertThat(this.liveness.triesInFlight()).isEqualTo(3);
		assertThat(this.pool.instance("a").inFlight()).isEqualTo(2);

		later(Duration.ofSeconds(10));
		this.liveness.unanswered("a", SILENCE, WHY);
		assertThat(waitingOnA.scan(Scannable.Attr.TERMINATED)).isTrue();
		assertThat(onA.isEnded()).isTrue();
		assertThat(this.breakers.breaker("a").getMetrics().getNumberOfFailedCalls()).isOne();
		assertThat(this.pool.instance("a").inFlight()).isOne();
		assertThat(answered.isEnded()).isFalse();
		assertThat(answeredByA.scan(Scannable.Attr.TERMINATED)).isFalse();
		assertThat(onB.isEnded()).isFalse();
		assertThat(waitingOnB.scan(Scannable.Attr.TERMINATED)).isFalse();

		// Tries leave the set when they end.
		this.liveness.ended(onA);
		answered.complete(null);
		this.liveness.ended(answered);
		assertThat(this.liveness.triesInFlight()).isOne();
		onB.complete(null);
		this.liveness.ended(onB);
		assertThat(this.liveness.triesInFlight()).isZero();
	}

	@Test
	void anInstanceAlreadyOutAbandonsNothingMore() {
		later(Duration.ofSeconds(10));
		this.liveness.unanswered("a", SILENCE, WHY);
		// A try sent to it anyway (in flight as it was taken out, say) is left to its
		// own timeouts by later silent scrapes.
		Sinks.Empty<Void> waiting = Sinks.empty();
		RoutedAttempt late = sent("a", waiting);
		later(Duration.ofSeconds(10));
		this.liveness.unanswered("a", SILENCE, WHY);
		assertThat(late.isEnded()).isFalse();
		late.cancel();
	}

	@Test
	void scrapeFailuresAreCountedForMembersOnlyAndStartFromZeroWhenAnInstanceRejoins() {
		this.liveness.countScrapeFailure("a");
		this.liveness.countScrapeFailure("a");
		this.liveness.countScrapeFailure("b");
		this.liveness.countScrapeFailure("x");
		assertThat(this.liveness.scrapeFailures()).containsOnlyKeys("a", "b");
		assertThat(this.liveness.scrapeFailures("a")).isEqualTo(2);
		assertThat(this.liveness.scrapeFailures("x")).isZero();

		members("a");
		assertThat(this.liveness.scrapeFailures()).containsOnlyKeys("a");
		this.liveness.countScrapeFailure("b");
		assertThat(this.liveness.scrapeFailures("b")).isZero();
		members("a", "b");
		assertThat(this.liveness.scrapeFailures("b")).isZero();
		assertThat(this.liveness.scrapeFailures("a")).isEqualTo(2);
	}

	/**
	 * A try sent to {@code instanceId}, waiting on its answer with {@code abandonment}
	 * told if the gateway gives up on it.
	 */
	private RoutedAttempt sent(String instanceId, Sinks.Empty<Void> abandonment) {
		RoutingRequest request = new RoutingRequest("r" + this.requests++, null, Duration.ofSeconds(5).toNanos(),
				this.now.get());
		Decision decision = Decision.of(instanceId, Reason.FALLBACK, request);
		CircuitBreaker breaker = this.breakers.breaker(instanceId);
		assertThat(breaker.tryAcquirePermission()).isTrue();
		RoutedAttempt attempt = new RoutedAttempt(this.service, request, decision,
				this.pool.dispatch(request, decision), breaker, null, null);
		attempt.whenAbandoned(abandonment);
		this.liveness.sent(attempt);
		return attempt;
	}

}

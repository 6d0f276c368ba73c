package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.Rejection;
import io.github.dualmap.core.RoutingPolicies;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.MonoSink;
import reactor.util.context.Context;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.http.HttpStatus;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive bridge against {@link Submission} alone: each is driven with a sink the
 * test holds (in place of the one {@code Mono.create} makes), over a service built by
 * hand on a clock the test moves. What reaches the sink, exactly once (the attempt on
 * release, a {@link DispatchRejectedException} with its status and code on rejection,
 * nothing once the subscriber cancelled), where a refused release goes, and that a cancel
 * at any point leaves no count behind in the queues, the instance or the tries in flight.
 */
class SubmissionTests {

	private final AtomicLong now = new AtomicLong(1_000_000_000L);

	private final InstancePool pool = new InstancePool("llm", SchedulerSettings.ofDefaults(), this.now::get);

	private final PrefixHasher hasher = PrefixHasher.ofDefaults();

	private final List<String> events = new ArrayList<>();

	private Runnable onDecision = () -> {
	};

	private final DualMapListener listener = new DualMapListener() {
		@Override
		public void onDecision(String service, RoutingRequest request, Decision decision) {
			SubmissionTests.this.events.add("decision " + request.id() + " " + decision.instanceId());
			SubmissionTests.this.onDecision.run();
		}

		@Override
		public void onFinished(String service, String instanceId, Outcome outcome) {
			SubmissionTests.this.events.add("finished " + instanceId + " " + outcome);
		}
	};

	private int requests;

	private ServicePool service(QueueSettings queues, CircuitBreakerConfig breakers, String... instances) {
		ServicePool service = new ServicePool("llm", this.pool,
				RoutingPolicies.create("dualmap", SchedulerSettings.ofDefaults()), queues,
				new InstanceBreakers(this.pool, breakers), "dualmap.weight", List.of(this.listener));
		List<ServiceInstance> list = new ArrayList<>();
		for (int i = 0; i < instances.length; i++) {
			list.add(new DefaultServiceInstance(instances[i], "llm", "10.0.0." + (i + 1), 8000, false, Map.of()));
		}
		service.updateMembership(list);
		return service;
	}

	private ServicePool service(QueueSettings queues, String... instances) {
		return service(queues, CircuitBreakerConfig.ofDefaults(), instances);
	}

	/** One request in prefill per instance: a second one waits in the queue. */
	private static QueueSettings oneInPrefill() {
		return QueueSettings.custom().maxPrefillRequests(1).idlePull(false).build();
	}

	/**
	 * A request of the same prompt as the others, whose objective lies far beyond the
	 * waits here: only the queues' {@code maxWait} bounds its wait.
	 */
	private RoutingRequest request() {
		return new RoutingRequest("r" + this.requests++,
				this.hasher.ofText("m", "The same system prompt for every request. ".repeat(40) + " question"),
				Duration.ofMinutes(10).toNanos(), this.now.get());
	}

	private static QueueSettings oneInPrefillWaitingUpTo30s() {
		return QueueSettings.custom().maxPrefillRequests(1).idlePull(false).maxWait(Duration.ofSeconds(30)).build();
	}

	private Sink submit(ServicePool service, RoutingRequest request) {
		return submit(service, request, new Sink(false), Long.MAX_VALUE);
	}

	private static Sink submit(ServicePool service, RoutingRequest request, Sink sink, long waitingSince) {
		new Submission(service, sink, request, true, waitingSince).start();
		return sink;
	}

	/**
	 * The sink failed once, with {@code status} and {@code code}, and got nothing else.
	 */
	private static void assertRejected(Sink sink, int status, String code) {
		assertThat(sink.successes).isEmpty();
		assertThat(sink.errors).singleElement().isInstanceOfSatisfying(DispatchRejectedException.class, ex -> {
			assertThat(ex.rejection().status()).isEqualTo(status);
			assertThat(ex.code()).isEqualTo(code);
		});
	}

	/** What the instance and the service still count of requests not ended. */
	private static void assertNothingLeftOn(ServicePool service, String instanceId) {
		InstanceState s = service.instancePool().instance(instanceId);
		assertThat(s.inFlight()).as("in flight").isZero();
		assertThat(s.prefillRequests()).as("in prefill").isZero();
		assertThat(s.queuedRequests()).as("queued").isZero();
		assertThat(s.queuedTokens()).as("queued tokens").isZero();
		assertThat(service.queues().queued()).as("queued in the service").isZero();
		assertThat(service.triesInFlight()).as("tries in flight").isZero();
		assertThat(service.isIdle(instanceId)).isTrue();
	}

	@Test
	void aRequestAnInstanceHasRoomForIsHandedToTheSinkOnceAsItsAttempt() {
		ServicePool service = service(QueueSettings.ofDefaults(), "a");
		Sink sink = submit(service, request());
		assertThat(sink.successes).hasSize(1);
		assertThat(sink.errors).isEmpty();
		RoutedAttempt attempt = sink.successes.get(0);
		assertThat(attempt.instanceId()).isEqualTo("a");
		assertThat(attempt.serviceInstance()).isSameAs(service.serviceInstance("a"));
		assertThat(this.events).containsExactly("decision r0 a");
		assertThat(service.triesInFlight()).isOne();
		attempt.complete(HttpStatus.OK);
		assertThat(this.events).containsExactly("decision r0 a", "finished a SUCCESS");
		assertNothingLeftOn(service, "a");
	}

	@Test
	void aQueuedRequestReachesTheSinkOnlyWhenItIsReleased() {
		ServicePool service = service(oneInPrefill(), "a");
		RoutedAttempt first = submit(service, request()).successes.get(0);
		Sink second = submit(service, request());
		assertThat(second.successes).isEmpty();
		assertThat(second.errors).isEmpty();
		assertThat(service.queues().queued("a")).isOne();
		first.firstByte(true);
		assertThat(second.successes).hasSize(1);
		assertThat(second.errors).isEmpty();
		second.successes.get(0).complete(HttpStatus.OK);
		first.complete(HttpStatus.OK);
		assertNothingLeftOn(service, "a");
	}

	@Test
	void aFullQueueFailsTheSinkOnceWith429QueueFullAndIsCounted() {
		ServicePool service = service(QueueSettings.custom().maxPrefillRequests(1).maxQueuedPerPool(1).build(), "a");
		RoutedAttempt first = submit(service, request()).successes.get(0);
		Sink queued = submit(service, request());
		Sink full = submit(service, request());
		assertThat(full.successes).isEmpty();
		assertRejected(full, Rejection.TOO_MANY_REQUESTS, DispatchRejectedException.QUEUE_FULL);
		assertThat(service.rejections(Rejection.TOO_MANY_REQUESTS)).isOne();
		assertThat(service.rejections(Rejection.SERVICE_UNAVAILABLE)).isZero();
		// A cancel after the rejection adds nothing.
		full.cancel();
		assertThat(full.successes).isEmpty();
		assertThat(full.errors).hasSize(1);
		queued.cancel();
		first.complete(HttpStatus.OK);
		assertNothingLeftOn(service, "a");
	}

	@Test
	void aRequestWaitingPastItsBoundFailsWith503QueueWaitExceededCountingTheWaitItCameWith() {
		ServicePool service = service(oneInPrefillWaitingUpTo30s(), "a");
		RoutedAttempt first = submit(service, request()).successes.get(0);
		// Placed again after 20 s of waiting elsewhere: 11 s more is past the bound.
		Sink waiting = submit(service, request(), new Sink(false), this.now.get() - Duration.ofSeconds(20).toNanos());
		Sink fresh = submit(service, request());
		this.now.addAndGet(Duration.ofSeconds(11).toNanos());
		service.queues().tick(this.now.get());
		assertThat(waiting.successes).isEmpty();
		assertRejected(waiting, Rejection.SERVICE_UNAVAILABLE, DispatchRejectedException.QUEUE_WAIT_EXCEEDED);
		assertThat(fresh.errors).isEmpty();
		assertThat(service.rejections(Rejection.SERVICE_UNAVAILABLE)).isOne();
		fresh.cancel();
		first.complete(HttpStatus.OK);
		assertNothingLeftOn(service, "a");
	}

	@Test
	void aRequestRejectedWhileItsInstanceTakesNoWorkFailsWithNoInstanceAvailable() {
		ServicePool service = service(oneInPrefillWaitingUpTo30s(), "a");
		RoutedAttempt first = submit(service, request()).successes.get(0);
		Sink waiting = submit(service, request());
		assertThat(service.drain("a")).isTrue();
		assertThat(waiting.errors).isEmpty();
		this.now.addAndGet(Duration.ofSeconds(31).toNanos());
		service.queues().tick(this.now.get());
		assertRejected(waiting, Rejection.SERVICE_UNAVAILABLE, DispatchRejectedException.NO_INSTANCE_AVAILABLE);
		assertThat(waiting.successes).isEmpty();
		first.complete(HttpStatus.OK);
		assertNothingLeftOn(service, "a");
	}

	@Test
	void aReleaseItsInstanceBreakerRefusesGivesTheCapacityBackAndIsPlacedAgainElsewhere() {
		CircuitBreakerConfig oneProbe = CircuitBreakerConfig.custom().permittedNumberOfCallsInHalfOpenState(1).build();
		ServicePool service = service(QueueSettings.ofDefaults(), oneProbe, "a", "b");
		CircuitBreaker a = service.breakers().breaker("a");
		a.transitionToOpenState();
		a.transitionToHalfOpenState();
		// Its one probe is out.
		assertThat(a.tryAcquirePermission()).isTrue();
		Sink sink = submit(service, request().placed(Set.of(), "a", false));
		assertThat(sink.errors).isEmpty();
		assertThat(sink.successes).singleElement()
			.satisfies(attempt -> assertThat(attempt.instanceId()).isEqualTo("b"));
		assertThat(this.events).containsExactly("decision r0 b");
		InstanceState onA = service.instancePool().instance("a");
		assertThat(onA.inFlight()).isZero();
		assertThat(onA.prefillRequests()).isZero();
		sink.successes.get(0).complete(HttpStatus.OK);
		assertNothingLeftOn(service, "b");
	}

	@Test
	void aCancelAfterAReleaseRefusedAsItWasPlacedTakesTheRequestPlacedAgainOutOfItsQueue() {
		CircuitBreakerConfig oneProbe = CircuitBreakerConfig.custom().permittedNumberOfCallsInHalfOpenState(1).build();
		ServicePool service = service(oneInPrefill(), oneProbe, "a", "b");
		RoutedAttempt onB = submit(service, request().placed(Set.of(), "b", false)).successes.get(0);
		CircuitBreaker a = service.breakers().breaker("a");
		a.transitionToOpenState();
		a.transitionToHalfOpenState();
		assertThat(a.tryAcquirePermission()).isTrue();
		// Released to a while it is placed, refused by a's breaker, placed again: b has
		// no room, so it waits in b's queue.
		Sink sink = submit(service, request().placed(Set.of(), "a", false));
		assertThat(service.queues().queued()).isOne();
		sink.cancel();
		assertThat(service.queues().queued()).isZero();
		onB.firstByte(true);
		onB.complete(HttpStatus.OK);
		assertThat(sink.successes).isEmpty();
		assertThat(sink.errors).isEmpty();
		assertThat(this.events).containsExactly("decision r0 b", "finished b SUCCESS");
		assertNothingLeftOn(service, "a");
		assertNothingLeftOn(service, "b");
	}

	@Test
	void aCancelWhileQueuedTakesTheRequestOutAndNothingReachesTheSink() {
		ServicePool service = service(oneInPrefill(), "a");
		RoutedAttempt first = submit(service, request()).successes.get(0);
		Sink queued = submit(service, request());
		assertThat(service.instancePool().instance("a").queuedTokens()).isPositive();
		queued.cancel();
		assertThat(service.queues().queued()).isZero();
		assertThat(service.instancePool().instance("a").queuedTokens()).isZero();
		first.firstByte(true);
		assertThat(queued.successes).isEmpty();
		assertThat(queued.errors).isEmpty();
		assertThat(service.queues().releases()).isOne();
		first.complete(HttpStatus.OK);
		assertThat(this.events).containsExactly("decision r0 a", "finished a SUCCESS");
		assertNothingLeftOn(service, "a");
	}

	@Test
	void aCancelAfterTheReleaseEndsTheAttemptOnceAsCancelled() {
		ServicePool service = service(QueueSettings.ofDefaults(), "a");
		Sink sink = submit(service, request());
		RoutedAttempt attempt = sink.successes.get(0);
		sink.cancel();
		assertThat(attempt.isEnded()).isTrue();
		sink.cancel();
		attempt.cancel();
		assertThat(this.events).containsExactly("decision r0 a", "finished a CANCELLED");
		assertThat(sink.successes).hasSize(1);
		assertThat(sink.errors).isEmpty();
		// A cancelled try says nothing of its instance: its breaker counted no call.
		assertThat(service.breakers().breaker("a").getMetrics().getNumberOfBufferedCalls()).isZero();
		assertNothingLeftOn(service, "a");
	}

	@Test
	void aCancelDuringTheReleaseEndsTheAttemptInsteadOfHandingItOver() {
		ServicePool service = service(oneInPrefill(), "a");
		RoutedAttempt first = submit(service, request()).successes.get(0);
		Sink racing = submit(service, request());
		this.onDecision = racing::cancel;
		first.firstByte(true);
		assertThat(racing.successes).isEmpty();
		assertThat(racing.errors).isEmpty();
		assertThat(this.events).containsExactly("decision r0 a", "decision r1 a", "finished a CANCELLED");
		first.complete(HttpStatus.OK);
		assertNothingLeftOn(service, "a");
	}

	@Test
	void aSubscriberCancelledBeforeTheStartLeavesNothingQueuedNorInFlight() {
		ServicePool service = service(oneInPrefill(), "a");
		// Room on a: released as it is placed, and ended at once.
		Sink atOnce = submit(service, request(), new Sink(true), Long.MAX_VALUE);
		assertThat(atOnce.successes).isEmpty();
		assertThat(this.events).containsExactly("decision r0 a", "finished a CANCELLED");
		assertNothingLeftOn(service, "a");
		// No room on a: not left in its queue.
		RoutedAttempt held = submit(service, request()).successes.get(0);
		Sink queued = submit(service, request(), new Sink(true), Long.MAX_VALUE);
		assertThat(service.queues().queued()).isZero();
		held.complete(HttpStatus.OK);
		assertThat(queued.successes).isEmpty();
		assertThat(queued.errors).isEmpty();
		assertNothingLeftOn(service, "a");
	}

	/**
	 * The sink {@code Mono.create} would hand over, reduced to what a test reads: what
	 * reached it, and its subscriber's cancel.
	 */
	private static final class Sink implements MonoSink<RoutedAttempt> {

		final List<RoutedAttempt> successes = new ArrayList<>();

		final List<Throwable> errors = new ArrayList<>();

		private final boolean cancelledAlready;

		private @Nullable Disposable onCancel;

		/**
		 * @param cancelledAlready whether its subscriber cancelled before the submission
		 * started: a cancel hook runs as it is registered, as Reactor's sink runs it
		 */
		Sink(boolean cancelledAlready) {
			this.cancelledAlready = cancelledAlready;
		}

		/** Its subscriber cancels. */
		void cancel() {
			if (this.onCancel != null) {
				this.onCancel.dispose();
			}
		}

		@Override
		public void success() {
			throw new AssertionError("a submission ends with an attempt or an error");
		}

		@Override
		public void success(RoutedAttempt value) {
			this.successes.add(value);
		}

		@Override
		public void error(Throwable e) {
			this.errors.add(e);
		}

		@Override
		public Context currentContext() {
			return Context.empty();
		}

		@Override
		public MonoSink<RoutedAttempt> onRequest(LongConsumer consumer) {
			return this;
		}

		@Override
		public MonoSink<RoutedAttempt> onCancel(Disposable d) {
			this.onCancel = d;
			if (this.cancelledAlready) {
				d.dispose();
			}
			return this;
		}

		@Override
		public MonoSink<RoutedAttempt> onDispose(Disposable d) {
			return this;
		}

	}

}

package io.github.dualmap.gateway;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.RequestTicket;
import io.github.dualmap.core.RoutingRequest;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Sinks;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.http.HttpStatusCode;

/**
 * One try of a request on one instance: its decision, its dispatch handle (and queue
 * handle, when it came through the dispatch queues) and the breaker permission it holds.
 * Every way it can end (complete, fail, cancel) releases the accounting and the
 * permission exactly once, so callers on different paths may all call them.
 */
public final class RoutedAttempt {

	private final ServicePool service;

	private final RoutingRequest request;

	private final Decision decision;

	private final InstancePool.InFlight dispatch;

	private final CircuitBreaker breaker;

	private final @Nullable ServiceInstance instance;

	private final @Nullable RequestTicket queued;

	private final AtomicBoolean ended = new AtomicBoolean();

	private volatile boolean responded;

	/**
	 * Whether the gateway still waits for the instance's answer (its status line), or
	 * stopped waiting: {@link #WAITING}, {@link #ANSWERED} or {@link #ABANDONED}.
	 */
	private final AtomicInteger answer = new AtomicInteger(WAITING);

	private static final int WAITING = 0;

	private static final int ANSWERED = 1;

	private static final int ABANDONED = 2;

	private volatile Sinks.@Nullable Empty<Void> abandonment;

	private volatile String sloClass = SloResolver.DEFAULT_CLASS;

	RoutedAttempt(ServicePool service, RoutingRequest request, Decision decision, InstancePool.InFlight dispatch,
			CircuitBreaker breaker, @Nullable ServiceInstance instance, @Nullable RequestTicket queued) {
		this.service = service;
		this.request = request;
		this.decision = decision;
		this.dispatch = dispatch;
		this.breaker = breaker;
		this.instance = instance;
		this.queued = queued;
	}

	public String serviceId() {
		return this.service.serviceId();
	}

	/**
	 * Time from reading the request to sending it to its instance: the wait in the
	 * dispatch queue, about 0 in pass-through mode (and from its first placement, for a
	 * request retried on another instance).
	 */
	public long queuedNanos() {
		return Math.max(0, this.dispatch.sentAtNanos() - this.request.arrivalNanos());
	}

	/**
	 * Time the request spent in the dispatch queues before this try was sent, the waits
	 * of its earlier tries included (a try placed again continues its wait, see
	 * {@link ServicePool#submit(RoutingRequest, boolean, long)}).
	 */
	public long queueWaitNanos() {
		RequestTicket q = this.queued;
		return q == null ? 0 : Math.max(0, this.dispatch.sentAtNanos() - q.submittedAtNanos());
	}

	public String instanceId() {
		return this.decision.instanceId();
	}

	public Decision decision() {
		return this.decision;
	}

	public RoutingRequest request() {
		return this.request;
	}

	/**
	 * The SLO class the request's objective came from, for listeners; set by the load
	 * balancer before the request is sent ({@value SloResolver#DEFAULT_CLASS} until
	 * then).
	 */
	public void sloClass(String sloClass) {
		this.sloClass = sloClass;
	}

	/** The discovered instance the request is sent to. */
	public @Nullable ServiceInstance serviceInstance() {
		return this.instance;
	}

	/**
	 * The request ended having generated {@code outputTokens}: its tenant's share in the
	 * dispatch queues is corrected from the estimate charged at its release.
	 */
	public void reportOutput(long outputTokens) {
		RequestTicket q = this.queued;
		if (q != null) {
			this.service.queues().reportOutput(q, (int) Math.min(Integer.MAX_VALUE, Math.max(0, outputTokens)));
		}
	}

	public @Nullable RequestTicket queued() {
		return this.queued;
	}

	/**
	 * The first response body byte arrived: prefill is over. For a streaming request this
	 * is its first token: the time since it was sent calibrates the TTFT model (in the
	 * queues), and the time since the gateway read it, its wait here included, is the
	 * TTFT reported to listeners (what the client sees, and what its objective is about).
	 * A non-streaming response's first byte comes only when generation ended, so it only
	 * ends prefill (when the estimate had not already). The first byte of an error answer
	 * ({@code success} false: a 4xx or 5xx status) is no token: it tells that the
	 * instance answered, and nothing about its TTFT; the try's end gives its prefill
	 * capacity back.
	 */
	public void firstByte(boolean success) {
		this.responded = true;
		this.service.heard(instanceId());
		if (!success) {
			return;
		}
		RequestTicket q = this.queued;
		long sinceSent = q != null ? this.service.queues().firstToken(q) : this.dispatch.firstToken();
		if (sinceSent >= 0) {
			long ttft = queuedNanos() + sinceSent;
			for (DualMapListener l : this.service.listeners()) {
				l.onFirstToken(serviceId(), instanceId(), ttft, this.request.sloTtftNanos(), this.sloClass);
			}
		}
	}

	/**
	 * The instance's status line and headers arrived: the gateway no longer waits for its
	 * answer, and the instance is alive.
	 */
	public void answered() {
		if (this.answer.compareAndSet(WAITING, ANSWERED)) {
			this.service.heard(instanceId());
		}
	}

	/**
	 * Who waits for the instance's answer and must be told when the gateway gives up on
	 * it: {@code abandonment} completes then.
	 */
	public void whenAbandoned(Sinks.Empty<Void> abandonment) {
		this.abandonment = abandonment;
	}

	/**
	 * The instance was taken out as unresponsive while this try waited for its answer:
	 * the try fails (its instance's breaker counts it, its capacity is given back) and
	 * whoever waits for the answer is told, to send the request elsewhere.
	 * @return whether the try was abandoned: it was waiting for its answer, and someone
	 * waited with it
	 */
	boolean abandon() {
		Sinks.Empty<Void> waiting = this.abandonment;
		if (waiting == null || this.responded || !this.answer.compareAndSet(WAITING, ABANDONED)) {
			return false;
		}
		fail(new IllegalStateException("instance " + instanceId() + " stopped answering"));
		waiting.tryEmitEmpty();
		return true;
	}

	/**
	 * The instance answered with the stored response {@code responseId} (read from the
	 * answer of a Responses API request); listeners are told.
	 */
	public void responseStored(String responseId) {
		for (DualMapListener l : this.service.listeners()) {
			l.onResponseStored(serviceId(), instanceId(), responseId);
		}
	}

	/** The exchange completed with the backend's {@code status}. */
	public void complete(@Nullable HttpStatusCode status) {
		if (status != null && status.is5xxServerError()) {
			end(DualMapListener.Outcome.FAILURE, new IllegalStateException("backend answered " + status.value()));
		}
		else {
			end(DualMapListener.Outcome.SUCCESS, null);
		}
	}

	/** The try failed (connect error, I/O error, timeout). */
	public void fail(Throwable failure) {
		end(DualMapListener.Outcome.FAILURE, failure);
	}

	/**
	 * The client went away or the request was cancelled. Once the backend had answered,
	 * the instance did its job; before that, the try says nothing about it.
	 */
	public void cancel() {
		end(this.responded ? DualMapListener.Outcome.SUCCESS : DualMapListener.Outcome.CANCELLED, null);
	}

	public boolean isEnded() {
		return this.ended.get();
	}

	private void end(DualMapListener.Outcome outcome, @Nullable Throwable failure) {
		if (!this.ended.compareAndSet(false, true)) {
			return;
		}
		this.service.ended(this);
		long elapsed = this.service.instancePool().now() - this.dispatch.sentAtNanos();
		switch (outcome) {
			case SUCCESS -> this.breaker.onSuccess(elapsed, TimeUnit.NANOSECONDS);
			case FAILURE -> this.breaker.onError(elapsed, TimeUnit.NANOSECONDS,
					failure != null ? failure : new IllegalStateException("request failed"));
			case CANCELLED -> this.breaker.releasePermission();
		}
		this.service.breakers().permitReturned(instanceId());
		RequestTicket q = this.queued;
		if (q != null) {
			// Ends the dispatch, tells the policy and gives the capacity to the next
			// queued request.
			this.service.queues().finish(q);
		}
		else {
			this.dispatch.finish();
			this.service.policy().onFinished(this.request, instanceId(), this.service.instancePool());
		}
		for (DualMapListener l : this.service.listeners()) {
			l.onFinished(serviceId(), instanceId(), outcome);
		}
	}

}

package io.github.dualmap.gateway;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.RoutingRequest;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatusCode;

/**
 * One try of a request on one instance: its decision, its dispatch handle and the breaker
 * permission it holds. Every way it can end (complete, fail, cancel) releases the
 * accounting and the permission exactly once, so callers on different paths may all call
 * them.
 */
public final class RoutedAttempt {

	private final ServicePool service;

	private final RoutingRequest request;

	private final Decision decision;

	private final InstancePool.Dispatch dispatch;

	private final CircuitBreaker breaker;

	private final AtomicBoolean ended = new AtomicBoolean();

	private volatile boolean responded;

	RoutedAttempt(ServicePool service, RoutingRequest request, Decision decision, InstancePool.Dispatch dispatch,
			CircuitBreaker breaker) {
		this.service = service;
		this.request = request;
		this.decision = decision;
		this.dispatch = dispatch;
		this.breaker = breaker;
	}

	public String serviceId() {
		return this.service.serviceId();
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

	/** The first response body byte arrived: prefill is over, TTFT is observed. */
	public void firstByte() {
		this.responded = true;
		long ttft = this.dispatch.firstToken();
		if (ttft >= 0) {
			for (DualMapListener l : this.service.listeners()) {
				l.onFirstToken(serviceId(), instanceId(), ttft, this.request.sloTtftNanos());
			}
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
		long elapsed = this.service.pool().now() - this.dispatch.sentAtNanos();
		switch (outcome) {
			case SUCCESS -> this.breaker.onSuccess(elapsed, TimeUnit.NANOSECONDS);
			case FAILURE -> this.breaker.onError(elapsed, TimeUnit.NANOSECONDS,
					failure != null ? failure : new IllegalStateException("request failed"));
			case CANCELLED -> this.breaker.releasePermission();
		}
		this.dispatch.finish();
		this.service.policy().onFinished(this.request, instanceId(), this.service.pool());
		for (DualMapListener l : this.service.listeners()) {
			l.onFinished(serviceId(), instanceId(), outcome);
		}
	}

}

package io.github.dualmap.gateway;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.DispatchListener;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.RequestTicket;
import io.github.dualmap.core.Rejection;
import io.github.dualmap.core.RoutingRequest;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.MonoSink;

import org.springframework.cloud.client.ServiceInstance;

/**
 * The bridge between the core dispatch queues' callbacks and Reactor for one request of a
 * {@link ServicePool}: completes the load balancer's {@link MonoSink} when the request is
 * released or rejected, places it again when the instance it was released to cannot take
 * it after all (breaker refuses, instance gone), and ends whatever the cancel of the
 * subscription finds.
 */
final class Submission implements DispatchListener {

	private final ServicePool service;

	private final MonoSink<RoutedAttempt> sink;

	private final RoutingRequest request;

	private final boolean streaming;

	private final Set<String> excluded = ConcurrentHashMap.newKeySet();

	private final AtomicReference<@Nullable RequestTicket> current = new AtomicReference<>();

	private final AtomicReference<@Nullable RoutedAttempt> attempt = new AtomicReference<>();

	private volatile boolean cancelled;

	private volatile int refusals;

	// When its first placement entered the queues: a placement after a refusal keeps
	// the wait already spent.
	private volatile long waitingSince = Long.MAX_VALUE;

	Submission(ServicePool service, MonoSink<RoutedAttempt> sink, RoutingRequest request, boolean streaming,
			long waitingSince) {
		this.service = service;
		this.sink = sink;
		this.request = request;
		this.streaming = streaming;
		this.excluded.addAll(request.avoid());
		this.waitingSince = waitingSince;
	}

	void start() {
		this.sink.onCancel(this::cancel);
		place(this.request.retry());
	}

	private void place(boolean repeated) {
		RequestTicket previous = this.current.get();
		// The queues keep it off the instances it failed on while it waits (idle
		// pull, migration, re-placement), not only in this choice.
		RequestTicket q = this.service.queues()
			.submit(this.request.placed(this.excluded, this.request.pinnedInstance(), repeated), this.streaming,
					this.waitingSince, this);
		// A release refused within submit has placed the request again already: that
		// newer ticket is the one a cancel must take out, and it has checked the cancel.
		if (!this.current.compareAndSet(previous, q)) {
			return;
		}
		if (this.cancelled) {
			this.service.queues().cancel(q);
		}
	}

	@Override
	public void released(RequestTicket q, Decision decision, InstancePool.InFlight dispatch) {
		String id = decision.instanceId();
		ServiceInstance instance = this.service.serviceInstance(id);
		CircuitBreaker breaker = instance == null ? null : this.service.breakers().breaker(id);
		boolean eligible = instance != null && !this.excluded.contains(id);
		boolean permitted = eligible && breaker.tryAcquirePermission();
		if (eligible && !permitted) {
			this.service.breakers().refused(id);
		}
		if (!permitted) {
			// Nothing was sent: give the capacity back and place the request anew.
			this.service.queues().finish(q);
			this.excluded.add(id);
			this.refusals++;
			if (this.waitingSince == Long.MAX_VALUE) {
				// Its first placement refused: the wait placed again began with it.
				this.waitingSince = q.submittedAtNanos();
			}
			if (this.cancelled) {
				return;
			}
			if (this.refusals > this.service.instancePool().size() + 1) {
				Rejection none = new Rejection(Rejection.SERVICE_UNAVAILABLE,
						"no instance of '" + this.service.serviceId() + "' accepts requests",
						this.service.queues().settings().unavailableRetryAfterSeconds());
				this.service.counters().countRejection(none);
				this.sink.error(new DispatchRejectedException(none, DispatchRejectedException.NO_INSTANCE_AVAILABLE));
				return;
			}
			place(true);
			return;
		}
		RoutedAttempt routed = new RoutedAttempt(this.service, this.request, decision, dispatch, breaker, instance, q);
		for (DualMapListener l : this.service.listeners()) {
			l.onDecision(this.service.serviceId(), this.request, decision);
		}
		// In the set before anyone can see it (and end it: cancel), or an attempt
		// ended first would stay in the set for ever.
		this.service.liveness().sent(routed);
		this.attempt.set(routed);
		if (this.cancelled) {
			routed.cancel();
			return;
		}
		this.sink.success(routed);
	}

	@Override
	public void rejected(RequestTicket q, Rejection rejection) {
		this.service.counters().countRejection(rejection);
		this.sink.error(new DispatchRejectedException(rejection, rejectionCode(q, rejection)));
	}

	private void cancel() {
		this.cancelled = true;
		RequestTicket q = this.current.get();
		if (q != null) {
			this.service.queues().cancel(q);
		}
		RoutedAttempt routed = this.attempt.get();
		if (routed != null) {
			routed.cancel();
		}
	}

	private String rejectionCode(RequestTicket q, Rejection r) {
		if (r.status() == Rejection.TOO_MANY_REQUESTS) {
			return DispatchRejectedException.QUEUE_FULL;
		}
		String id = q.instanceId();
		InstanceState s = id == null ? null : this.service.instancePool().instance(id);
		return s == null || !s.acceptsNewWork() ? DispatchRejectedException.NO_INSTANCE_AVAILABLE
				: DispatchRejectedException.QUEUE_WAIT_EXCEEDED;
	}

}

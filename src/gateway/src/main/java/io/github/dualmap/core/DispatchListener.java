package io.github.dualmap.core;

import java.util.function.BiConsumer;

/**
 * Receives the single outcome of a request submitted to {@link DispatchQueues}: it is
 * either released to an instance or rejected, exactly once, never both. A request the
 * caller cancels gets neither. Called without any lock held, possibly on the thread of
 * another request's event (a first token that freed capacity) or before
 * {@link DispatchQueues#submit} returns; implementations must be quick and must not
 * block. A {@code Mono.create} sink fits: {@code success} on release, {@code error} on
 * rejection.
 */
public interface DispatchListener {

	/**
	 * The request was sent to {@code dispatch.instance()}; report its first token and its
	 * end through {@link DispatchQueues#firstToken} and {@link DispatchQueues#finish}.
	 */
	void released(RequestTicket request, Decision decision, InstancePool.InFlight dispatch);

	/** The request will not be sent anywhere. */
	void rejected(RequestTicket request, Rejection rejection);

	/** A listener from two lambdas. */
	static DispatchListener of(BiConsumer<RequestTicket, InstancePool.InFlight> onReleased,
			BiConsumer<RequestTicket, Rejection> onRejected) {
		return new DispatchListener() {
			@Override
			public void released(RequestTicket request, Decision decision, InstancePool.InFlight dispatch) {
				onReleased.accept(request, dispatch);
			}

			@Override
			public void rejected(RequestTicket request, Rejection rejection) {
				onRejected.accept(request, rejection);
			}
		};
	}

}

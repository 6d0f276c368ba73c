package io.github.dualmap.gateway;

import java.util.List;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.RoutingRequest;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Hook for meters and diagnostics: called on the request path, so implementations must be
 * quick and must not throw. Register through {@link DualMapRegistry#addListener}.
 */
public interface DualMapListener {

	/** A request of {@code service} was dispatched as {@code decision} says. */
	default void onDecision(String service, RoutingRequest request, Decision decision) {
	}

	/** The first response byte of a request on {@code instanceId} came back. */
	default void onFirstToken(String service, String instanceId, long ttftNanos) {
	}

	/**
	 * The first response byte of a request on {@code instanceId} came back, with the
	 * request's TTFT objective (for SLO attainment). The default forwards to
	 * {@link #onFirstToken(String, String, long)}, so listeners written against that one
	 * see every first token.
	 */
	default void onFirstToken(String service, String instanceId, long ttftNanos, long sloTtftNanos) {
		onFirstToken(service, instanceId, ttftNanos);
	}

	/**
	 * The first response byte of a request on {@code instanceId} came back, with the
	 * request's TTFT objective and the SLO class it came from (a configured class,
	 * {@value SloResolver#DEFAULT_CLASS} or {@value SloResolver#HEADER_CLASS}). The
	 * default forwards to {@link #onFirstToken(String, String, long, long)}.
	 */
	default void onFirstToken(String service, String instanceId, long ttftNanos, long sloTtftNanos, String sloClass) {
		onFirstToken(service, instanceId, ttftNanos, sloTtftNanos);
	}

	/** A request on {@code instanceId} ended with {@code outcome}. */
	default void onFinished(String service, String instanceId, Outcome outcome) {
	}

	/**
	 * {@code instanceId} answered a Responses API request with the response
	 * {@code responseId}, which it may keep (vLLM's and SGLang's stored responses) for
	 * requests that continue it.
	 */
	default void onResponseStored(String service, String instanceId, String responseId) {
	}

	/** The instances of {@code service} changed (discovery). */
	default void onMembershipChanged(String service, List<ServiceInstance> instances) {
	}

	/**
	 * Scraping {@code instanceId} failed; its engine view is unknown until the next
	 * success.
	 */
	default void onScrapeFailure(String service, String instanceId, Throwable failure) {
	}

	/** How a request ended, as far as the instance's health is concerned. */
	enum Outcome {

		/** A response below 500 came back. */
		SUCCESS,
		/** Connect error, I/O error or a 5xx from the backend. */
		FAILURE,
		/**
		 * The client went away or the request was cancelled; says nothing about the
		 * instance.
		 */
		CANCELLED

	}

}

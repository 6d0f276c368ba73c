package io.github.dualmap.gateway;

import java.net.ConnectException;
import java.util.Collection;
import java.util.Set;

import io.github.dualmap.core.Reason;
import io.github.dualmap.core.Rejection;
import io.github.dualmap.prompt.OpenAiError;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.cloud.gateway.support.NotFoundException;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.server.ServerWebExchange;

/**
 * Retries a request once on another instance when connecting to the chosen one failed, or
 * when it answered one of the configured statuses ({@code dualmap.retry.statuses}: 429
 * and 503 by default, an engine refusing work) before any response body byte: that
 * instance is excluded for this request, the exchange's routing attributes are reset the
 * way the gateway's retry filter does, and the chain runs again, so the load balancer
 * submits the request anew (to the dispatch queues in queue mode). It also turns a
 * rejection by the dispatch queues into an OpenAI-style 429 or 503 with
 * {@code Retry-After}, "no instance" into a 503 and a second connect failure into a 502.
 * It is the outermost place where the load balancer's error signal arrives while the
 * response can still be written: Spring's load-balancer filter only passes the error of
 * {@code choose} on.
 */
public class ConnectFailoverFilter implements GlobalFilter, Ordered {

	/**
	 * After the body filter, before {@code RouteToRequestUrlFilter} (10000): the retry
	 * re-runs that filter, which restores the {@code lb://} URL the load balancer needs.
	 */
	public static final int ORDER = ReactiveLoadBalancerClientFilter.LOAD_BALANCER_CLIENT_FILTER_ORDER - 300;

	private static final Log LOG = LogFactory.getLog(ConnectFailoverFilter.class);

	private final DualMapRegistry registry;

	private final Set<Integer> retryStatuses;

	/**
	 * @param retryStatuses the backend's response statuses that, before any body byte,
	 * send the request once more to another instance
	 */
	public ConnectFailoverFilter(DualMapRegistry registry, Collection<Integer> retryStatuses) {
		this.registry = registry;
		this.retryStatuses = Set.copyOf(retryStatuses);
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		ServicePool service = this.registry.serviceOf(exchange);
		if (service == null) {
			return chain.filter(exchange);
		}
		return attempt(exchange, chain, service, true)
			.onErrorResume(DispatchRejectedException.class, ex -> rejected(exchange, ex))
			.onErrorResume(NotFoundException.class,
					ex -> rejected(exchange,
							new DispatchRejectedException(
									new Rejection(Rejection.SERVICE_UNAVAILABLE,
											"no instance of '" + service.serviceId() + "' is available",
											service.queues().settings().unavailableRetryAfterSeconds()),
									DispatchRejectedException.NO_INSTANCE_AVAILABLE)));
	}

	private static Mono<Void> rejected(ServerWebExchange exchange, DispatchRejectedException ex) {
		HttpStatus status = ex.rejection().status() == HttpStatus.TOO_MANY_REQUESTS.value()
				? HttpStatus.TOO_MANY_REQUESTS : HttpStatus.SERVICE_UNAVAILABLE;
		return OpenAiErrorResponses.write(exchange, status, ex.toOpenAiError(), ex.rejection().retryAfterSeconds());
	}

	private Mono<Void> attempt(ServerWebExchange exchange, GatewayFilterChain chain, ServicePool service,
			boolean mayRetry) {
		// Completes when the instance is taken out as unresponsive before it answered
		// (RoutedAttempt.abandon): waiting on must not last until the response timeout.
		Sinks.Empty<Void> abandonment = Sinks.empty();
		DualMapExchange state = DualMapExchange.of(exchange);
		state.abandonment(abandonment);
		Mono<Void> sent = Mono.firstWithSignal(chain.filter(exchange).doOnSuccess(done -> {
			RoutedAttempt answered = state.attempt();
			if (answered != null) {
				answered.answered();
			}
		}), abandonment.asMono().then(Mono.error(InstanceStoppedAnswering::new)));
		if (mayRetry && !this.retryStatuses.isEmpty()) {
			sent = sent.then(Mono.defer(() -> retryOnStatus(exchange, chain, service)));
		}
		return sent.onErrorResume(ex -> isConnectFailure(ex) || ex instanceof InstanceStoppedAnswering, ex -> {
			RoutedAttempt failed = state.attempt();
			if (failed == null || exchange.getResponse().isCommitted()) {
				return Mono.error(ex);
			}
			// (An abandoned try has failed already.)
			failed.fail(ex);
			boolean stopped = ex instanceof InstanceStoppedAnswering;
			// A request pinned to a stored response is not sent elsewhere when its
			// instance hangs: no other instance holds what it continues.
			boolean retry = mayRetry && !(stopped && failed.decision().reason() == Reason.PINNED);
			state.clearAttempt();
			state.excludedInstances().add(failed.instanceId());
			if (LOG.isDebugEnabled()) {
				LOG.debug("Request " + state.requestId() + ": " + (stopped
						? "instance '" + failed.instanceId() + "' of '" + failed.serviceId() + "' stopped answering"
						: "could not connect to instance '" + failed.instanceId() + "' of '" + failed.serviceId() + "'")
						+ (retry ? ", sending it to another" : stopped ? ", answering 504" : ", answering 502"));
			}
			if (retry) {
				service.countRetry(stopped ? RetryCause.UNRESPONSIVE : RetryCause.CONNECT);
				ServerWebExchangeUtils.reset(exchange);
				return attempt(exchange, chain, service, false);
			}
			if (stopped) {
				return OpenAiErrorResponses.write(exchange, HttpStatus.GATEWAY_TIMEOUT,
						new OpenAiError("the instance of '" + failed.serviceId()
								+ "' this request was sent to stopped answering (dualmap.scrape.unresponsive-after)"
								+ " before it answered", "server_error", null, "upstream_unresponsive"));
			}
			return OpenAiErrorResponses.write(exchange, HttpStatus.BAD_GATEWAY,
					new OpenAiError(
							"could not connect to an instance of '" + failed.serviceId() + "' nor to another one",
							"server_error", null, "upstream_connect_failed"));
		});
	}

	/**
	 * The gateway has the backend's status and headers but has not written them (the body
	 * is written after this filter, by {@code NettyWriteResponseFilter}): a status to
	 * retry drops that answer and its connection and sends the request to another
	 * instance; the second answer goes to the client whatever it is.
	 */
	private Mono<Void> retryOnStatus(ServerWebExchange exchange, GatewayFilterChain chain, ServicePool service) {
		DualMapExchange state = DualMapExchange.of(exchange);
		RoutedAttempt refused = state.attempt();
		HttpStatusCode status = exchange.getResponse().getStatusCode();
		// A pinned request continues a stored response only its instance holds.
		if (refused == null || status == null || !this.retryStatuses.contains(status.value())
				|| refused.decision().reason() == Reason.PINNED || exchange.getResponse().isCommitted()
				|| exchange.getAttribute(ServerWebExchangeUtils.CLIENT_RESPONSE_CONN_ATTR) == null) {
			return Mono.empty();
		}
		Set<String> tried = state.excludedInstances();
		tried.add(refused.instanceId());
		if (!service.acceptsAnyBut(tried)) {
			// No other instance to try: the client gets the instance's own answer (and
			// its Retry-After) rather than the gateway's "no instance".
			return Mono.empty();
		}
		// A refusal counts against the instance's breaker whatever its status: an engine
		// that keeps refusing (429 included) is taken out like a failing one.
		refused.fail(new IllegalStateException("instance refused the request with " + status.value()));
		if (LOG.isDebugEnabled()) {
			LOG.debug("Request " + state.requestId() + ": instance '" + refused.instanceId() + "' of '"
					+ refused.serviceId() + "' answered " + status.value() + ", sending it to another");
		}
		state.clearAttempt();
		service.countRetry(RetryCause.STATUS);
		ServerWebExchangeUtils.reset(exchange);
		return attempt(exchange, chain, service, false);
	}

	/**
	 * The instance a request waited on was taken out as unresponsive before it answered.
	 */
	private static final class InstanceStoppedAnswering extends RuntimeException {

		InstanceStoppedAnswering() {
			super("instance stopped answering", null, false, false);
		}

	}

	static boolean isConnectFailure(Throwable ex) {
		for (Throwable t = ex; t != null; t = t.getCause()) {
			if (t instanceof ConnectException) {
				return true;
			}
		}
		return false;
	}

}

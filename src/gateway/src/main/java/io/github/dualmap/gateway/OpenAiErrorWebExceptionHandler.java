package io.github.dualmap.gateway;

import java.io.IOException;
import java.net.ConnectException;

import io.github.dualmap.prompt.InvalidRequestException;
import io.github.dualmap.prompt.OpenAiError;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.http.client.PrematureCloseException;

import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

/**
 * Answers the errors the gateway raises before a route is chosen with the OpenAI error
 * body its filters write, ahead of Spring Boot's default error handler (order -1): a body
 * the {@link ModelRoutePredicateFactory Model} predicate read over
 * {@code dualmap.max-body-size} (413, {@code request_too_large}), beyond
 * {@code dualmap.max-buffered-size} (503, {@code gateway_buffers_full}) or past
 * {@code dualmap.body-read-timeout} (408, {@code request_timeout}); and the 404 of a
 * request a {@code Model} predicate read that no route serves (an unknown model, or none
 * named: {@code model_not_found}, as OpenAI answers an unknown model; a body that could
 * not be read: its 400; a body of a content type it does not read: 415,
 * {@code unsupported_media_type}).
 * <p>
 * An error after the client closed its connection (it left while sending its body, or
 * while the request was on its way) has nobody to answer: it ends the exchange with
 * status {@value #CLIENT_CLOSED_REQUEST} (nginx's "client closed request") for the
 * server's meters and a debug line, instead of a 500 and an error logged with its stack
 * trace for every client that hangs up. Everything else goes on to the next handler.
 */
public class OpenAiErrorWebExceptionHandler implements WebExceptionHandler, Ordered {

	/** The status an exchange whose client left ends with. */
	public static final int CLIENT_CLOSED_REQUEST = 499;

	private static final Log logger = LogFactory.getLog(OpenAiErrorWebExceptionHandler.class);

	private final @Nullable String requestIdHeader;

	/** Answers without a request id. */
	public OpenAiErrorWebExceptionHandler() {
		this(null);
	}

	/**
	 * @param requestIdHeader the request id header its answers carry (the client's id,
	 * else a new one, as {@link RequestIdFilter} gives on routes), or {@code null} for
	 * none
	 */
	public OpenAiErrorWebExceptionHandler(@Nullable String requestIdHeader) {
		this.requestIdHeader = requestIdHeader;
	}

	@Override
	public int getOrder() {
		return -2;
	}

	@Override
	public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
		// The gateway delays a predicate's error until no route matched, several in one.
		for (Throwable error : Exceptions.unwrapMultiple(ex)) {
			Mono<Void> answer = OpenAiErrorResponses.refusedBody(exchange, error);
			if (answer != null) {
				identify(exchange);
				return answer;
			}
		}
		// No route matched (a route that did, and failed with a 404 of its own, keeps
		// it).
		DualMapExchange state = DualMapExchange.of(exchange);
		if (ex instanceof ResponseStatusException status && status.getStatusCode().value() == 404
				&& (state.requestBody() != null || state.bodyUnreadable() != null)
				&& !exchange.getAttributes().containsKey(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR)) {
			identify(exchange);
			return modelNotFound(exchange);
		}
		if (clientLeft(exchange)) {
			exchange.getResponse().setStatusCode(HttpStatusCode.valueOf(CLIENT_CLOSED_REQUEST));
			if (logger.isDebugEnabled()) {
				logger.debug(exchange.getLogPrefix() + "Client left before its answer: " + ex);
			}
			return Mono.empty();
		}
		RoutedAttempt attempt = DualMapExchange.of(exchange).attempt();
		if (attempt != null) {
			Mono<Void> answer = upstreamFailed(exchange, attempt, ex);
			if (answer != null) {
				return answer;
			}
		}
		return Mono.error(ex);
	}

	/**
	 * The instance a request was sent to closed or reset the connection, did not answer
	 * within Spring Cloud Gateway's {@code httpclient.response-timeout}, or went silent
	 * for {@code dualmap.response-idle-timeout} after its status line: before anything
	 * was sent to the client, an OpenAI error saying so (502, 504) instead of a 500;
	 * after (a cut stream), the client's connection is closed as the engine's was, so
	 * that it sees an incomplete answer rather than a clean end, with one warning instead
	 * of error logs.
	 */
	private @Nullable Mono<Void> upstreamFailed(ServerWebExchange exchange, RoutedAttempt attempt, Throwable ex) {
		// A close arrives as Reactor Netty's PrematureCloseException, a reset as the
		// transport's IOException ("Connection reset by peer"); a connect failure never
		// gets here (ConnectFailoverFilter answers it), and the client's own connection
		// failing was ruled out before (clientLeft).
		boolean closed = ex instanceof PrematureCloseException
				|| (ex instanceof IOException && !(ex instanceof ConnectException));
		boolean timedOut = ex instanceof ResponseStatusException status
				&& status.getStatusCode().value() == HttpStatus.GATEWAY_TIMEOUT.value();
		boolean silent = ex instanceof ResponseIdleException;
		if (!closed && !timedOut && !silent) {
			return null;
		}
		String instance = "instance '" + attempt.instanceId() + "' of '" + attempt.serviceId() + "'";
		if (exchange.getResponse().isCommitted()) {
			logger.warn(exchange.getLogPrefix() + "The answer from " + instance + " was cut mid-response (" + ex
					+ "): the client's connection is closed too");
			Object response = ServerHttpResponseDecorator.getNativeResponse(exchange.getResponse());
			if (response instanceof Connection connection) {
				connection.channel().close();
			}
			return Mono.empty();
		}
		identify(exchange);
		// The body names the service, never the instance: an instance id is usually a
		// backend address (host:port), which clients have no business learning.
		String sent = "the instance of '" + attempt.serviceId() + "' this request was sent to";
		if (silent) {
			return OpenAiErrorResponses.write(exchange, HttpStatus.GATEWAY_TIMEOUT,
					new OpenAiError(sent + " began its answer and then sent nothing (" + ex.getMessage() + ")",
							"server_error", null, "upstream_timeout"));
		}
		return timedOut ? OpenAiErrorResponses.write(exchange, HttpStatus.GATEWAY_TIMEOUT,
				// Spring Cloud Gateway's response timeout, or a route's CircuitBreaker
				// time limit: the reason says which.
				new OpenAiError(sent + " did not answer in time (" + ((ResponseStatusException) ex).getReason() + ")",
						"server_error", null, "upstream_timeout"))
				: OpenAiErrorResponses.write(exchange, HttpStatus.BAD_GATEWAY,
						new OpenAiError(sent + " closed the connection before answering (the engine may have stopped)",
								"server_error", null, "upstream_connection_closed"));
	}

	/**
	 * A request read by a {@code Model} predicate that no route took: the model it names
	 * is served by no pool here (or it names none), or its body could not be read (not
	 * valid for its coding, not one JSON object: 400) or was not, being of another
	 * content type (415).
	 */
	private static Mono<Void> modelNotFound(ServerWebExchange exchange) {
		InvalidRequestException unreadable = DualMapExchange.of(exchange).bodyUnreadable();
		if (unreadable != null) {
			return OpenAiErrorResponses.write(exchange, HttpStatus.valueOf(unreadable.status()), unreadable.toError());
		}
		String model = DualMapExchange.of(exchange).requestModel();
		String message = model != null ? "The model `" + model + "` does not exist on this gateway."
				: "The request names no model, and no route here serves it without one.";
		return OpenAiErrorResponses.write(exchange, HttpStatus.NOT_FOUND,
				new OpenAiError(message, "invalid_request_error", "model", "model_not_found"));
	}

	private void identify(ServerWebExchange exchange) {
		if (this.requestIdHeader == null) {
			return;
		}
		String id = DualMapExchange.of(exchange).requestId();
		if (id == null) {
			id = RequestIds.orNew(exchange.getRequest().getHeaders().getFirst(this.requestIdHeader));
		}
		exchange.getResponse().getHeaders().set(this.requestIdHeader, id);
	}

	/** Whether the client's connection is closed (Reactor Netty's server). */
	static boolean clientLeft(ServerWebExchange exchange) {
		Object request = ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest());
		return request instanceof Connection connection && !connection.channel().isActive();
	}

}

package io.github.dualmap.gateway;

import io.github.dualmap.prompt.OpenAiError;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * Writes OpenAI-style error bodies, so clients built for the OpenAI API read the
 * gateway's own refusals the way they read the engine's.
 */
final class OpenAiErrorResponses {

	private OpenAiErrorResponses() {
	}

	/** 413 for a body over {@code dualmap.max-body-size}. */
	static Mono<Void> tooLarge(ServerWebExchange exchange, int maxBodyBytes) {
		return write(exchange, HttpStatus.CONTENT_TOO_LARGE,
				new OpenAiError("request body exceeds dualmap.max-body-size (" + maxBodyBytes + " bytes)",
						"invalid_request_error", null, "request_too_large"));
	}

	/** 503 for a body {@link RequestBuffers} cannot hold, with {@code Retry-After}. */
	static Mono<Void> buffersFull(ServerWebExchange exchange, RequestBuffers.FullException ex) {
		return write(exchange, HttpStatus.SERVICE_UNAVAILABLE, ex.toOpenAiError(), RequestBuffers.RETRY_AFTER_SECONDS);
	}

	/**
	 * The OpenAI answer to a body refused while a route was chosen ({@code null} for any
	 * other error): 413 over {@code dualmap.max-body-size}, 503 beyond
	 * {@code dualmap.max-buffered-size}, 408 past {@code dualmap.body-read-timeout}.
	 */
	static @Nullable Mono<Void> refusedBody(ServerWebExchange exchange, Throwable error) {
		if (error instanceof ModelRoutePredicateFactory.BodyTooLargeException tooLarge) {
			return tooLarge(exchange, tooLarge.maxBodyBytes());
		}
		if (error instanceof RequestBuffers.FullException full) {
			return buffersFull(exchange, full);
		}
		if (error instanceof RequestBodies.ReadTimeoutException slow) {
			return write(exchange, HttpStatus.REQUEST_TIMEOUT, slow.toOpenAiError());
		}
		return null;
	}

	/**
	 * The answer to a body refused and left unread ends its connection
	 * ({@code Connection: close}): kept alive, the server would go on reading and
	 * dropping what the client sends (without end for a chunked body or a huge declared
	 * length), and a client past the read deadline would keep its connection. A refused
	 * body of bounded length is read to its end instead ({@link RequestBodies#read}), as
	 * closing a connection the client is still sending on resets it, and its client may
	 * never read the answer.
	 */
	private static void closeIfUnread(ServerWebExchange exchange) {
		if (RequestBodies.hasUnreadBody(exchange) && !exchange.getResponse().isCommitted()) {
			exchange.getResponse().getHeaders().set(HttpHeaders.CONNECTION, "close");
		}
	}

	static Mono<Void> write(ServerWebExchange exchange, HttpStatus status, OpenAiError error) {
		return write(exchange, status, error, 0);
	}

	/**
	 * With a {@code Retry-After} header of {@code retryAfterSeconds} when it is positive.
	 */
	static Mono<Void> write(ServerWebExchange exchange, HttpStatus status, OpenAiError error, long retryAfterSeconds) {
		ServerHttpResponse response = exchange.getResponse();
		if (response.isCommitted()) {
			return Mono.empty();
		}
		closeIfUnread(exchange);
		if (retryAfterSeconds > 0) {
			response.getHeaders().set(HttpHeaders.RETRY_AFTER, Long.toString(retryAfterSeconds));
		}
		return json(response, status, error.toJson());
	}

	/** A JSON body the gateway answers itself, with its length. */
	static Mono<Void> json(ServerHttpResponse response, HttpStatus status, byte[] json) {
		return body(response, status, MediaType.APPLICATION_JSON, json);
	}

	/** A whole body of {@code type} (none when {@code null}), with its length. */
	static Mono<Void> body(ServerHttpResponse response, HttpStatusCode status, @Nullable MediaType type, byte[] body) {
		response.setStatusCode(status);
		if (type != null) {
			response.getHeaders().setContentType(type);
		}
		response.getHeaders().setContentLength(body.length);
		DataBuffer buffer = response.bufferFactory().wrap(body);
		return response.writeWith(Mono.just(buffer));
	}

}

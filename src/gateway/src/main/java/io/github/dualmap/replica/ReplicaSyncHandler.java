package io.github.dualmap.replica;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.dualmap.gateway.BodyLimits;
import io.github.dualmap.gateway.RequestBodies;
import io.github.dualmap.gateway.RequestBuffers;
import io.github.dualmap.prompt.OpenAiError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The receiving endpoint of replica sync ({@code POST dualmap.replicas.path}): checks the
 * bearer token, reads at most the configured body size, parses and applies the batch.
 * Answers {@code 200 {"applied":n,"ignored":m}} with the {@value #REPLICA_HEADER} header,
 * or an OpenAI-style error: 401 without the token, 415 for a body that is not JSON, 413
 * beyond the size limit, 400 for a malformed batch, 409 when the peer hashes prompts
 * differently; like a client's body, a batch is held within the gateway's budget of
 * bodies in memory (503 with {@code Retry-After} when it is full) and read within the
 * body read deadline (408). A bad batch changes nothing.
 */
public final class ReplicaSyncHandler implements HandlerFunction<ServerResponse> {

	/** Response header naming the replica that answered. */
	public static final String REPLICA_HEADER = "X-DualMap-Replica";

	private static final JsonMapper MAPPER = JsonMapper.builder().build();

	private final ReplicaSync sync;

	private final byte[] expectedAuthorization;

	private final BodyLimits limits;

	private final int maxBodyBytes;

	/**
	 * @param limits the batch size ({@code dualmap.replicas.max-body-size}), the
	 * gateway's body budget and read deadline
	 */
	public ReplicaSyncHandler(ReplicaSync sync, String token, BodyLimits limits) {
		if (token.isBlank()) {
			throw new IllegalArgumentException("token must not be blank");
		}
		this.sync = sync;
		this.expectedAuthorization = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
		this.limits = limits;
		this.maxBodyBytes = limits.maxBytes();
	}

	@Override
	public Mono<ServerResponse> handle(ServerRequest request) {
		if (!authorized(request)) {
			// Nothing of an unauthenticated body is read: its connection ends.
			return unauthorized(request.headers().contentLength().orElse(-1) != 0);
		}
		MediaType type = request.headers().contentType().orElse(null);
		if (type == null || !MediaType.APPLICATION_JSON.isCompatibleWith(type)) {
			return RequestBodies.dropThen(request.exchange(), this.limits,
					() -> error(HttpStatus.UNSUPPORTED_MEDIA_TYPE,
							new OpenAiError("a release batch is sent as application/json", OpenAiError.INVALID_REQUEST,
									null, "unsupported_media_type"),
							0, RequestBodies.hasUnreadBody(request.exchange())));
		}
		return RequestBodies.read(request.exchange(), this.limits)
			// Off the event loop: a large batch takes the shadow indexes' locks many
			// times.
			.publishOn(Schedulers.boundedElastic())
			.flatMap(this::apply)
			.onErrorResume(DataBufferLimitException.class,
					ex -> tooLarge(RequestBodies.hasUnreadBody(request.exchange())))
			.onErrorResume(RequestBuffers.FullException.class,
					ex -> error(HttpStatus.SERVICE_UNAVAILABLE, ex.toOpenAiError(), RequestBuffers.RETRY_AFTER_SECONDS,
							RequestBodies.hasUnreadBody(request.exchange())))
			.onErrorResume(RequestBodies.ReadTimeoutException.class,
					ex -> error(HttpStatus.REQUEST_TIMEOUT, ex.toOpenAiError(), 0, true));
	}

	/**
	 * {@code GET dualmap.replicas.path}: this replica's {@link ReplicaSync#snapshot} for
	 * a peer that starts, sized to fit the peers' {@code max-body-size}, or 401 without
	 * the token.
	 */
	public Mono<ServerResponse> snapshot(ServerRequest request) {
		if (!authorized(request)) {
			return unauthorized();
		}
		return Mono.fromCallable(() -> this.sync.snapshot(snapshotBlocks(this.maxBodyBytes)).toJson())
			// Off the event loop: it takes every shadow index's lock.
			.subscribeOn(Schedulers.boundedElastic())
			.flatMap(this::ok);
	}

	/**
	 * Blocks a snapshot may carry so that its JSON stays within {@code maxBodyBytes}: a
	 * block hash takes at most 21 bytes (20 characters and a comma); the 3 bytes per
	 * block left over cover each release's other fields (service, instance: about a
	 * hundred bytes) once an instance carries a few dozen blocks.
	 */
	static int snapshotBlocks(int maxBodyBytes) {
		return Math.max(1, maxBodyBytes / 24);
	}

	private Mono<ServerResponse> apply(byte[] body) {
		ReplicaSync.Applied applied;
		try {
			applied = this.sync.apply(ReleaseBatch.parse(body));
		}
		catch (ReplicaSync.HashingMismatchException ex) {
			return error(HttpStatus.CONFLICT, OpenAiError.INVALID_REQUEST, "hashing_mismatch", ex.getMessage());
		}
		catch (IllegalArgumentException ex) {
			return error(HttpStatus.BAD_REQUEST, OpenAiError.INVALID_REQUEST, "invalid_release_batch", ex.getMessage());
		}
		Map<String, Integer> out = new LinkedHashMap<>();
		out.put("applied", applied.applied());
		out.put("ignored", applied.ignored());
		return ok(MAPPER.writeValueAsBytes(out));
	}

	/** 200 with a JSON body, naming this replica. */
	private Mono<ServerResponse> ok(byte[] json) {
		return ServerResponse.ok()
			.header(REPLICA_HEADER, this.sync.replicaId())
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(json);
	}

	private boolean authorized(ServerRequest request) {
		String authorization = request.headers().firstHeader(HttpHeaders.AUTHORIZATION);
		return authorization != null
				&& MessageDigest.isEqual(authorization.getBytes(StandardCharsets.UTF_8), this.expectedAuthorization);
	}

	private static Mono<ServerResponse> unauthorized() {
		return unauthorized(false);
	}

	/**
	 * @param close whether to end the connection (a body is left unread)
	 */
	private static Mono<ServerResponse> unauthorized(boolean close) {
		return error(HttpStatus.UNAUTHORIZED,
				new OpenAiError("replica sync needs 'Authorization: Bearer <dualmap.replicas.token>'",
						"authentication_error", null, "invalid_replica_token"),
				0, close);
	}

	private Mono<ServerResponse> tooLarge(boolean close) {
		return error(HttpStatus.PAYLOAD_TOO_LARGE,
				new OpenAiError(
						"a release batch may be at most " + this.maxBodyBytes
								+ " bytes (dualmap.replicas.max-body-size)",
						OpenAiError.INVALID_REQUEST, null, "body_too_large"),
				0, close);
	}

	private static Mono<ServerResponse> error(HttpStatus status, String type, String code, String message) {
		return error(status, new OpenAiError(message, type, null, code), 0, false);
	}

	/**
	 * With a {@code Retry-After} header of {@code retryAfterSeconds} when it is positive;
	 * {@code close} to end the connection after it, the rest of a refused batch unread.
	 */
	private static Mono<ServerResponse> error(HttpStatus status, OpenAiError error, long retryAfterSeconds,
			boolean close) {
		ServerResponse.BodyBuilder response = ServerResponse.status(status).contentType(MediaType.APPLICATION_JSON);
		if (close) {
			response.header(HttpHeaders.CONNECTION, "close");
		}
		if (retryAfterSeconds > 0) {
			response.header(HttpHeaders.RETRY_AFTER, Long.toString(retryAfterSeconds));
		}
		return response.bodyValue(error.toJson());
	}

}

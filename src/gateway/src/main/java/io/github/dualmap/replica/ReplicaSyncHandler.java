package io.github.dualmap.replica;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.dualmap.gateway.BodyLimits;
import io.github.dualmap.gateway.RequestBodies;
import io.github.dualmap.gateway.RequestBuffers;
import io.github.dualmap.prompt.OpenAiError;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The receiving endpoint of replica sync ({@code POST dualmap.replicas.path}): checks the
 * bearer token, reads at most the configured body size, parses and applies the batch.
 * Answers {@code 200 {"applied":n,"ignored":m}} with the {@value #REPLICA_HEADER} header,
 * or an OpenAI-style error: 401 without the token, 415 for a body that is not JSON (or
 * comes with a {@code Content-Encoding}), 413 beyond the size limit or when parsing it
 * could never fit in the body budget, 400 for a malformed batch, 409 when the peer hashes
 * prompts differently, 405 for another method than POST or {@code GET}
 * ({@link #snapshot}); like a client's body, a batch is held within the gateway's budget
 * of bodies in memory (503 with {@code Retry-After} when it is full) and read within the
 * body read deadline (408). A bad batch changes nothing.
 */
public final class ReplicaSyncHandler implements HandlerFunction<ServerResponse> {

	/** Response header naming the replica that answered. */
	public static final String REPLICA_HEADER = "X-DualMap-Replica";

	/** Shortest token accepted. */
	public static final int MIN_TOKEN_LENGTH = 16;

	/** What a token must be, for messages. */
	public static final String TOKEN_RULE = "at least " + MIN_TOKEN_LENGTH
			+ " visible ASCII characters (no spaces): it is the shared secret of every replica, sent in a header";

	/**
	 * Whether {@code token} can be the shared secret: long enough, and visible ASCII, so
	 * that it travels in a header as the same bytes it was configured as.
	 */
	public static boolean validToken(@Nullable String token) {
		return token != null && token.length() >= MIN_TOKEN_LENGTH && token.chars().allMatch(c -> c > 0x20 && c < 0x7F);
	}

	private static final JsonMapper MAPPER = JsonMapper.builder().build();

	private final ReplicaSync sync;

	private final byte[] expectedToken;

	private final BodyLimits limits;

	private final int maxBodyBytes;

	/**
	 * @param limits the batch size ({@code dualmap.replicas.max-body-size}), the
	 * gateway's body budget and read deadline
	 */
	public ReplicaSyncHandler(ReplicaSync sync, String token, BodyLimits limits) {
		if (!validToken(token)) {
			throw new IllegalArgumentException("token must be " + TOKEN_RULE);
		}
		this.sync = sync;
		// A header's bytes are read as ISO-8859-1; the token is visible ASCII, the same
		// bytes in either.
		this.expectedToken = token.getBytes(StandardCharsets.ISO_8859_1);
		this.limits = limits;
		this.maxBodyBytes = limits.maxBytes();
	}

	@Override
	public Mono<ServerResponse> handle(ServerRequest request) {
		if (!authorized(request)) {
			// Nothing of an unauthenticated body is read: its connection ends.
			return unauthorized(request.headers().contentLength().orElse(-1) != 0);
		}
		if (!json(request) || encoded(request)) {
			return RequestBodies.dropThen(request.exchange(), this.limits,
					() -> error(HttpStatus.UNSUPPORTED_MEDIA_TYPE,
							new OpenAiError("a release batch is sent as application/json, without a Content-Encoding",
									OpenAiError.INVALID_REQUEST, null, "unsupported_media_type"),
							0, RequestBodies.hasUnreadBody(request.exchange())));
		}
		return RequestBodies.read(request.exchange(), this.limits)
			// Off the event loop: a large batch takes the shadow indexes' locks many
			// times.
			.publishOn(Schedulers.boundedElastic())
			.flatMap(body -> apply(request, body))
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
	 * the token. The snapshot is held whole until it is sent, so that size is reserved in
	 * the gateway's budget of bodies for the exchange, as a batch's body is: 503 when it
	 * cannot hold it now.
	 */
	public Mono<ServerResponse> snapshot(ServerRequest request) {
		if (!authorized(request)) {
			return unauthorized();
		}
		return Mono.fromCallable(() -> {
			this.limits.reserveUntilEnd(request.exchange(), this.maxBodyBytes);
			return snapshotJson(this.sync, this.maxBodyBytes);
		})
			// Off the event loop: it takes every shadow index's lock.
			.subscribeOn(Schedulers.boundedElastic())
			.flatMap(this::ok)
			.onErrorResume(RequestBuffers.FullException.class, ex -> error(HttpStatus.SERVICE_UNAVAILABLE,
					ex.toOpenAiError(), RequestBuffers.RETRY_AFTER_SECONDS, false));
	}

	/**
	 * Any other method on {@code dualmap.replicas.path}: 405 with
	 * {@code Allow: GET, POST}, the body, if any, read and dropped as for a refused
	 * batch. Without it the request would fall through to the gateway's routes, and a
	 * catch-all route would send it, with whatever token it carries, to an engine.
	 */
	public Mono<ServerResponse> methodNotAllowed(ServerRequest request) {
		OpenAiError error = new OpenAiError(
				"method " + request.method().name() + " is not allowed on " + request.path()
						+ ": replica sync sends release batches with POST and reads a snapshot with GET",
				OpenAiError.INVALID_REQUEST, null, "method_not_allowed");
		return RequestBodies.dropThen(request.exchange(), this.limits,
				() -> errorResponse(HttpStatus.METHOD_NOT_ALLOWED, 0, RequestBodies.hasUnreadBody(request.exchange()))
					.allow(HttpMethod.GET, HttpMethod.POST)
					.bodyValue(error.toJson()));
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

	/**
	 * {@code sync}'s snapshot as JSON within {@code maxBodyBytes}, which the peers accept
	 * (they share the setting): {@link #snapshotBlocks} first, and fewer blocks while the
	 * JSON comes out larger (many instances, long ids or few blocks each leave less room
	 * than the estimate); the last try is sent as it is.
	 */
	static byte[] snapshotJson(ReplicaSync sync, int maxBodyBytes) {
		int blocks = snapshotBlocks(maxBodyBytes);
		byte[] json = sync.snapshot(blocks).toJson();
		for (int i = 0; i < 8 && json.length > maxBodyBytes && blocks > 1; i++) {
			blocks = (int) (blocks * 0.9 * maxBodyBytes / json.length);
			json = sync.snapshot(Math.max(1, blocks)).toJson();
		}
		return json;
	}

	/**
	 * Whether the batch is declared JSON: {@code application/json} exactly (with
	 * parameters), not a wildcard; a {@code Content-Type} that does not parse is not.
	 */
	private static boolean json(ServerRequest request) {
		MediaType type;
		try {
			type = request.headers().contentType().orElse(null);
		}
		catch (InvalidMediaTypeException ex) {
			return false;
		}
		return type != null && !type.isWildcardType() && !type.isWildcardSubtype()
				&& MediaType.APPLICATION_JSON.isCompatibleWith(type);
	}

	/** Whether the batch comes with a coding other than identity: never decoded here. */
	private static boolean encoded(ServerRequest request) {
		return request.headers()
			.header(HttpHeaders.CONTENT_ENCODING)
			.stream()
			.flatMap(v -> Arrays.stream(v.split(",")))
			.map(String::strip)
			.anyMatch(coding -> !coding.isEmpty() && !coding.equalsIgnoreCase("identity"));
	}

	private Mono<ServerResponse> apply(ServerRequest request, byte[] body) {
		ReleaseBatch batch;
		try {
			// Parsing builds each chain whole: its memory comes from the body budget.
			batch = this.limits.withWorkingMemory(request.exchange(), ReleaseBatch.parseWorkingBytes(body),
					() -> ReleaseBatch.parse(body), () -> null);
		}
		catch (IllegalArgumentException ex) {
			return error(HttpStatus.BAD_REQUEST, OpenAiError.INVALID_REQUEST, "invalid_release_batch", ex.getMessage());
		}
		if (batch == null) {
			return error(HttpStatus.PAYLOAD_TOO_LARGE,
					new OpenAiError(
							"parsing this release batch would take more than the gateway's body budget "
									+ "(dualmap.max-buffered-size): send fewer blocks at once",
							OpenAiError.INVALID_REQUEST, null, "body_too_large"),
					0, false);
		}
		ReplicaSync.Applied applied;
		try {
			applied = this.sync.apply(batch);
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

	/**
	 * Whether the request carries {@code Authorization: Bearer <token>} (the scheme in
	 * any case, RFC 9110), once.
	 */
	private boolean authorized(ServerRequest request) {
		List<String> values = request.headers().header(HttpHeaders.AUTHORIZATION);
		if (values.size() != 1) {
			return false;
		}
		String authorization = values.get(0);
		int space = authorization.indexOf(' ');
		if (space < 0 || !authorization.substring(0, space).equalsIgnoreCase("Bearer")) {
			return false;
		}
		return MessageDigest.isEqual(authorization.substring(space + 1).getBytes(StandardCharsets.ISO_8859_1),
				this.expectedToken);
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
		return errorResponse(status, retryAfterSeconds, close).bodyValue(error.toJson());
	}

	/** The head of {@link #error}'s answers, for one that adds a header of its own. */
	private static ServerResponse.BodyBuilder errorResponse(HttpStatus status, long retryAfterSeconds, boolean close) {
		ServerResponse.BodyBuilder response = ServerResponse.status(status).contentType(MediaType.APPLICATION_JSON);
		if (close) {
			response.header(HttpHeaders.CONNECTION, "close");
		}
		if (retryAfterSeconds > 0) {
			response.header(HttpHeaders.RETRY_AFTER, Long.toString(retryAfterSeconds));
		}
		return response;
	}

}

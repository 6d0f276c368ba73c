package io.github.dualmap.emulator;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dualmap.emulator.EngineDriver.TokenEvent;
import io.github.dualmap.emulator.GenerationRequest.Endpoint;
import io.github.dualmap.engine.BlockChains;
import io.github.dualmap.engine.Engine;
import io.github.dualmap.engine.EngineRequest;
import io.github.dualmap.engine.EngineStats;
import io.github.dualmap.gateway.Http10Responses;
import io.github.dualmap.gateway.KeepAliveReads;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * One emulated vLLM instance: an {@link Engine} driven in scaled real time behind a
 * Reactor Netty server with {@code /v1/completions}, {@code /v1/chat/completions}
 * (streaming and not), {@code /v1/models}, {@code /health} and {@code /metrics}.
 */
public final class EmulatorServer implements AutoCloseable {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private final EmulatorSettings settings;

	private final EngineDriver driver;

	private final DisposableServer server;

	private final AtomicLong sequence = new AtomicLong();

	/**
	 * Stored Responses API responses by id (vLLM's in-memory store): the transcript a
	 * continuation runs on and the response object a retrieval returns, bounded by the
	 * transcripts' total length.
	 */
	private final StoredTranscripts<StoredResponse> storedResponses = new StoredTranscripts<>(STORED_RESPONSE_CHARS,
			r -> r.transcript().length());

	private record StoredResponse(String transcript, ObjectNode response) {

	}

	/** Most characters of stored transcripts kept (the least recently used go first). */
	static final long STORED_RESPONSE_CHARS = 16L * 1024 * 1024;

	private final long createdEpochSeconds = System.currentTimeMillis() / 1000;

	private EmulatorServer(EmulatorSettings settings, int port) {
		this.settings = settings;
		this.driver = new EngineDriver(new Engine(settings.profile()), settings.timeScale(), "emulator-" + port);
		try {
			// vLLM's server keeps reading a kept-alive connection after any answer and
			// streams to an HTTP/1.0 client without chunks; Reactor Netty needs help for
			// both (KeepAliveReads, Http10Responses).
			this.server = Http10Responses.install(KeepAliveReads.install(HttpServer.create()))
				.host(settings.host())
				.port(port)
				.route(routes -> routes
					// Starlette matches paths as sent: an empty segment is another path.
					.route(req -> rawPath(req).contains("//"), (req, res) -> detail(res, 404, "Not Found"))
					.post("/v1/completions", (req, res) -> generate(req, res, Endpoint.COMPLETIONS))
					.post("/v1/chat/completions", (req, res) -> generate(req, res, Endpoint.CHAT))
					.post("/v1/responses", (req, res) -> generate(req, res, Endpoint.RESPONSES))
					.get("/v1/responses/{id}", (req, res) -> {
						StoredResponse r = this.storedResponses.get(req.param("id"));
						return r != null ? json(res, 200, r.response()) : responseNotFound(res, req.param("id"));
					})
					.delete("/v1/responses/{id}", (req, res) -> {
						StoredResponse r = this.storedResponses.remove(req.param("id"));
						if (r == null) {
							return responseNotFound(res, req.param("id"));
						}
						ObjectNode deleted = JSON.createObjectNode();
						deleted.put("id", req.param("id"));
						deleted.put("object", "response");
						deleted.put("deleted", true);
						return json(res, 200, deleted);
					})
					.get("/v1/models", (req, res) -> json(res, 200, models()))
					.get("/health", (req, res) -> res.status(200).send())
					.get("/metrics",
							(req, res) -> res.header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
								.sendString(Mono
									.fromSupplier(() -> settings.metrics().render(driver.stats(), settings.model()))))
					// What FastAPI answers for a known path and another method, or an
					// unknown path.
					.route(req -> true,
							(req, res) -> known(rawPath(req))
									? detail(res.header("Allow", allowed(rawPath(req))), 405, "Method Not Allowed")
									: detail(res, 404, "Not Found")))
				.bindNow(Duration.ofSeconds(10));
		}
		catch (RuntimeException ex) {
			driver.close();
			throw new IllegalStateException("cannot bind emulator on " + settings.host() + ":" + port, ex);
		}
	}

	/** Starts an instance on {@code port} (0 for any free port). */
	public static EmulatorServer start(EmulatorSettings settings, int port) {
		if (port < 0 || port > 65535) {
			throw new IllegalArgumentException("port must be in [0, 65535] but was " + port);
		}
		return new EmulatorServer(settings, port);
	}

	public int port() {
		return server.port();
	}

	public String baseUrl() {
		return "http://" + settings.host() + ":" + port();
	}

	public EmulatorSettings settings() {
		return settings;
	}

	/** The engine's state after its last step. */
	public EngineStats stats() {
		return driver.stats();
	}

	/**
	 * A JSON body's text in the encoding it was sent in, as vLLM's server reads it
	 * (Python's {@code json.loads} on bytes): UTF-8 with or without a byte order mark, or
	 * UTF-16, told by its byte order mark or by where its zero bytes are. Bytes that are
	 * not valid in that encoding (a body sent compressed, with a {@code Content-Encoding}
	 * vLLM does not decode, or text in another charset) fail as Python's strict decoding
	 * does: FastAPI then answers "There was an error parsing the body", which vLLM turns
	 * into a 400 of type "Bad Request". (Python lets UTF-8 encoded surrogates through;
	 * they are refused here too.)
	 * @throws ApiException vLLM's answer to a body it cannot decode
	 */
	static String jsonText(byte[] body) {
		int n = body.length;
		if (n >= 3 && (body[0] & 0xFF) == 0xEF && (body[1] & 0xFF) == 0xBB && (body[2] & 0xFF) == 0xBF) {
			return decode(body, 3, StandardCharsets.UTF_8);
		}
		if (n >= 2 && ((body[0] & 0xFF) == 0xFE && (body[1] & 0xFF) == 0xFF
				|| (body[0] & 0xFF) == 0xFF && (body[1] & 0xFF) == 0xFE)) {
			return decode(body, 0, StandardCharsets.UTF_16);
		}
		if (n >= 2 && body[0] == 0 && body[1] != 0) {
			return decode(body, 0, StandardCharsets.UTF_16BE);
		}
		if (n >= 2 && body[0] != 0 && body[1] == 0) {
			return decode(body, 0, StandardCharsets.UTF_16LE);
		}
		return decode(body, 0, StandardCharsets.UTF_8);
	}

	private static String decode(byte[] body, int from, Charset charset) {
		try {
			return charset.newDecoder()
				.onMalformedInput(CodingErrorAction.REPORT)
				.onUnmappableCharacter(CodingErrorAction.REPORT)
				.decode(ByteBuffer.wrap(body, from, body.length - from))
				.toString();
		}
		catch (CharacterCodingException ex) {
			throw new ApiException(400, "Bad Request", "There was an error parsing the body", null);
		}
	}

	/** The header vLLM takes as a request's id. */
	static final String REQUEST_ID_HEADER = "X-Request-Id";

	private Publisher<Void> generate(HttpServerRequest req, HttpServerResponse res, Endpoint endpoint) {
		return req.receive().aggregate().asByteArray().defaultIfEmpty(new byte[0]).flatMap(bytes -> {
			GenerationRequest g;
			try {
				g = GenerationRequest.parse(JSON, jsonText(bytes), endpoint, settings.model(),
						settings.profile().maxModelLen(), id -> {
							StoredResponse r = this.storedResponses.get(id);
							return r == null ? null : r.transcript();
						});
			}
			catch (ApiException ex) {
				return json(res, ex.status(), error(ex));
			}
			String prefix = switch (endpoint) {
				case CHAT -> "chatcmpl-";
				case RESPONSES -> "resp_";
				case COMPLETIONS -> "cmpl-";
			};
			// As vLLM: a chat or text completion's id carries the X-Request-Id the
			// client (a gateway) sent; a response's id must be unique, it keys the
			// store.
			String requestId = req.requestHeaders().get(REQUEST_ID_HEADER);
			String id = prefix + (requestId != null && !requestId.isBlank() && endpoint != Endpoint.RESPONSES
					? requestId : UUID.randomUUID().toString().replace("-", ""));
			EngineRequest request = new EngineRequest(id + "-" + sequence.incrementAndGet(),
					BlockChains.ofTokens(g.promptTokens(), settings.profile().blockTokens(), g.cacheSalt()),
					g.promptTokens().length, g.maxTokens());
			Flux<TokenEvent> tokens = driver.generate(request);
			if (endpoint == Endpoint.RESPONSES) {
				ResponsesApi api = new ResponsesApi(JSON, g, id, System.currentTimeMillis() / 1000);
				if (g.store() && g.transcript() != null) {
					// Kept once answered: the transcript with the answer, for
					// continuations.
					String transcript = g.transcript();
					tokens = tokens.doOnNext(t -> {
						if (t.last()) {
							this.storedResponses.put(id, new StoredResponse(
									transcript + FillerText.tokens(t.index()) + "<|im_end|>\n", api.completed(t)));
						}
					});
				}
				return g.stream() ? sendEvents(res, api.events(tokens))
						: tokens.last().flatMap(t -> json(res, 200, api.completed(t)));
			}
			return g.stream() ? stream(res, g, id, tokens) : whole(res, g, id, tokens);
		});
	}

	private Mono<Void> stream(HttpServerResponse res, GenerationRequest g, String id, Flux<TokenEvent> tokens) {
		long created = System.currentTimeMillis() / 1000;
		Flux<String> events = tokens.concatMap(t -> {
			Flux<String> out = Flux.just(sse(chunk(g, id, created, t)));
			if (t.index() == 1 && g.chat()) {
				// vLLM's first chat chunk carries the role alone.
				out = Flux.just(sse(roleChunk(g, id, created))).concatWith(out);
			}
			if (t.last() && g.includeUsage()) {
				ObjectNode usage = base(g, id, created);
				usage.putArray("choices");
				usage.set("usage", usage(t));
				out = out.concatWith(Flux.just(sse(usage)));
			}
			return out;
		}).concatWith(Flux.just("data: [DONE]\n\n")).onErrorResume(ApiException.class, ex -> Flux.just(sse(error(ex))));
		return sendEvents(res, events);
	}

	private static Mono<Void> sendEvents(HttpServerResponse res, Flux<String> events) {
		return res.header("Content-Type", "text/event-stream; charset=utf-8")
			.header("Cache-Control", "no-cache")
			.sendString(events)
			.then();
	}

	private Mono<Void> whole(HttpServerResponse res, GenerationRequest g, String id, Flux<TokenEvent> tokens) {
		// Like vLLM: nothing (not even headers) is sent before generation ends.
		return tokens.last().flatMap(t -> {
			ObjectNode body = base(g, id, System.currentTimeMillis() / 1000);
			ObjectNode choice = body.putArray("choices").addObject();
			choice.put("index", 0);
			if (g.chat()) {
				ObjectNode message = choice.putObject("message");
				message.put("role", "assistant");
				message.put("content", FillerText.tokens(t.index()));
			}
			else {
				choice.put("text", FillerText.tokens(t.index()));
				choice.putNull("logprobs");
			}
			choice.put("finish_reason", "length");
			choice.putNull("stop_reason");
			body.set("usage", usage(t));
			return json(res, 200, body);
		});
	}

	private ObjectNode base(GenerationRequest g, String id, long created) {
		ObjectNode node = JSON.createObjectNode();
		node.put("id", id);
		node.put("object", g.chat() ? (g.stream() ? "chat.completion.chunk" : "chat.completion") : "text_completion");
		node.put("created", created);
		node.put("model", g.model());
		return node;
	}

	private ObjectNode roleChunk(GenerationRequest g, String id, long created) {
		ObjectNode node = base(g, id, created);
		ObjectNode choice = node.putArray("choices").addObject();
		choice.put("index", 0);
		ObjectNode delta = choice.putObject("delta");
		delta.put("role", "assistant");
		delta.put("content", "");
		choice.putNull("logprobs");
		choice.putNull("finish_reason");
		return node;
	}

	private ObjectNode chunk(GenerationRequest g, String id, long created, TokenEvent t) {
		ObjectNode node = base(g, id, created);
		ObjectNode choice = node.putArray("choices").addObject();
		choice.put("index", 0);
		if (g.chat()) {
			choice.putObject("delta").put("content", FillerText.token(t.index()));
		}
		else {
			choice.put("text", FillerText.token(t.index()));
		}
		choice.putNull("logprobs");
		if (t.last()) {
			choice.put("finish_reason", "length");
			choice.putNull("stop_reason");
		}
		else {
			choice.putNull("finish_reason");
		}
		return node;
	}

	private static ObjectNode usage(TokenEvent t) {
		ObjectNode usage = JSON.createObjectNode();
		usage.put("prompt_tokens", t.promptTokens());
		usage.put("total_tokens", t.promptTokens() + t.index());
		usage.put("completion_tokens", t.index());
		usage.putObject("prompt_tokens_details").put("cached_tokens", t.cachedTokens());
		return usage;
	}

	private ObjectNode models() {
		ObjectNode body = JSON.createObjectNode();
		body.put("object", "list");
		ArrayNode data = body.putArray("data");
		ObjectNode model = data.addObject();
		model.put("id", settings.model());
		model.put("object", "model");
		model.put("created", createdEpochSeconds);
		model.put("owned_by", "vllm");
		model.put("root", settings.model());
		model.putNull("parent");
		model.put("max_model_len", settings.profile().maxModelLen());
		model.putArray("permission");
		return body;
	}

	/** vLLM's error body: {@code {"error": {"message", "type", "param", "code"}}}. */
	static ObjectNode error(ApiException ex) {
		ObjectNode body = JSON.createObjectNode();
		ObjectNode error = body.putObject("error");
		error.put("message", ex.getMessage());
		error.put("type", ex.type());
		error.put("param", ex.param());
		error.put("code", ex.status());
		return body;
	}

	private static Mono<Void> responseNotFound(HttpServerResponse res, String id) {
		return json(res, 404, error(
				new ApiException(404, "NotFoundError", "Response with id '" + id + "' not found.", "response_id")));
	}

	private static String sse(ObjectNode node) {
		return "data: " + JSON.writeValueAsString(node) + "\n\n";
	}

	private static String rawPath(HttpServerRequest req) {
		String uri = req.uri();
		int query = uri.indexOf('?');
		return query < 0 ? uri : uri.substring(0, query);
	}

	private static boolean known(String path) {
		return !allowed(path).isEmpty();
	}

	/** The methods served on {@code path}, as an {@code Allow} header; empty if none. */
	private static String allowed(String path) {
		return switch (path) {
			case "/v1/completions", "/v1/chat/completions", "/v1/responses" -> "POST";
			case "/v1/models", "/health", "/metrics" -> "GET";
			default -> path.startsWith("/v1/responses/") && path.indexOf('/', "/v1/responses/".length()) < 0
					? "GET, DELETE" : "";
		};
	}

	/** FastAPI's error body for routing errors: {@code {"detail": "..."}}. */
	private static Mono<Void> detail(HttpServerResponse res, int status, String detail) {
		ObjectNode body = JSON.createObjectNode();
		body.put("detail", detail);
		return json(res, status, body);
	}

	private static Mono<Void> json(HttpServerResponse res, int status, ObjectNode body) {
		return res.status(status)
			.header("Content-Type", "application/json")
			.sendString(Mono.just(JSON.writeValueAsString(body)))
			.then();
	}

	@Override
	public void close() {
		server.disposeNow(Duration.ofSeconds(5));
		driver.close();
	}

}

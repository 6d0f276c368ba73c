package io.github.dualmap;

import java.util.zip.CRC32;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.dualmap.gateway.KeepAliveReads;
import io.github.dualmap.gateway.ServicePool;
import io.netty.channel.ChannelOption;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A vLLM-like backend on loopback, the one every gateway test sends requests to: OpenAI
 * completions and chat completions (SSE or JSON), the Responses API with stored
 * responses, a model list, and a vLLM V1 {@code /metrics} whose gauges and prefix cache
 * counters the test controls. Each public field is a knob or a counter of the test's;
 * {@link #reset()} puts the knobs back, so tests sharing engines start alike.
 */
public final class StubEngine {

	/** The SSE events every streaming response sends, in order. */
	public static final List<String> EVENTS = List.of("data: {\"choices\":[{\"delta\":{\"content\":\"one\"}}]}\n\n",
			"data: {\"choices\":[{\"delta\":{\"content\":\"two\"}}]}\n\n",
			"data: {\"choices\":[{\"delta\":{\"content\":\"three\"}}]}\n\n", "data: [DONE]\n\n");

	/**
	 * A streamed Responses API answer: two opening events at once (the first carries the
	 * response, {@code %s} its id), the rest after the prefill delay, as vLLM sends them.
	 */
	public static final List<String> RESPONSES_OPENING = List.of(
			"event: response.created\ndata: {\"response\":{\"id\":\"%s\"},\"sequence_number\":0,\"type\":\"response.created\"}\n\n",
			"event: response.in_progress\r\ndata: {\"type\":\"response.in_progress\",\"sequence_number\":1}\r\n\r\n");

	public static final List<String> RESPONSES_EVENTS = List.of(
			"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\"}\n\n",
			"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"one\"}\n\n",
			"event: response.completed\ndata: {\"type\":\"response.completed\"}\n\n");

	private static final Pattern PREVIOUS_RESPONSE = Pattern.compile("\"previous_response_id\"\\s*:\\s*\"([^\"]+)\"");

	/** Ids of the responses this stub answered (vLLM's in-memory store). */
	public final Set<String> stored = ConcurrentHashMap.newKeySet();

	public final String name;

	public final AtomicInteger waiting = new AtomicInteger();

	public final AtomicInteger served = new AtomicInteger();

	/** Model list requests answered (or refused). */
	public final AtomicInteger modelLists = new AtomicInteger();

	/**
	 * The x-request-id header of the last completion request (null: none; several copies
	 * joined with ", ").
	 */
	public final AtomicReference<String> lastRequestId = new AtomicReference<>();

	/**
	 * A status the completion endpoints answer instead of completing (0: complete), with
	 * an OpenAI error body: an engine refusing work.
	 */
	public final AtomicInteger refuseWith = new AtomicInteger();

	/** Requests answered with {@link #refuseWith}. */
	public final AtomicInteger refused = new AtomicInteger();

	/**
	 * How the completion endpoints crash (an engine killed mid-request): {@code before}
	 * closes the connection once the request is read, {@code during} after the first
	 * event of a stream; {@code reset-before} and {@code reset-during} reset it there
	 * instead (a TCP RST, as a killed process's kernel or a proxy sends);
	 * {@code silent-before} sends a stream's status line and headers and then nothing,
	 * {@code silent-during} its first event and then nothing, keeping the connection open
	 * (an engine whose scheduler stalled while its HTTP server still answers); empty:
	 * they answer.
	 */
	public final AtomicReference<String> crash = new AtomicReference<>("");

	/**
	 * Whether the stub hangs on requests: it still accepts connections and reads them,
	 * but never answers completion and Responses requests.
	 */
	public final AtomicBoolean hung = new AtomicBoolean();

	/** Whether the stub's {@code /metrics} never answers: scrapes hang. */
	public final AtomicBoolean scrapesHang = new AtomicBoolean();

	/** Completion and Responses requests read while {@link #hung}, never answered. */
	public final AtomicInteger held = new AtomicInteger();

	/**
	 * Whether streams never end: events of 4 KB every millisecond until the gateway goes
	 * away (a long generation whose client may leave).
	 */
	public final AtomicBoolean endless = new AtomicBoolean();

	/** Delay before the first response byte: a slow prefill, as the gateway sees it. */
	public final AtomicReference<Duration> firstByteDelay = new AtomicReference<>(Duration.ZERO);

	/** The {@code vllm:num_requests_running} gauge. */
	public final AtomicInteger running = new AtomicInteger();

	/**
	 * Whether {@code vllm:num_requests_running} also counts the requests the stub is
	 * answering (completions, chat completions, Responses), from their body read, held
	 * ones included, to their last byte, as an engine counts whoever sent them.
	 */
	public final AtomicBoolean countsItsRequests = new AtomicBoolean();

	/** Requests being answered now, held ones included. */
	private final AtomicInteger answering = new AtomicInteger();

	/** Requests being answered now, held ones included: 0 once every one ended. */
	public int answering() {
		return this.answering.get();
	}

	/** The {@code vllm:kv_cache_usage_perc} gauge. */
	public final AtomicReference<Double> kvCacheUsage = new AtomicReference<>(DEFAULT_KV_CACHE_USAGE);

	/**
	 * The prefix cache counters {@code vllm:prefix_cache_queries_total} and
	 * {@code vllm:prefix_cache_hits_total}, in that order (null: not reported).
	 */
	public final AtomicReference<long[]> prefixCache = new AtomicReference<>();

	private static final double DEFAULT_KV_CACHE_USAGE = 0.1;

	/**
	 * While set, requests that arrive are held (not even a first byte) until
	 * {@link #releaseResponses()}: they stay in prefill as far as the gateway can tell.
	 */
	private final AtomicReference<Sinks.Empty<Void>> gate = new AtomicReference<>();

	private final int port;

	/**
	 * What {@link #reset()} puts the engine back to: answering, or one of the modes of
	 * {@link #unresponsive(String)} and {@link #gone(String)}, which hold for good.
	 */
	private final Mode mode;

	private volatile DisposableServer server;

	// Every connection of the stub, so that stopping it also drops the gateway's pooled
	// keep-alive connections, as a crashed engine would.
	private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);

	/**
	 * After a test: every engine answers at once again, and {@code pool} holds no queued
	 * request and none in flight (the test's stragglers have finished).
	 */
	public static void settle(List<StubEngine> engines, ServicePool service) {
		engines.forEach(e -> e.firstByteDelay.set(Duration.ZERO));
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			assertThat(service.queues().queued()).isZero();
			assertThat(service.instancePool().instances()).allSatisfy(s -> assertThat(s.inFlight()).isZero());
		});
	}

	public StubEngine(String name) {
		this(name, Mode.ANSWERING);
	}

	private StubEngine(String name, Mode mode) {
		this.name = name;
		this.mode = mode;
		this.server = bind(0);
		this.port = this.server.port();
		reset();
	}

	/**
	 * A hung engine, for good: it accepts connections and reads requests but never
	 * answers one, its scrapes included; {@link #reset()} keeps it so.
	 */
	public static StubEngine unresponsive(String name) {
		return new StubEngine(name, Mode.UNRESPONSIVE);
	}

	/**
	 * An engine that is gone, for good: its address is a free loopback port, so
	 * connections to it are refused; {@link #reset()} does not bring it back.
	 */
	public static StubEngine gone(String name) {
		return new StubEngine(name, Mode.GONE);
	}

	private DisposableServer bind(int port) {
		return KeepAliveReads.install(HttpServer.create())
			.host("127.0.0.1")
			.port(port)
			.channelGroup(this.connections)
			.route(routes -> routes.post("/v1/chat/completions", this::complete)
				.post("/v1/completions", this::complete)
				.post("/v1/responses", this::respond)
				.get("/v1/responses/{id}", (req, res) -> this.stored.contains(req.param("id"))
						? res.header("content-type", "application/json")
							.sendString(Mono.just("{\"id\":\"" + req.param("id") + "\",\"object\":\"response\"}"))
						: res.status(404).send())
				.get("/v1/models", (req, res) -> {
					this.modelLists.incrementAndGet();
					// vLLM's answer to a wrong --api-key.
					return "Bearer wrong".equals(req.requestHeaders().get("authorization"))
							? res.status(401)
								.header("content-type", "application/json")
								.sendString(Mono.just("{\"error\":\"Unauthorized\"}"))
							: res.header("content-type", "application/json")
								.sendString(Mono.just("{\"object\":\"list\",\"served_by\":\"" + name
										+ "\",\"data\":[{\"id\":\"shared-model\",\"object\":\"model\"},{\"id\":\"model-of-"
										+ name + "\",\"object\":\"model\",\"owned_by\":\""
										+ req.requestHeaders().get("authorization", "") + "\"}]}"));
				})
				.get("/metrics",
						(req, res) -> this.scrapesHang.get() ? Mono.never()
								: res.header("content-type", "text/plain; version=0.0.4")
									.sendString(Mono.fromSupplier(this::metrics))))
			.bindNow();
	}

	public String uri() {
		return "http://127.0.0.1:" + this.port;
	}

	public String instanceId() {
		return "127.0.0.1:" + this.port;
	}

	/**
	 * Stops listening and drops every connection, as a crashed engine does (held
	 * responses are released first).
	 */
	public void stop() {
		releaseResponses();
		if (!this.server.isDisposed()) {
			this.server.disposeNow();
		}
		this.connections.close().awaitUninterruptibly();
	}

	/** Whether the engine listens (not {@link #stop() stopped}). */
	public boolean listening() {
		return !this.server.isDisposed();
	}

	/** Listens again on the same port after {@link #stop()}: the engine came back. */
	public void restart() {
		if (this.server.isDisposed()) {
			this.server = bind(this.port);
		}
	}

	/**
	 * Every knob at its default: answering at once, nothing refused, hung or crashing, an
	 * empty engine queue, no held responses; listening again if stopped. Counters, stored
	 * responses and the {@code running}, KV-usage and prefix-cache gauges stay (a class
	 * sets those once for all its tests). An {@link #unresponsive(String) unresponsive}
	 * engine stays hung, a {@link #gone(String) gone} one stopped.
	 */
	public void reset() {
		if (this.mode == Mode.GONE) {
			stop();
		}
		else {
			restart();
		}
		releaseResponses();
		this.waiting.set(0);
		this.refuseWith.set(0);
		this.crash.set("");
		this.hung.set(this.mode == Mode.UNRESPONSIVE);
		this.scrapesHang.set(this.mode == Mode.UNRESPONSIVE);
		this.endless.set(false);
		this.firstByteDelay.set(Duration.ZERO);
		this.countsItsRequests.set(false);
	}

	/** Holds every response from now on until {@link #releaseResponses()}. */
	public void holdResponses() {
		this.gate.compareAndSet(null, Sinks.empty());
	}

	/** Releases held responses; later requests are answered at once. */
	public void releaseResponses() {
		Sinks.Empty<Void> held = this.gate.getAndSet(null);
		if (held != null) {
			held.tryEmitEmpty();
		}
	}

	/**
	 * Reads the request body, then refuses the request ({@link #refuseWith}) or counts it
	 * served and answers it.
	 */
	private Mono<Void> serve(HttpServerRequest req, HttpServerResponse res,
			BiFunction<byte[], String, Mono<Void>> answer) {
		List<String> ids = req.requestHeaders().getAll("x-request-id");
		this.lastRequestId.set(ids.isEmpty() ? null : String.join(", ", ids));
		Sinks.Empty<Void> holding = this.gate.get();
		Mono<Void> gate = (holding != null) ? holding.asMono() : Mono.empty();
		return req.receive().aggregate().asByteArray().defaultIfEmpty(new byte[0]).flatMap(bytes -> {
			if (this.hung.get()) {
				this.held.incrementAndGet();
				return Mono.never();
			}
			if (this.refuseWith.get() != 0) {
				return refuse(res);
			}
			this.served.incrementAndGet();
			this.answering.incrementAndGet();
			// Held: nothing, not even the first byte, before the gate opens.
			return gate.then(Mono.defer(() -> answer.apply(bytes, new String(bytes, StandardCharsets.UTF_8))))
				.doFinally(signal -> this.answering.decrementAndGet());
		});
	}

	private Mono<Void> complete(HttpServerRequest req, HttpServerResponse res) {
		return serve(req, res, (bytes, body) -> {
			CRC32 crc = new CRC32();
			crc.update(bytes);
			Mono<Long> prefill = Mono.delay(this.firstByteDelay.get());
			String crash = this.crash.get();
			boolean reset = crash.startsWith("reset-");
			if ("before".equals(crash) || "reset-before".equals(crash)) {
				return Mono.fromRunnable(() -> drop(res, reset));
			}
			if ("silent-before".equals(crash)) {
				return res.header("content-type", "text/event-stream").sendHeaders().then().then(Mono.never());
			}
			if ("silent-during".equals(crash)) {
				return res.header("content-type", "text/event-stream")
					.sendString(Flux.concat(Mono.just(EVENTS.get(0)), Mono.never()), StandardCharsets.UTF_8)
					.then();
			}
			if ("during".equals(crash) || "reset-during".equals(crash)) {
				return res.header("content-type", "text/event-stream")
					.sendString(Flux.concat(Mono.just(EVENTS.get(0)), Mono.delay(Duration.ofMillis(100)).flatMap(t -> {
						drop(res, reset);
						return Mono.<String>never();
					})), StandardCharsets.UTF_8)
					.then();
			}
			if (this.endless.get() && body.replace(" ", "").contains("\"stream\":true")) {
				String event = "data: {\"choices\":[{\"delta\":{\"content\":\"" + "x".repeat(4096) + "\"}}]}\n\n";
				return res.header("content-type", "text/event-stream")
					.sendString(
							prefill.thenMany(Flux.interval(Duration.ofMillis(1)).onBackpressureDrop().map(i -> event)),
							StandardCharsets.UTF_8)
					.then();
			}
			if (body.replace(" ", "").contains("\"stream\":true")) {
				return res.header("content-type", "text/event-stream")
					.sendString(prefill.thenMany(Flux.fromIterable(EVENTS).delayElements(Duration.ofMillis(15))),
							StandardCharsets.UTF_8)
					.then();
			}
			return res.header("content-type", "application/json")
				.sendString(prefill.thenReturn("{\"id\":\"cmpl\",\"served_by\":\"" + this.name + "\",\"echo_bytes\":"
						+ bytes.length + ",\"echo_crc\":" + crc.getValue() + ",\"echo_encoding\":\""
						+ req.requestHeaders().get("content-encoding", "") + "\"}"))
				.then();
		});
	}

	/** Closes the connection of {@code res}, with a TCP reset when {@code reset}. */
	private static void drop(HttpServerResponse res, boolean reset) {
		res.withConnection(c -> {
			if (reset) {
				c.channel().config().setOption(ChannelOption.SO_LINGER, 0);
			}
			c.channel().close();
		});
	}

	/** Answers {@link #refuseWith}, as an engine refusing work does. */
	private Mono<Void> refuse(HttpServerResponse res) {
		int status = this.refuseWith.get();
		this.refused.incrementAndGet();
		return res.status(status)
			.header("content-type", "application/json")
			.header("retry-after", "1")
			.sendString(Mono.just("{\"error\":{\"message\":\"refused by " + this.name
					+ "\",\"type\":\"server_error\",\"code\":" + status + "}}"))
			.then();
	}

	/**
	 * The Responses API with vLLM's stored responses: every answer gets an id this stub
	 * remembers, and a request continuing a response it does not hold gets vLLM's 404.
	 */
	private Mono<Void> respond(HttpServerRequest req, HttpServerResponse res) {
		return serve(req, res, (bytes, body) -> {
			Matcher previous = PREVIOUS_RESPONSE.matcher(body);
			if (previous.find() && !this.stored.contains(previous.group(1))) {
				return res.status(404)
					.header("content-type", "application/json")
					.sendString(Mono.just("{\"error\":{\"message\":\"Response with id '" + previous.group(1)
							+ "' not found.\",\"type\":\"invalid_request_error\",\"code\":404}}"))
					.then();
			}
			String id = "resp_" + this.name + "_" + this.stored.size();
			this.stored.add(id);
			Mono<Long> prefill = Mono.delay(this.firstByteDelay.get());
			if (!body.replace(" ", "").contains("\"stream\":true")) {
				return res.header("content-type", "application/json")
					.sendString(prefill
						.thenReturn("{\"id\":\"" + id + "\",\"object\":\"response\",\"status\":\"completed\"}"))
					.then();
			}
			Flux<String> opening = Flux.fromIterable(RESPONSES_OPENING).map(e -> e.formatted(id));
			return res.header("content-type", "text/event-stream")
				.sendString(opening.concatWith(prefill.thenMany(Flux.fromIterable(RESPONSES_EVENTS))),
						StandardCharsets.UTF_8)
				.then();
		});
	}

	private String metrics() {
		long[] prefix = this.prefixCache.get();
		String prefixCounters = (prefix != null) ? """
				# TYPE vllm:prefix_cache_queries_total counter
				vllm:prefix_cache_queries_total{engine="0",model_name="m"} %d.0
				# TYPE vllm:prefix_cache_hits_total counter
				vllm:prefix_cache_hits_total{engine="0",model_name="m"} %d.0
				""".formatted(prefix[0], prefix[1]) : "";
		return """
				# HELP vllm:num_requests_running Number of requests in model execution batches.
				# TYPE vllm:num_requests_running gauge
				vllm:num_requests_running{engine="0",model_name="m"} %d.0
				# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
				# TYPE vllm:num_requests_waiting gauge
				vllm:num_requests_waiting{engine="0",model_name="m"} %d.0
				# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
				# TYPE vllm:kv_cache_usage_perc gauge
				vllm:kv_cache_usage_perc{engine="0",model_name="m"} %s
				""".formatted(this.running.get() + (this.countsItsRequests.get() ? this.answering.get() : 0),
				this.waiting.get(), this.kvCacheUsage.get()) + prefixCounters;
	}

	/** What an engine is between tests: see {@link #reset()}. */
	private enum Mode {

		ANSWERING, UNRESPONSIVE, GONE

	}

}

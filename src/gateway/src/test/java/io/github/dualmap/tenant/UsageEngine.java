package io.github.dualmap.tenant;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A vLLM-like engine on loopback that reports usage as vLLM does: in the body of a
 * non-streamed answer, and for a stream that asks for it
 * ({@code stream_options.include_usage}) in a final chunk with no choices.
 */
final class UsageEngine {

	/** Prompt tokens every answer reports. */
	static final int PROMPT_TOKENS = 120;

	/** Of which cached. */
	static final int CACHED_TOKENS = 20;

	/** Completion tokens every answer reports: one per streamed event. */
	static final int COMPLETION_TOKENS = 5;

	/** The bodies received, as sent by the gateway. */
	final List<String> bodies = new java.util.concurrent.CopyOnWriteArrayList<>();

	final AtomicInteger served = new AtomicInteger();

	/**
	 * Events sent by endless streams (a prompt that says "endless": an event every 5 ms
	 * until the gateway goes away).
	 */
	final AtomicInteger endlessEvents = new AtomicInteger();

	final AtomicReference<Duration> delay = new AtomicReference<>(Duration.ZERO);

	/**
	 * What a prompt that says "hold" waits for before its answer starts (completed: it
	 * does not wait).
	 */
	volatile CompletableFuture<Void> hold = CompletableFuture.completedFuture(null);

	private final DisposableServer server;

	UsageEngine() {
		this.server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.route(routes -> routes.post("/v1/chat/completions", this::complete)
				.post("/v1/completions", this::complete))
			.bindNow();
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.port();
	}

	void stop() {
		this.server.disposeNow();
	}

	static String usage() {
		return "{\"prompt_tokens\":" + PROMPT_TOKENS + ",\"total_tokens\":" + (PROMPT_TOKENS + COMPLETION_TOKENS)
				+ ",\"completion_tokens\":" + COMPLETION_TOKENS + ",\"prompt_tokens_details\":{\"cached_tokens\":"
				+ CACHED_TOKENS + "}}";
	}

	static String usageChunk() {
		return "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[],"
				+ "\"usage\":" + usage() + "}\n\n";
	}

	private Mono<Void> complete(HttpServerRequest req, HttpServerResponse res) {
		return req.receive().aggregate().asString(StandardCharsets.UTF_8).defaultIfEmpty("").flatMap(body -> {
			this.bodies.add(body);
			this.served.incrementAndGet();
			String compact = body.replace(" ", "");
			Mono<Long> wait = Mono.delay(this.delay.get());
			if (compact.contains("hold")) {
				wait = Mono.fromFuture(this.hold).then(wait);
			}
			if (!compact.contains("\"stream\":true")) {
				return res.header("content-type", "application/json")
					.sendString(wait.thenReturn("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"model\":\"m\","
							+ "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hi\"}}],"
							+ "\"usage\":" + usage() + "}"))
					.then();
			}
			String event = "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\","
					+ "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok\"}}]}\n\n";
			if (compact.contains("endless")) {
				return res.header("content-type", "text/event-stream")
					.sendString(Flux.interval(Duration.ofMillis(5)).map(i -> {
						this.endlessEvents.incrementAndGet();
						return event;
					}), StandardCharsets.UTF_8)
					.then();
			}
			List<String> events = new ArrayList<>();
			for (int i = 0; i < COMPLETION_TOKENS; i++) {
				events.add(event);
			}
			if (compact.contains("\"include_usage\":true")) {
				events.add(usageChunk());
			}
			events.add("data: [DONE]\n\n");
			return res.header("content-type", "text/event-stream")
				.sendString(wait.thenMany(Flux.fromIterable(events).delayElements(Duration.ofMillis(2))),
						StandardCharsets.UTF_8)
				.then();
		});
	}

}

package io.github.dualmap.actuate;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.github.dualmap.gateway.KeepAliveReads;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A vLLM-like backend on loopback: JSON or SSE ({@code "stream": true}) completions and
 * chat completions, a vLLM V1 {@code /metrics} with prefix cache counters, and a gate
 * that holds responses until the test opens it (to keep requests in flight).
 */
final class StubEngine {

	final AtomicInteger served = new AtomicInteger();

	private final AtomicReference<Sinks.Empty<Void>> gate = new AtomicReference<>();

	private final DisposableServer server;

	StubEngine() {
		this.server = KeepAliveReads.install(HttpServer.create())
			.host("127.0.0.1")
			.port(0)
			.route(routes -> routes.post("/v1/chat/completions", this::complete)
				.post("/v1/completions", this::complete)
				.get("/metrics",
						(req, res) -> res.header("content-type", "text/plain; version=0.0.4")
							.sendString(Mono.fromSupplier(StubEngine::metrics))))
			.bindNow();
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.port();
	}

	String instanceId() {
		return "127.0.0.1:" + this.server.port();
	}

	/** Holds every response from now on until {@link #open()}. */
	void close() {
		this.gate.set(Sinks.empty());
	}

	/** Releases held responses. */
	void open() {
		Sinks.Empty<Void> held = this.gate.getAndSet(null);
		if (held != null) {
			held.tryEmitEmpty();
		}
	}

	void stop() {
		open();
		this.server.disposeNow();
	}

	private Mono<Void> complete(HttpServerRequest req, HttpServerResponse res) {
		Sinks.Empty<Void> held = this.gate.get();
		Mono<Void> wait = held == null ? Mono.empty() : held.asMono();
		return req.receive().aggregate().asString(StandardCharsets.UTF_8).defaultIfEmpty("").flatMap(body -> {
			this.served.incrementAndGet();
			if (body.replace(" ", "").contains("\"stream\":true")) {
				// Nothing, not even the first event, before the gate opens: the request
				// stays in prefill as far as the gateway can tell.
				return wait.then(res.header("content-type", "text/event-stream")
					.sendString(Flux.just("data: {\"choices\":[{\"text\":\"ok\"}]}\n\n", "data: [DONE]\n\n"),
							StandardCharsets.UTF_8)
					.then());
			}
			return wait.then(res.header("content-type", "application/json")
				.sendString(Mono.just("{\"id\":\"cmpl\",\"choices\":[{\"text\":\"ok\"}]}"))
				.then());
		});
	}

	private static String metrics() {
		return """
				# TYPE vllm:num_requests_running gauge
				vllm:num_requests_running{engine="0",model_name="m"} 1.0
				# TYPE vllm:num_requests_waiting gauge
				vllm:num_requests_waiting{engine="0",model_name="m"} 0.0
				# TYPE vllm:kv_cache_usage_perc gauge
				vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25
				# TYPE vllm:prefix_cache_queries_total counter
				vllm:prefix_cache_queries_total{engine="0",model_name="m"} 1000.0
				# TYPE vllm:prefix_cache_hits_total counter
				vllm:prefix_cache_hits_total{engine="0",model_name="m"} 400.0
				""";
	}

}

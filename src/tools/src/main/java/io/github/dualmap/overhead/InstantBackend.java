package io.github.dualmap.overhead;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.github.dualmap.gateway.KeepAliveReads;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * An OpenAI-compatible backend that answers at once: a fixed chat completion (or three
 * SSE chunks when the body asks to stream) after reading the whole body, and an idle vLLM
 * V1 {@code /metrics}. It spends as little as a server can, so what a proxy in front of
 * it adds is what is measured.
 */
final class InstantBackend implements AutoCloseable {

	static final String COMPLETION = "{\"id\":\"cmpl-0\",\"object\":\"chat.completion\",\"model\":\"m\","
			+ "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},"
			+ "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}";

	static final String STREAM = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"o\"}}]}\n\n"
			+ "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"k\"}}]}\n\n" + "data: [DONE]\n\n";

	static final String METRICS = """
			# TYPE vllm:num_requests_running gauge
			vllm:num_requests_running{model_name="m"} 0.0
			# TYPE vllm:num_requests_waiting gauge
			vllm:num_requests_waiting{model_name="m"} 0.0
			# TYPE vllm:kv_cache_usage_perc gauge
			vllm:kv_cache_usage_perc{model_name="m"} 0.0
			""";

	private final DisposableServer server;

	InstantBackend() {
		this.server = KeepAliveReads.install(HttpServer.create())
			.host("127.0.0.1")
			.port(0)
			.route(routes -> routes.post("/v1/chat/completions", InstantBackend::complete)
				.get("/metrics",
						(req, res) -> res.header("Content-Type", "text/plain; version=0.0.4")
							.sendString(Mono.just(METRICS))))
			.bindNow(Duration.ofSeconds(10));
	}

	private static Mono<Void> complete(HttpServerRequest req, HttpServerResponse res) {
		return req.receive().aggregate().asString(StandardCharsets.UTF_8).defaultIfEmpty("").flatMap(body -> {
			boolean stream = body.contains("\"stream\":true");
			return res.header("Content-Type", stream ? "text/event-stream" : "application/json")
				.sendString(Mono.just(stream ? STREAM : COMPLETION))
				.then();
		});
	}

	String baseUrl() {
		return "http://127.0.0.1:" + this.server.port();
	}

	@Override
	public void close() {
		this.server.disposeNow(Duration.ofSeconds(5));
	}

}

package io.github.dualmap.emulator;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.engine.EngineProfile;
import io.github.dualmap.stats.EngineFlavour;
import io.github.dualmap.stats.EngineMetricsParser;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

class EmulatorServerTests {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private static final String MODEL = EmulatorSettings.DEFAULT_MODEL;

	private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private static EmulatorServer server;

	@BeforeAll
	static void start() {
		server = EmulatorServer
			.start(EmulatorSettings.of(EngineProfile.h100_8b().withMaxModelLen(4096)).withTimeScale(20), 0);
	}

	@AfterAll
	static void stop() {
		server.close();
	}

	@Test
	void healthAndModels() throws Exception {
		assertThat(get("/health").statusCode()).isEqualTo(200);
		HttpResponse<String> models = get("/v1/models");
		assertThat(models.statusCode()).isEqualTo(200);
		JsonNode body = JSON.readTree(models.body());
		assertThat(body.path("data").get(0).path("id").stringValue()).isEqualTo(MODEL);
		assertThat(body.path("data").get(0).path("max_model_len").intValue()).isEqualTo(4096);
	}

	@Test
	void completionHonoursMaxTokensAndReportsCachedTokensOnRepeat() throws Exception {
		String prompt = "Summarise the following report. ".repeat(40);
		JsonNode first = JSON.readTree(post("/v1/completions",
				"{\"model\":\"" + MODEL + "\",\"prompt\":" + JSON.writeValueAsString(prompt) + ",\"max_tokens\":5}")
			.body());
		assertThat(first.path("object").stringValue()).isEqualTo("text_completion");
		assertThat(first.path("choices").get(0).path("text").stringValue()).isEqualTo(FillerText.tokens(5));
		assertThat(first.path("choices").get(0).path("finish_reason").stringValue()).isEqualTo("length");
		JsonNode usage = first.path("usage");
		assertThat(usage.path("prompt_tokens").intValue()).isEqualTo(prompt.length() / 4);
		assertThat(usage.path("completion_tokens").intValue()).isEqualTo(5);
		assertThat(usage.path("prompt_tokens_details").path("cached_tokens").intValue()).isZero();
		JsonNode second = JSON
			.readTree(post("/v1/completions", "{\"prompt\":" + JSON.writeValueAsString(prompt) + ",\"max_tokens\":5}")
				.body());
		// 320 tokens = 20 full blocks, hit capped at prompt length minus one: 19 blocks
		assertThat(second.path("usage").path("prompt_tokens_details").path("cached_tokens").intValue())
			.isEqualTo(19 * 16);
	}

	@Test
	void chatStreamsTokensUsageAndDone() throws Exception {
		HttpResponse<String> res = post("/v1/chat/completions",
				"{\"model\":\"" + MODEL
						+ "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello there\"}],\"max_tokens\":3,"
						+ "\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
		assertThat(res.statusCode()).isEqualTo(200);
		assertThat(res.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/event-stream");
		List<String> events = new ArrayList<>();
		for (String block : res.body().split("\n\n")) {
			assertThat(block).startsWith("data: ");
			events.add(block.substring(6));
		}
		assertThat(events).hasSize(6).last().isEqualTo("[DONE]");
		assertThat(JSON.readTree(events.get(0)).path("choices").get(0).path("delta").path("role").stringValue())
			.isEqualTo("assistant");
		StringBuilder text = new StringBuilder();
		for (int i = 1; i <= 3; i++) {
			JsonNode chunk = JSON.readTree(events.get(i));
			assertThat(chunk.path("object").stringValue()).isEqualTo("chat.completion.chunk");
			text.append(chunk.path("choices").get(0).path("delta").path("content").stringValue());
		}
		assertThat(text.toString()).isEqualTo(FillerText.tokens(3));
		JsonNode usage = JSON.readTree(events.get(4)).path("usage");
		assertThat(usage.path("completion_tokens").intValue()).isEqualTo(3);
		assertThat(usage.path("prompt_tokens_details").has("cached_tokens")).isTrue();
	}

	@Test
	void promptsShareCachedBlocksOnlyUnderEqualCacheSalts() throws Exception {
		String prompt = JSON.writeValueAsString("A salted report for one tenant only. ".repeat(40));
		assertThat(cachedTokens(prompt, ",\"cache_salt\":\"tenant-a\"")).isZero();
		assertThat(cachedTokens(prompt, ",\"cache_salt\":\"tenant-a\"")).isPositive();
		assertThat(cachedTokens(prompt, ",\"cache_salt\":\"tenant-b\"")).isZero();
		assertThat(cachedTokens(prompt, "")).isZero();
		assertThat(cachedTokens(prompt, ",\"cache_salt\":null")).isPositive();
		assertError(post("/v1/completions", "{\"prompt\":\"hi\",\"cache_salt\":\"\"}"), 400, "BadRequestError",
				"Parameter 'cache_salt' must be a non-empty string if provided.");
		assertError(
				post("/v1/chat/completions",
						"{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"cache_salt\":3}"),
				400, "BadRequestError", "Parameter 'cache_salt' must be a non-empty string if provided.");
	}

	@Test
	void aCompletionIsNamedByTheRequestIdItCameWithAsVllmNamesIt() throws Exception {
		HttpResponse<String> res = http
			.send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/chat/completions"))
				.timeout(Duration.ofSeconds(30))
				.header("Content-Type", "application/json")
				.header("X-Request-Id", "gw-7f3a-42")
				.POST(HttpRequest.BodyPublishers
					.ofString("{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":1}"))
				.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(JSON.readTree(res.body()).path("id").stringValue()).isEqualTo("chatcmpl-gw-7f3a-42");
		// Without one, a fresh id.
		assertThat(JSON.readTree(post("/v1/completions", "{\"prompt\":\"Hi\",\"max_tokens\":1}").body())
			.path("id")
			.stringValue()).matches("cmpl-[0-9a-f]{32}");
	}

	@Test
	void nonStreamingChatAndStreamingCompletion() throws Exception {
		JsonNode chat = JSON.readTree(post("/v1/chat/completions",
				"{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"}]}],\"max_tokens\":2}")
			.body());
		assertThat(chat.path("object").stringValue()).isEqualTo("chat.completion");
		assertThat(chat.path("choices").get(0).path("message").path("content").stringValue())
			.isEqualTo(FillerText.tokens(2));
		String stream = post("/v1/completions", "{\"prompt\":[1,2,3,4,5],\"max_tokens\":2,\"stream\":true}").body();
		assertThat(List.of(stream.split("\n\n"))).hasSize(3).last().isEqualTo("data: [DONE]");
		assertThat(JSON.readTree(stream.split("\n\n")[1].substring(6))
			.path("choices")
			.get(0)
			.path("finish_reason")
			.stringValue()).isEqualTo("length");
	}

	@Test
	void responsesAnswerWithTheResponseObjectAndCachedTokensOnRepeat() throws Exception {
		String body = "{\"model\":\"" + MODEL + "\",\"instructions\":"
				+ JSON.writeValueAsString("You review contracts. ".repeat(30)) + ",\"input\":[{\"role\":\"user\","
				+ "\"content\":[{\"type\":\"input_text\",\"text\":\"Clause 4?\"}]}],\"max_output_tokens\":4}";
		JsonNode first = JSON.readTree(post("/v1/responses", body).body());
		assertThat(first.path("id").stringValue()).startsWith("resp_");
		assertThat(first.path("object").stringValue()).isEqualTo("response");
		assertThat(first.path("status").stringValue()).isEqualTo("completed");
		JsonNode message = first.path("output").get(0);
		assertThat(message.path("type").stringValue()).isEqualTo("message");
		assertThat(message.path("content").get(0).path("type").stringValue()).isEqualTo("output_text");
		assertThat(message.path("content").get(0).path("text").stringValue()).isEqualTo(FillerText.tokens(4));
		assertThat(first.path("usage").path("output_tokens").intValue()).isEqualTo(4);
		assertThat(first.path("usage").path("input_tokens_details").path("cached_tokens").intValue()).isZero();
		JsonNode second = JSON.readTree(post("/v1/responses", body).body());
		assertThat(second.path("usage").path("input_tokens_details").path("cached_tokens").intValue()).isPositive();
	}

	@Test
	void aStoredResponseIsContinuedOnItsCachedTranscriptAndAnUnknownOneIs404() throws Exception {
		String first = "{\"instructions\":" + JSON.writeValueAsString("You plan trips. ".repeat(40))
				+ ",\"input\":\"Three days in Rome?\",\"max_output_tokens\":8}";
		JsonNode one = JSON.readTree(post("/v1/responses", first).body());
		int firstPrompt = one.path("usage").path("input_tokens").intValue();
		JsonNode two = JSON.readTree(post("/v1/responses", "{\"previous_response_id\":\"" + one.path("id").stringValue()
				+ "\",\"input\":\"And Florence?\",\"max_output_tokens\":4}")
			.body());
		assertThat(two.path("status").stringValue()).isEqualTo("completed");
		// The whole first exchange is the prefix of the second prompt, and cached.
		assertThat(two.path("usage").path("input_tokens").intValue()).isGreaterThan(firstPrompt + 8);
		assertThat(two.path("usage").path("input_tokens_details").path("cached_tokens").intValue())
			.isGreaterThanOrEqualTo(firstPrompt - 16);
		assertError(post("/v1/responses", "{\"previous_response_id\":\"resp_unknown\",\"input\":\"x\"}"), 404,
				"NotFoundError", "Response with id 'resp_unknown' not found.");
		// A stored response can be retrieved and deleted; then it is gone.
		String id = one.path("id").stringValue();
		JsonNode got = JSON.readTree(get("/v1/responses/" + id).body());
		assertThat(got.path("id").stringValue()).isEqualTo(id);
		assertThat(got.path("status").stringValue()).isEqualTo("completed");
		assertThat(got.path("output").get(0).path("content").get(0).path("text").stringValue())
			.isEqualTo(FillerText.tokens(8));
		HttpResponse<String> deleted = http.send(
				HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/responses/" + id)).DELETE().build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(JSON.readTree(deleted.body()).path("deleted").booleanValue()).isTrue();
		assertError(get("/v1/responses/" + id), 404, "NotFoundError", "not found");
		JsonNode unstored = JSON
			.readTree(post("/v1/responses", "{\"input\":\"x\",\"store\":false,\"max_output_tokens\":1}").body());
		assertError(
				post("/v1/responses",
						"{\"previous_response_id\":\"" + unstored.path("id").stringValue() + "\",\"input\":\"y\"}"),
				404, "NotFoundError", "not found");
	}

	@Test
	void responsesStreamOpensAtOnceThenStreamsTheAnswerAndCompletes() throws Exception {
		HttpResponse<String> res = post("/v1/responses",
				"{\"input\":\"Hello there\",\"max_output_tokens\":3,\"stream\":true}");
		assertThat(res.headers().firstValue("content-type").orElse("")).startsWith("text/event-stream");
		List<String> types = new ArrayList<>();
		List<Integer> sequence = new ArrayList<>();
		StringBuilder deltas = new StringBuilder();
		JsonNode completed = null;
		for (String event : res.body().split("\n\n")) {
			String[] lines = event.split("\n");
			assertThat(lines[0]).startsWith("event: ");
			JsonNode data = JSON.readTree(lines[1].substring("data: ".length()));
			assertThat(data.path("type").stringValue()).isEqualTo(lines[0].substring("event: ".length()));
			types.add(data.path("type").stringValue());
			sequence.add(data.path("sequence_number").intValue());
			if (data.path("type").stringValue().equals("response.output_text.delta")) {
				deltas.append(data.path("delta").stringValue());
			}
			if (data.path("type").stringValue().equals("response.completed")) {
				completed = data.path("response");
			}
		}
		assertThat(types).containsExactly("response.created", "response.in_progress", "response.output_item.added",
				"response.content_part.added", "response.output_text.delta", "response.output_text.delta",
				"response.output_text.delta", "response.output_text.done", "response.content_part.done",
				"response.output_item.done", "response.completed");
		assertThat(sequence).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
		assertThat(deltas.toString()).isEqualTo(FillerText.tokens(3));
		assertThat(completed.path("status").stringValue()).isEqualTo("completed");
		assertThat(completed.path("usage").path("output_tokens").intValue()).isEqualTo(3);
	}

	@Test
	void badRequestsGetVllmErrors() throws Exception {
		assertError(post("/v1/responses", "{\"model\":\"" + MODEL + "\"}"), 400, "BadRequestError", "input");
		assertError(post("/v1/responses", "{\"input\":[{\"type\":\"web_search_call\"}]}"), 400, "BadRequestError",
				"only message, function_call and function_call_output items are supported");
		assertError(post("/v1/responses", "{\"input\":\"hi\",\"max_output_tokens\":0}"), 400, "BadRequestError",
				"max_output_tokens must be at least 1, got 0.");
		assertError(post("/v1/completions", "{not json"), 400, "BadRequestError", "JSON decode error");
		assertError(post("/v1/completions", "{\"prompt\":\"hi\",\"max_tokens\":0}"), 400, "BadRequestError",
				"max_tokens must be at least 1, got 0.");
		assertError(post("/v1/completions", "{\"model\":\"gpt-4\",\"prompt\":\"hi\"}"), 404, "NotFoundError",
				"The model `gpt-4` does not exist.");
		assertError(post("/v1/chat/completions", "{\"messages\":[]}"), 400, "BadRequestError", "messages");
		String longPrompt = JSON.writeValueAsString("abcd".repeat(5000));
		assertError(post("/v1/completions", "{\"prompt\":" + longPrompt + "}"), 400, "BadRequestError",
				"This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens.");
		assertError(post("/v1/completions", "{\"prompt\":\"abcdabcd\",\"max_tokens\":4095}"), 400, "BadRequestError",
				"'max_tokens' or 'max_completion_tokens' is too large: 4095. This model's maximum context length is 4096 tokens and your request has 2 input tokens (4095 > 4096 - 2).");
	}

	@Test
	void bodiesWithAByteOrderMarkOrInUtf16AreReadAsVllmReadsThem() throws Exception {
		String body = "{\"prompt\":\"caf\u00e9\",\"max_tokens\":1}";
		byte[] utf8 = body.getBytes(StandardCharsets.UTF_8);
		byte[] bom = new byte[utf8.length + 3];
		bom[0] = (byte) 0xEF;
		bom[1] = (byte) 0xBB;
		bom[2] = (byte) 0xBF;
		System.arraycopy(utf8, 0, bom, 3, utf8.length);
		for (byte[] bytes : List.of(bom, body.getBytes(StandardCharsets.UTF_16LE),
				body.getBytes(StandardCharsets.UTF_16))) {
			HttpResponse<String> res = http
				.send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/completions"))
					.header("Content-Type", "application/json")
					.POST(HttpRequest.BodyPublishers.ofByteArray(bytes))
					.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(res.statusCode()).as(res.body()).isEqualTo(200);
		}
		assertThat(EmulatorServer.jsonText(body.getBytes(StandardCharsets.UTF_16BE))).isEqualTo(body);
	}

	/**
	 * vLLM's server (FastAPI on uvicorn, no request-decompressing middleware) does not
	 * decode a request's {@code Content-Encoding}: it reads the bytes as sent with
	 * Python's {@code json.loads}, whose UTF-8 decoding fails on compressed data (and on
	 * any body that is not valid in its encoding), and FastAPI answers that "There was an
	 * error parsing the body", which vLLM's handler of HTTP errors turns into a 400 of
	 * type "Bad Request". The emulator answers the same.
	 */
	@Test
	void aCompressedOrUndecodableBodyIsNotReadAsVllmDoesNotReadIt() throws Exception {
		String body = "{\"prompt\":\"caf\u00e9 compressed\",\"max_tokens\":1}";
		java.io.ByteArrayOutputStream gzipped = new java.io.ByteArrayOutputStream();
		try (java.util.zip.GZIPOutputStream gzip = new java.util.zip.GZIPOutputStream(gzipped)) {
			gzip.write(body.getBytes(StandardCharsets.UTF_8));
		}
		java.io.ByteArrayOutputStream deflated = new java.io.ByteArrayOutputStream();
		try (java.util.zip.DeflaterOutputStream deflate = new java.util.zip.DeflaterOutputStream(deflated)) {
			deflate.write(body.getBytes(StandardCharsets.UTF_8));
		}
		String[] codings = { "gzip", "deflate", null };
		byte[][] bytes = { gzipped.toByteArray(), deflated.toByteArray(),
				// Latin-1, not UTF-8: "caf\xe9".
				body.getBytes(StandardCharsets.ISO_8859_1) };
		for (int i = 0; i < bytes.length; i++) {
			HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/completions"))
				.header("Content-Type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofByteArray(bytes[i]));
			if (codings[i] != null) {
				request.header("Content-Encoding", codings[i]);
			}
			HttpResponse<String> res = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(res.statusCode()).as(codings[i] + ": " + res.body()).isEqualTo(400);
			assertThat(res.body()).isEqualTo("{\"error\":{\"message\":\"There was an error parsing the body\","
					+ "\"type\":\"Bad Request\",\"param\":null,\"code\":400}}");
		}
	}

	@Test
	void routingErrorsAreFastApisOwn() throws Exception {
		for (String method : List.of("GET", "PUT", "DELETE")) {
			HttpResponse<String> res = http
				.send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/chat/completions"))
					.method(method, HttpRequest.BodyPublishers.noBody())
					.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(res.statusCode()).isEqualTo(405);
			assertThat(res.headers().firstValue("Allow")).hasValue("POST");
			assertThat(JSON.readTree(res.body()).path("detail").stringValue()).isEqualTo("Method Not Allowed");
		}
		HttpResponse<String> models = post("/v1/models", "{}");
		assertThat(models.statusCode()).isEqualTo(405);
		assertThat(models.headers().firstValue("Allow")).hasValue("GET");
		for (HttpResponse<String> res : List.of(get("/v1/nothing"),
				post("/v1/chat//completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))) {
			assertThat(res.statusCode()).isEqualTo(404);
			assertThat(JSON.readTree(res.body()).path("detail").stringValue()).isEqualTo("Not Found");
		}
	}

	@Test
	void metricsCountWhatWasSent() throws Exception {
		try (EmulatorServer own = EmulatorServer.start(EmulatorSettings.of(EngineProfile.h100_8b()).withTimeScale(20),
				0)) {
			int prompt = 0;
			for (int i = 0; i < 3; i++) {
				String text = "Request number " + i + " asks about the weather in a city. ";
				prompt += (text.length() + 3) / 4;
				assertThat(post(own, "/v1/completions",
						"{\"prompt\":" + JSON.writeValueAsString(text) + ",\"max_tokens\":4}")
					.statusCode()).isEqualTo(200);
			}
			HttpResponse<String> res = get(own, "/metrics");
			assertThat(res.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/plain");
			PrometheusText metrics = new PrometheusText(res.body());
			String model = "model_name=" + MODEL;
			assertThat(metrics.types).containsEntry("vllm:prefix_cache_queries_total", "counter")
				.containsEntry("vllm:time_to_first_token_seconds", "histogram");
			assertThat(metrics.value("vllm:prompt_tokens_total", model, "engine=0")).isEqualTo(prompt);
			assertThat(metrics.value("vllm:generation_tokens_total", model)).isEqualTo(12);
			assertThat(metrics.value("vllm:request_success_total", model)).isEqualTo(3);
			assertThat(metrics.value("vllm:prefix_cache_queries_total", model)).isEqualTo(prompt);
			assertThat(metrics.value("vllm:time_to_first_token_seconds_count", model)).isEqualTo(3);
			assertThat(metrics.value("vllm:time_to_first_token_seconds_bucket", model, "le=+Inf")).isEqualTo(3);
			assertThat(metrics.value("vllm:inter_token_latency_seconds_count", model)).isEqualTo(9);
			assertThat(metrics.value("vllm:e2e_request_latency_seconds_count", model)).isEqualTo(3);
			assertThat(metrics.value("vllm:num_requests_running", model)).isZero();
			assertThat(metrics.value("vllm:num_requests_waiting", model)).isZero();
			assertThat(metrics.value("vllm:kv_cache_usage_perc", model)).isZero();
			assertThat(metrics.value("vllm:cache_config_info", "num_gpu_blocks=27500", "block_size=16")).isEqualTo(1);

			// What the gateway's own scraper makes of it.
			EngineSnapshot snapshot = new EngineMetricsParser().parse(res.body(), 42);
			assertThat(new EngineMetricsParser().detect(res.body())).isEqualTo(EngineFlavour.VLLM_V1);
			assertThat(snapshot.sampledAtNanos()).isEqualTo(42);
			assertThat(snapshot.waiting()).isZero();
			assertThat(snapshot.running()).isZero();
			assertThat(snapshot.kvUsage()).isZero();
			assertThat(snapshot.prefixQueriesTokens()).isEqualTo(prompt);
			assertThat(snapshot.prefixHitsTokens()).isEqualTo(metrics.value("vllm:prefix_cache_hits_total", model));
			assertThat(snapshot.kvCapacityTokens()).isEqualTo(27_500L * 16);
		}
	}

	@Test
	void nonStreamingHeadersArriveOnlyAfterGeneration() throws Exception {
		// Real time: 64 decode steps of several ms each, so headers sent before the end
		// of
		// generation would arrive while the engine still counts the request as
		// unfinished.
		try (EmulatorServer own = EmulatorServer.start(EmulatorSettings.of(EngineProfile.h100_8b()), 0)) {
			HttpResponse<java.io.InputStream> res = http
				.send(HttpRequest.newBuilder(URI.create(own.baseUrl() + "/v1/completions"))
					.timeout(Duration.ofSeconds(30))
					.header("Content-Type", "application/json")
					.POST(HttpRequest.BodyPublishers
						.ofString("{\"prompt\":\"Tell me a long story.\",\"max_tokens\":64,\"ignore_eos\":true}"))
					.build(), HttpResponse.BodyHandlers.ofInputStream());
			long finishedAtHeaders = own.stats().finished();
			try (var body = res.body()) {
				body.readAllBytes();
			}
			assertThat(res.statusCode()).isEqualTo(200);
			assertThat(finishedAtHeaders).isEqualTo(1);
		}
	}

	@Test
	void streamingHeadersArriveBeforeGenerationEnds() throws Exception {
		// The counterpart: with stream=true the headers (and the first chunk) come at the
		// first
		// token, long before 256 decode steps in real time are over.
		try (EmulatorServer own = EmulatorServer.start(EmulatorSettings.of(EngineProfile.h100_8b()), 0)) {
			HttpResponse<java.io.InputStream> res = http.send(HttpRequest
				.newBuilder(URI.create(own.baseUrl() + "/v1/completions"))
				.timeout(Duration.ofSeconds(30))
				.header("Content-Type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofString(
						"{\"prompt\":\"Tell me a long story.\",\"max_tokens\":256,\"stream\":true,\"ignore_eos\":true}"))
				.build(), HttpResponse.BodyHandlers.ofInputStream());
			long finishedAtHeaders = own.stats().finished();
			try (var body = res.body()) {
				body.readAllBytes();
			}
			assertThat(res.statusCode()).isEqualTo(200);
			assertThat(finishedAtHeaders).isZero();
			assertThat(own.stats().finished()).isEqualTo(1);
		}
	}

	@Test
	void sglangFlavour() throws Exception {
		try (EmulatorServer own = EmulatorServer.start(
				EmulatorSettings.of(EngineProfile.h100_8b()).withTimeScale(20).withMetrics(MetricsFlavour.SGLANG), 0)) {
			post(own, "/v1/completions", "{\"prompt\":\"hello world\",\"max_tokens\":2}");
			PrometheusText metrics = new PrometheusText(get(own, "/metrics").body());
			assertThat(metrics.value("sglang:num_queue_reqs")).isZero();
			assertThat(metrics.value("sglang:max_total_num_tokens")).isEqualTo(440_000);
			assertThat(metrics.value("sglang:generation_tokens_total")).isEqualTo(2);
			assertThat(metrics.value("sglang:time_to_first_token_seconds_count")).isEqualTo(1);

			String body = get(own, "/metrics").body();
			EngineSnapshot snapshot = new EngineMetricsParser().parse(body, 0);
			assertThat(new EngineMetricsParser().detect(body)).isEqualTo(EngineFlavour.SGLANG);
			assertThat(snapshot.waiting()).isZero();
			assertThat(snapshot.running()).isZero();
			assertThat(snapshot.kvCapacityTokens()).isEqualTo(440_000);
		}
	}

	private static void assertError(HttpResponse<String> res, int status, String type, String message) {
		assertThat(res.statusCode()).isEqualTo(status);
		JsonNode error = JSON.readTree(res.body()).path("error");
		assertThat(error.path("type").stringValue()).isEqualTo(type);
		assertThat(error.path("code").intValue()).isEqualTo(status);
		assertThat(error.path("message").stringValue()).contains(message);
	}

	private static HttpResponse<String> get(String path) throws Exception {
		return get(server, path);
	}

	/**
	 * Cached tokens of a one-token completion of {@code prompt} (JSON) with more members.
	 */
	private static int cachedTokens(String prompt, String members) throws Exception {
		return JSON
			.readTree(post("/v1/completions", "{\"prompt\":" + prompt + ",\"max_tokens\":1" + members + "}").body())
			.path("usage")
			.path("prompt_tokens_details")
			.path("cached_tokens")
			.intValue();
	}

	private static HttpResponse<String> post(String path, String body) throws Exception {
		return post(server, path, body);
	}

	static HttpResponse<String> get(EmulatorServer s, String path) throws Exception {
		return http.send(HttpRequest.newBuilder(URI.create(s.baseUrl() + path)).timeout(Duration.ofSeconds(30)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

	static HttpResponse<String> post(EmulatorServer s, String path, String body) throws Exception {
		return http.send(HttpRequest.newBuilder(URI.create(s.baseUrl() + path))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

}

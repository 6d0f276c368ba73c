package io.github.dualmap.gateway;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32;
import java.util.regex.Pattern;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;

import io.github.dualmap.StubEngine;
import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.RawHttp;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The gateway on a random port in front of three stub vLLM engines: affinity, SLO switch
 * and back, failover past a stopped engine, body limits, errors and streaming. One
 * context for all of it; after each test every engine listens and answers at once again,
 * every instance takes requests with a closed breaker and nothing is in flight, so the
 * tests run in any order.
 */
@GatewayIntegrationTest(
		properties = { "dualmap.scrape.interval=50ms", "dualmap.scrape.timeout=500ms", "dualmap.scrape.stale-after=2s",
				// Keys stay at depth 1 for the whole run: every test reuses its prefix
				// many times.
				"dualmap.hot-prefix.window=1000", "dualmap.hot-prefix.min-samples=1000",
				"dualmap.breaker.wait-duration-in-open-state=60s",
				// The stubs answer in times that do not depend on the prompt, and several
				// tests need new prompts spread over every instance within a few seconds
				// (the stopped backend must see enough connect failures to open its
				// breaker): per-instance TTFT models send cold prompts to whichever stub
				// looked fastest, and relax toward the pool's fit only after
				// ttft.relax-after without observations.
				"dualmap.ttft.model=linear", "logging.level.io.github.dualmap.gateway.ConnectFailoverFilter=debug" })
@ExtendWith(OutputCaptureExtension.class)
class DualMapGatewayIntegrationTests {

	@Discovered
	static final List<StubEngine> ENGINES = List.of(new StubEngine("a"), new StubEngine("b"), new StubEngine("c"));

	@Autowired
	WebTestClient client;

	@LocalServerPort
	int port;

	@Autowired
	DualMapRegistry registry;

	/**
	 * Undoes what a test did to the pool: a stopped engine back, drained instances
	 * undrained, breakers closed and reset, engine state scraped again, nothing in
	 * flight.
	 */
	@AfterEach
	void restorePool() {
		ServicePool service = this.registry.service("llm");
		ENGINES.forEach(e -> {
			e.restart();
			e.reset();
			service.undrain(e.instanceId());
			service.breakers().breaker(e.instanceId()).reset();
		});
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(service.instancePool().instances()).allSatisfy(s -> {
				assertThat(s.healthy()).isTrue();
				assertThat(s.engineFailed()).isFalse();
			}));
		StubEngine.settle(ENGINES, service);
	}

	static String chat(String system, String user, boolean stream) {
		return """
				{"model":"m","stream":%s,"messages":[{"role":"system","content":"%s"},{"role":"user","content":"%s"}]}"""
			.formatted(stream, system, user);
	}

	static String systemPrompt(String topic) {
		return ("You are the assistant for " + topic + ". ").repeat(20);
	}

	EntityExchangeResult<byte[]> post(String path, String body) {
		return this.client.post()
			.uri(path)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchange()
			.expectBody(byte[].class)
			.returnResult();
	}

	static String instance(EntityExchangeResult<?> result) {
		return result.getResponseHeaders().getFirst(DispatchAccountingFilter.INSTANCE_HEADER);
	}

	static String reason(EntityExchangeResult<?> result) {
		return result.getResponseHeaders().getFirst(DispatchAccountingFilter.REASON_HEADER);
	}

	StubEngine engine(String instanceId) {
		return ENGINES.stream().filter(e -> e.instanceId().equals(instanceId)).findFirst().orElseThrow();
	}

	@Test
	void equalPrefixesLandOnOneInstance() {
		String system = systemPrompt("billing");
		Set<String> instances = new HashSet<>();
		for (int i = 0; i < 8; i++) {
			EntityExchangeResult<byte[]> r = post("/v1/chat/completions", chat(system, "question " + i, false));
			assertThat(r.getStatus().value()).isEqualTo(200);
			assertThat(reason(r)).isEqualTo("affinity");
			instances.add(instance(r));
		}
		assertThat(instances).hasSize(1);
		String prompt = "{\"model\":\"m\",\"prompt\":\"" + systemPrompt("completions") + "\"}";
		Set<String> completionInstances = new HashSet<>();
		for (int i = 0; i < 4; i++) {
			completionInstances.add(instance(post("/v1/completions", prompt)));
		}
		assertThat(completionInstances).hasSize(1);
	}

	@Test
	void requestsLeaveAnInstanceWhoseQueueGrowsAndComeBackWhenItDrains() {
		String system = systemPrompt("support");
		EntityExchangeResult<byte[]> first = post("/v1/chat/completions", chat(system, "hello", false));
		String home = instance(first);
		StubEngine busy = engine(home);
		busy.waiting.set(5_000);
		try {
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
				EntityExchangeResult<byte[]> r = post("/v1/chat/completions", chat(system, "while busy", false));
				assertThat(instance(r)).isNotEqualTo(home);
				assertThat(reason(r)).isIn("slo-switch", "hotspot");
			});
		}
		finally {
			busy.waiting.set(0);
		}
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			EntityExchangeResult<byte[]> r = post("/v1/chat/completions", chat(system, "drained", false));
			assertThat(instance(r)).isEqualTo(home);
			assertThat(reason(r)).isEqualTo("affinity");
		});
	}

	@Test
	void serverSentEventsArriveUnchangedAndInOrder() {
		EntityExchangeResult<byte[]> r = post("/v1/chat/completions", chat(systemPrompt("streams"), "go", true));
		assertThat(r.getStatus().value()).isEqualTo(200);
		assertThat(r.getResponseHeaders().getContentType().isCompatibleWith(MediaType.TEXT_EVENT_STREAM)).isTrue();
		assertThat(new String(r.getResponseBodyContent(), StandardCharsets.UTF_8))
			.isEqualTo(String.join("", StubEngine.EVENTS));
		EntityExchangeResult<byte[]> completion = post("/v1/completions",
				"{\"model\":\"m\",\"stream\":true,\"prompt\":\"count\"}");
		assertThat(new String(completion.getResponseBodyContent(), StandardCharsets.UTF_8))
			.isEqualTo(String.join("", StubEngine.EVENTS));
	}

	@Test
	void theBodyReachesTheBackendByteForByte() {
		String body = chat(systemPrompt("bytes"), "unicode \u00e9\u4e2d", false);
		EntityExchangeResult<byte[]> r = post("/v1/chat/completions", body);
		assertThat(new String(r.getResponseBodyContent(), StandardCharsets.UTF_8))
			.contains("\"echo_bytes\":" + body.getBytes(StandardCharsets.UTF_8).length);
	}

	@Test
	void aBodyAboveTheLimitGets413() {
		byte[] huge = new byte[40 * 1024 * 1024];
		java.util.Arrays.fill(huge, (byte) 'x');
		EntityExchangeResult<byte[]> r = this.client.post()
			.uri("/v1/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(huge)
			.exchange()
			.expectBody(byte[].class)
			.returnResult();
		assertThat(r.getStatus().value()).isEqualTo(413);
		assertThat(new String(r.getResponseBodyContent(), StandardCharsets.UTF_8))
			.contains("\"code\":\"request_too_large\"");
	}

	@Test
	void invalidJsonGets400WithAnOpenAiError() {
		EntityExchangeResult<byte[]> r = post("/v1/chat/completions", "{\"model\": \"m\", \"messages\": [");
		assertThat(r.getStatus().value()).isEqualTo(400);
		String body = new String(r.getResponseBodyContent(), StandardCharsets.UTF_8);
		assertThat(body).startsWith("{\"error\":{").contains("\"type\":\"invalid_request_error\"");
		EntityExchangeResult<byte[]> badSlo = this.client.post()
			.uri("/v1/completions")
			.header("x-slo-ttft-ms", "soon")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"model\":\"m\",\"prompt\":\"hi\"}")
			.exchange()
			.expectBody(byte[].class)
			.returnResult();
		assertThat(badSlo.getStatus().value()).isEqualTo(400);
		assertThat(new String(badSlo.getResponseBodyContent(), StandardCharsets.UTF_8)).contains("x-slo-ttft-ms");
	}

	/**
	 * A prompt endpoint takes JSON only, as vLLM and OpenAI answer: a body of another
	 * content type (a JSON text sent as {@code text/plain}, {@code curl -d}'s form type,
	 * a multipart upload, a type that cannot be read) is refused with an OpenAI 415 and
	 * reaches no engine; a body with no content type at all is read as JSON.
	 */
	@Test
	void aPromptOfAnotherContentTypeGets415AndOneWithNoneIsReadAsJson() throws Exception {
		String body = chat(systemPrompt("content types"), "which type", false);
		int served = ENGINES.stream().mapToInt(e -> e.served.get()).sum();
		for (String path : List.of("/v1/chat/completions", "/v1/completions", "/v1/responses")) {
			for (String type : List.of("text/plain", "application/x-www-form-urlencoded",
					"multipart/form-data; boundary=b", "text/plain; charset=utf-8")) {
				EntityExchangeResult<byte[]> r = this.client.post()
					.uri(path)
					.header("Content-Type", type)
					.bodyValue(body.getBytes(StandardCharsets.UTF_8))
					.exchange()
					.expectBody(byte[].class)
					.returnResult();
				String answer = new String(r.getResponseBodyContent(), StandardCharsets.UTF_8);
				assertThat(r.getStatus().value()).as(path + " " + type + ": " + answer).isEqualTo(415);
				assertThat(r.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_JSON);
				assertThat(answer).startsWith("{\"error\":{")
					.contains("\"type\":\"invalid_request_error\"")
					.contains("\"code\":\"unsupported_media_type\"")
					.contains("\"param\":null")
					.contains(type.substring(0, type.indexOf(';') < 0 ? type.length() : type.indexOf(';')))
					.contains("application/json");
				assertThat(instance(r)).isNull();
			}
		}
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.port), 5_000);
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			InputStream in = socket.getInputStream();
			// A type that is no media type at all: refused too, on a connection kept.
			out.write(RawHttp.post("/v1/chat/completions", body)
				.replace("Content-Type: application/json", "Content-Type: json")
				.getBytes(StandardCharsets.UTF_8));
			out.flush();
			assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 415")
				.contains("\"code\":\"unsupported_media_type\"")
				.contains("json");
			assertThat(ENGINES.stream().mapToInt(e -> e.served.get()).sum()).isEqualTo(served);
			// None (curl --data-binary with its type header left out, many scripts):
			// JSON.
			out.write(RawHttp.post("/v1/chat/completions", body)
				.replace("Content-Type: application/json\r\n", "")
				.getBytes(StandardCharsets.UTF_8));
			out.flush();
			assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200")
				.containsIgnoringCase("x-dualmap-reason: affinity")
				.contains("\"echo_bytes\":" + body.getBytes(StandardCharsets.UTF_8).length);
		}
		// Any JSON type, with its parameters.
		for (String type : List.of("application/json; charset=utf-8", "application/vnd.openai+json")) {
			EntityExchangeResult<byte[]> r = this.client.post()
				.uri("/v1/chat/completions")
				.header("Content-Type", type)
				.bodyValue(body.getBytes(StandardCharsets.UTF_8))
				.exchange()
				.expectBody(byte[].class)
				.returnResult();
			assertThat(r.getStatus().value()).as(type).isEqualTo(200);
			assertThat(reason(r)).isEqualTo("affinity");
		}
	}

	@Test
	void aRequestIdFollowsEachRequestToTheEngineAndBack() {
		String body = chat(systemPrompt("request ids"), "which id", false);
		// None sent: the gateway makes one, the engine and the client get the same.
		EntityExchangeResult<byte[]> made = post("/v1/chat/completions", body);
		String id = made.getResponseHeaders().getFirst("x-request-id");
		assertThat(id).matches("[0-9a-f]{16}-[0-9a-f]+");
		StubEngine engine = ENGINES.stream().filter(e -> e.instanceId().equals(instance(made))).findFirst().get();
		assertThat(engine.lastRequestId.get()).isEqualTo(id);
		assertThat(post("/v1/chat/completions", body).getResponseHeaders().getFirst("x-request-id")).isNotEqualTo(id);
		// The client's own is kept.
		EntityExchangeResult<byte[]> kept = this.client.post()
			.uri("/v1/chat/completions")
			.header("x-request-id", "client-trace-42")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchange()
			.expectBody(byte[].class)
			.returnResult();
		assertThat(kept.getResponseHeaders().get("x-request-id")).containsExactly("client-trace-42");
		assertThat(engine.lastRequestId.get()).isEqualTo("client-trace-42");
		// Sent twice, the first copy is the id, for the engine as for the client (a proxy
		// that joins copies or takes the last would not match it otherwise).
		EntityExchangeResult<byte[]> twice = this.client.post()
			.uri("/v1/chat/completions")
			.header("x-request-id", "first-copy", "second-copy")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchange()
			.expectBody(byte[].class)
			.returnResult();
		assertThat(twice.getResponseHeaders().get("x-request-id")).containsExactly("first-copy");
		assertThat(engine(instance(twice)).lastRequestId.get()).isEqualTo("first-copy");
		// The gateway's own errors carry it too.
		EntityExchangeResult<byte[]> invalid = post("/v1/chat/completions", "{\"model\": \"m\", \"messages\": [");
		assertThat(invalid.getStatus().value()).isEqualTo(400);
		assertThat(invalid.getResponseHeaders().getFirst("x-request-id")).matches("[0-9a-f]{16}-[0-9a-f]+");
	}

	@Test
	void aCompressedBodyIsRoutedOnItsPromptAndReachesTheBackendAsSent() throws Exception {
		String body = chat(systemPrompt("compressed uploads"), "first", false);
		String home = instance(post("/v1/chat/completions", body));
		for (String coding : List.of("gzip", "deflate", "gzip, identity", "zstd", "br", "gzip, zstd")) {
			byte[] sent = compress(coding, chat(systemPrompt("compressed uploads"), "again with " + coding, false)
				.getBytes(StandardCharsets.UTF_8));
			EntityExchangeResult<byte[]> r = postEncoded(coding, sent);
			assertThat(r.getStatus().value()).as(coding).isEqualTo(200);
			// Routed on the prompt inside: the same instance, for its cached prefix.
			assertThat(instance(r)).as(coding).isEqualTo(home);
			assertThat(reason(r)).as(coding).isEqualTo("affinity");
			CRC32 crc = new CRC32();
			crc.update(sent);
			assertThat(new String(r.getResponseBodyContent(), StandardCharsets.UTF_8)).as(coding)
				.contains("\"echo_bytes\":" + sent.length + ",\"echo_crc\":" + crc.getValue() + ",\"echo_encoding\":\""
						+ coding + "\"");
		}
		// A coding the gateway does not read is routed by load and left to the backend.
		EntityExchangeResult<byte[]> lzw = postEncoded("compress", new byte[] { 1, 2, 3 });
		assertThat(lzw.getStatus().value()).isEqualTo(200);
		assertThat(reason(lzw)).isEqualTo("load");
		byte[] zeros = new byte[40 * 1024 * 1024];
		for (String coding : List.of("gzip", "zstd", "br")) {
			// Not data of its coding at all: a 400 naming the coding, not a JSON error.
			EntityExchangeResult<byte[]> corrupt = postEncoded(coding, body.getBytes(StandardCharsets.UTF_8));
			assertThat(corrupt.getStatus().value()).as(coding).isEqualTo(400);
			assertThat(new String(corrupt.getResponseBodyContent(), StandardCharsets.UTF_8)).as(coding)
				.contains("request body is not valid " + coding + " data");
			// A small upload that decodes past dualmap.max-body-size (32 MB): 413.
			byte[] bomb = compress(coding, zeros);
			assertThat(bomb.length).as(coding).isLessThan(100_000);
			EntityExchangeResult<byte[]> big = postEncoded(coding, bomb);
			assertThat(big.getStatus().value()).as(coding).isEqualTo(413);
			assertThat(new String(big.getResponseBodyContent(), StandardCharsets.UTF_8)).as(coding)
				.contains("\"code\":\"request_too_large\"");
		}
	}

	private EntityExchangeResult<byte[]> postEncoded(String coding, byte[] body) {
		return this.client.post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.header("Content-Encoding", coding)
			.bodyValue(body)
			.exchange()
			.expectBody(byte[].class)
			.returnResult();
	}

	/** {@code bytes} in {@code codings} (a Content-Encoding value), applied in order. */
	private static byte[] compress(String codings, byte[] bytes) throws IOException {
		byte[] out = bytes;
		for (String coding : codings.split(",\\s*")) {
			out = switch (coding) {
				case "identity" -> out;
				case "zstd" -> com.github.luben.zstd.Zstd.compress(out);
				case "br" -> {
					com.aayushatharva.brotli4j.Brotli4jLoader.ensureAvailability();
					yield com.aayushatharva.brotli4j.encoder.Encoder.compress(out);
				}
				default -> {
					ByteArrayOutputStream buffer = new ByteArrayOutputStream();
					try (OutputStream z = coding.equals("gzip") ? new GZIPOutputStream(buffer)
							: new DeflaterOutputStream(buffer)) {
						z.write(out);
					}
					yield buffer.toByteArray();
				}
			};
		}
		return out;
	}

	@Test
	void accountingReturnsToZeroAndTtftIsObserved() {
		post("/v1/chat/completions", chat(systemPrompt("accounting"), "x", true));
		ServicePool service = this.registry.service("llm");
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(service.instancePool().instances()).allSatisfy(s -> {
				assertThat(s.inFlight()).isZero();
				assertThat(s.prefillTokens()).isZero();
			}));
		assertThat(service.instancePool().instances().stream().mapToLong(s -> s.dispatched()).sum()).isPositive();
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(service.instancePool().instances())
				.allSatisfy(s -> assertThat(s.engineFailed()).isFalse()));
		assertThat(service.instancePool().instances()).allSatisfy(s -> assertThat(s.engine()).isNotNull());
	}

	@Test
	void aStreamedResponsesAnswerKeepsItsPrefixAndItsFirstTokenIsNotItsOpeningEvents() {
		List<Long> ttfts = new CopyOnWriteArrayList<>();
		DualMapListener listener = new DualMapListener() {
			@Override
			public void onFirstToken(String service, String instance, long ttftNanos, long sloNanos) {
				ttfts.add(ttftNanos);
			}
		};
		this.registry.addListener(listener);
		ENGINES.forEach(e -> e.firstByteDelay.set(Duration.ofMillis(600)));
		try {
			String body = """
					{"model":"m","stream":true,"instructions":"%s","input":"%s"}""";
			Set<String> instances = new HashSet<>();
			for (int i = 0; i < 2; i++) {
				EntityExchangeResult<byte[]> r = post("/v1/responses",
						body.formatted(systemPrompt("responses"), "question " + i));
				assertThat(r.getStatus().value()).isEqualTo(200);
				assertThat(reason(r)).isEqualTo("affinity");
				String events = new String(r.getResponseBodyContent(), StandardCharsets.UTF_8);
				assertThat(events).startsWith("event: response.created\n")
					.endsWith(StubEngine.RESPONSES_OPENING.get(1) + String.join("", StubEngine.RESPONSES_EVENTS));
				instances.add(instance(r));
			}
			assertThat(instances).hasSize(1);
			// The opening events come at once; the first token after the 600 ms prefill.
			await().atMost(Duration.ofSeconds(5)).until(() -> ttfts.size() == 2);
			assertThat(ttfts).allSatisfy(t -> assertThat(t).isGreaterThanOrEqualTo(Duration.ofMillis(500).toNanos()));
		}
		finally {
			ENGINES.forEach(e -> e.firstByteDelay.set(Duration.ZERO));
			this.registry.removeListener(listener);
		}
	}

	static String responseId(EntityExchangeResult<byte[]> result) {
		Matcher id = Pattern.compile("\"id\":\"(resp_[^\"]+)\"")
			.matcher(new String(result.getResponseBodyContent(), StandardCharsets.UTF_8));
		assertThat(id.find()).as("a response id in the body").isTrue();
		return id.group(1);
	}

	@Test
	void aContinuationOfAStoredResponseGoesBackToTheInstanceThatHoldsIt() {
		String request = """
				{"model":"m","stream":%s,"instructions":"%s","input":"%s"%s}""";
		EntityExchangeResult<byte[]> first = post("/v1/responses",
				request.formatted(false, systemPrompt("stored responses"), "start", ""));
		assertThat(first.getStatus().value()).isEqualTo(200);
		String holder = instance(first);
		String previous = responseId(first);
		// Each continuation carries other instructions, so its prompt alone would send it
		// anywhere; it must reach the instance that stored the response it continues (the
		// stub answers 404 elsewhere, as vLLM does), streamed or not.
		for (int i = 0; i < 6; i++) {
			boolean stream = i % 2 == 1;
			EntityExchangeResult<byte[]> next = post("/v1/responses", request.formatted(stream,
					systemPrompt("turn " + i), "more " + i, ",\"previous_response_id\":\"" + previous + "\""));
			assertThat(next.getStatus().value()).isEqualTo(200);
			assertThat(instance(next)).isEqualTo(holder);
			assertThat(reason(next)).isEqualTo("pinned");
			previous = responseId(next);
		}
		// A holder that refuses a continuation is not skipped: no other instance has it.
		StubEngine holding = engine(holder);
		holding.refuseWith.set(503);
		try {
			EntityExchangeResult<byte[]> refused = post("/v1/responses", request.formatted(false,
					systemPrompt("refused"), "more", ",\"previous_response_id\":\"" + previous + "\""));
			assertThat(refused.getStatus().value()).isEqualTo(503);
			assertThat(instance(refused)).isEqualTo(holder);
		}
		finally {
			holding.refuseWith.set(0);
		}
		// Retrieving stored responses goes to their holders too, wherever each lives.
		Map<String, String> holders = new HashMap<>();
		for (int i = 0; i < 12 && new HashSet<>(holders.values()).size() < 2; i++) {
			EntityExchangeResult<byte[]> r = post("/v1/responses",
					request.formatted(false, systemPrompt("retrieval " + i), "x", ""));
			holders.put(responseId(r), instance(r));
		}
		assertThat(new HashSet<>(holders.values())).hasSizeGreaterThan(1);
		holders.forEach((id, instance) -> {
			EntityExchangeResult<byte[]> got = this.client.get()
				.uri("/v1/responses/" + id)
				.exchange()
				.expectBody(byte[].class)
				.returnResult();
			assertThat(got.getStatus().value()).isEqualTo(200);
			assertThat(instance(got)).isEqualTo(instance);
			assertThat(reason(got)).isEqualTo("pinned");
		});
		// A response this gateway never saw is routed by its prompt; the engine decides.
		EntityExchangeResult<byte[]> unknown = post("/v1/responses",
				request.formatted(false, systemPrompt("unknown"), "x", ",\"previous_response_id\":\"resp_elsewhere\""));
		assertThat(unknown.getStatus().value()).isEqualTo(404);
		assertThat(reason(unknown)).isNotEqualTo("pinned");
		EntityExchangeResult<byte[]> bad = post("/v1/responses", "{\"input\":\"x\",\"previous_response_id\":7}");
		assertThat(bad.getStatus().value()).isEqualTo(400);
		assertThat(new String(bad.getResponseBodyContent(), StandardCharsets.UTF_8)).contains("previous_response_id");
	}

	/**
	 * A kept-alive connection is still read after a pipelined request the gateway
	 * answered at once (a 404 held behind a proxied completion): without
	 * {@link KeepAliveReads} the third request on the connection is never read
	 * (reactor/reactor-netty#4361).
	 */
	@Test
	void connectionIsReadAfterAPipelinedRequestAnsweredAtOnce() throws Exception {
		String chat = chat(systemPrompt("pipelining"), "hi", false);
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.port), 5_000);
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			InputStream in = socket.getInputStream();
			out.write((RawHttp.post("/v1/chat/completions", chat) + RawHttp.get("/nowhere"))
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200").contains("x-dualmap-instance");
			assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 404");
			for (String path : new String[] { "/actuator/health", "/nowhere", "/actuator/health" }) {
				out.write(RawHttp.get(path).getBytes(StandardCharsets.US_ASCII));
				out.flush();
				assertThat(RawHttp.readResponse(in)).as(path).startsWith("HTTP/1.1 ");
			}
		}
	}

	/**
	 * An HTTP/1.0 client (nginx proxies with HTTP/1.0 by default) gets a streamed
	 * completion as plain bytes ended by the close, not in chunks it cannot decode
	 * ({@link Http10Responses}).
	 */
	@Test
	void aStreamToAnHttp10ClientIsNotChunked() throws Exception {
		String chat = chat(systemPrompt("http10"), "go", true);
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.port), 5_000);
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(RawHttp.post("/v1/chat/completions", chat)
				.replace(" HTTP/1.1\r\n", " HTTP/1.0\r\n")
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			assertThat(answer).startsWith("HTTP/1.1 200")
				.containsIgnoringCase("content-type: text/event-stream")
				.containsIgnoringCase("connection: close")
				.doesNotContainIgnoringCase("transfer-encoding")
				.endsWith("\r\n\r\n" + String.join("", StubEngine.EVENTS));
		}
	}

	@Test
	void anInstanceThatRefusesWorkHasTheRequestSentToAnotherOnce(CapturedOutput output) {
		ServicePool service = this.registry.service("llm");
		long retries = service.retries(RetryCause.STATUS);
		List<String> failures = new CopyOnWriteArrayList<>();
		this.registry.addListener(new DualMapListener() {
			@Override
			public void onFinished(String service, String instanceId, DualMapListener.Outcome outcome) {
				if (outcome == DualMapListener.Outcome.FAILURE) {
					failures.add(instanceId);
				}
			}
		});
		try {
			// 429 and 503 (the defaults) before any byte: once more, to another instance,
			// streamed or not. Each case on a prompt of its own, whose home (the only
			// instance known to hold it) is asked first.
			int n = 0;
			for (int status : new int[] { 429, 503 }) {
				for (boolean stream : new boolean[] { false, true }) {
					String request = chat(systemPrompt("refusals " + n++), "q", stream);
					StubEngine home = homeOf(request);
					int refused = home.refused.get();
					home.refuseWith.set(status);
					EntityExchangeResult<byte[]> r = post("/v1/chat/completions", request);
					home.refuseWith.set(0);
					assertThat(r.getStatus().value()).as("after %d", status).isEqualTo(200);
					assertThat(instance(r)).isNotEqualTo(home.instanceId());
					assertThat(home.refused).hasValue(refused + 1);
					// At debug level the retry is logged with the request's id.
					assertThat(output.getOut())
						.contains("Request " + r.getResponseHeaders().getFirst("x-request-id") + ": instance '"
								+ home.instanceId() + "' of 'llm' answered " + status + ", sending it to another");
					// Each refusal counts against the instance's breaker, 429 as well as
					// 503.
					await().atMost(Duration.ofSeconds(5)).until(() -> failures.contains(home.instanceId()));
					failures.clear();
				}
			}
			assertThat(service.retries(RetryCause.STATUS)).isEqualTo(retries + 4);
			// A status not configured goes to the client as the instance sent it.
			String other = chat(systemPrompt("refusals 500"), "q", false);
			StubEngine home = homeOf(other);
			home.refuseWith.set(500);
			EntityExchangeResult<byte[]> failed = post("/v1/chat/completions", other);
			home.refuseWith.set(0);
			assertThat(failed.getStatus().value()).isEqualTo(500);
			assertThat(instance(failed)).isEqualTo(home.instanceId());
			assertThat(service.retries(RetryCause.STATUS)).isEqualTo(retries + 4);
			// Every instance refuses: one retry, and its answer is the client's.
			String busyRequest = chat(systemPrompt("refusals everywhere"), "q", false);
			StubEngine first = homeOf(busyRequest);
			ENGINES.forEach(e -> e.refuseWith.set(429));
			EntityExchangeResult<byte[]> busy = post("/v1/chat/completions", busyRequest);
			assertThat(busy.getStatus().value()).isEqualTo(429);
			assertThat(busy.getResponseHeaders().getFirst("retry-after")).isEqualTo("1");
			assertThat(new String(busy.getResponseBodyContent(), StandardCharsets.UTF_8)).contains("refused by")
				.doesNotContain("refused by " + first.name);
			assertThat(service.retries(RetryCause.STATUS)).isEqualTo(retries + 5);
			// No other instance to try (the others drained): the instance's own answer.
			ENGINES.stream().filter(e -> e != first).forEach(e -> service.drain(e.instanceId()));
			// The refusals so far count against the breakers: how many fell on this one
			// depends on where the load-chosen homes went, and an open breaker would
			// leave no instance at all (503). The case is one instance that accepts.
			service.breakers().breaker(first.instanceId()).reset();
			EntityExchangeResult<byte[]> alone = post("/v1/chat/completions", busyRequest);
			assertThat(alone.getStatus().value()).isEqualTo(429);
			assertThat(new String(alone.getResponseBodyContent(), StandardCharsets.UTF_8))
				.contains("refused by " + first.name);
			assertThat(service.retries(RetryCause.STATUS)).isEqualTo(retries + 5);
		}
		finally {
			ENGINES.forEach(e -> e.refuseWith.set(0));
			ENGINES.forEach(e -> service.undrain(e.instanceId()));
			// The refusals counted against the breakers; the next test starts clean.
			ENGINES.forEach(e -> service.breakers().breaker(e.instanceId()).reset());
		}
		// Every try was accounted for and ended.
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(service.instancePool().instances())
				.allSatisfy(s -> assertThat(s.inFlight()).isZero()));
	}

	/**
	 * The instance a prompt is first sent to, which then holds it (and gets it again).
	 */
	private StubEngine homeOf(String request) {
		EntityExchangeResult<byte[]> r = post("/v1/chat/completions", request);
		assertThat(r.getStatus().value()).isEqualTo(200);
		return engine(instance(r));
	}

	@Test
	void aStoppedBackendGetsNoMoreRequestsAndNoClientSeesA5xx(CapturedOutput output) {
		StubEngine stopped = ENGINES.get(2);
		stopped.stop();
		ServicePool service = this.registry.service("llm");
		CircuitBreaker breaker = service.breakers().breaker(stopped.instanceId());
		List<String> instances = new ArrayList<>();
		// Connect failures are retried on the other candidate until the breaker opens.
		for (int i = 0; i < 100 && breaker.getState() != CircuitBreaker.State.OPEN; i++) {
			EntityExchangeResult<byte[]> r = post("/v1/chat/completions",
					chat(systemPrompt("tenant " + i), "after stop", i % 2 == 0));
			assertThat(r.getStatus().value()).as("request %d", i).isEqualTo(200);
			instances.add(instance(r));
		}
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(service.retries(RetryCause.CONNECT)).isPositive();
		assertThat(output.getOut()).containsPattern("Request [0-9a-f]{16}-[0-9a-f]+: could not connect to instance '"
				+ Pattern.quote(stopped.instanceId()) + "' of 'llm', sending it to another");
		assertThat(service.instancePool().instance(stopped.instanceId()).healthy()).isFalse();
		int callsWhenOpened = breaker.getMetrics().getNumberOfBufferedCalls();
		for (int i = 0; i < 20; i++) {
			EntityExchangeResult<byte[]> r = post("/v1/chat/completions",
					chat(systemPrompt("late tenant " + i), "still stopped", false));
			assertThat(r.getStatus().value()).isEqualTo(200);
			assertThat(reason(r)).isIn("affinity", "fallback", "slo-switch", "hotspot");
			instances.add(instance(r));
		}
		assertThat(instances).doesNotContain(stopped.instanceId());
		assertThat(breaker.getMetrics().getNumberOfBufferedCalls()).isEqualTo(callsWhenOpened);
		assertThat(breaker.getMetrics().getNumberOfNotPermittedCalls()).isZero();
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(service.scrapeFailures(stopped.instanceId())).isPositive());
		assertThat(service.instancePool().instance(stopped.instanceId()).engineFailed()).isTrue();
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(service.instancePool().instances())
				.allSatisfy(s -> assertThat(s.inFlight()).isZero()));
	}

}

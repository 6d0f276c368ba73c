package io.github.dualmap.gateway;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.CRC32;
import java.util.zip.GZIPOutputStream;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One gateway in front of two DualMap pools and one plain backend, each chosen by the
 * {@code Model} predicate on the request's {@code model}: every request reaches the pool
 * of its model with its body as sent, DualMap still routes within the pool, and requests
 * that name no known model find no route.
 */
@GatewayIntegrationTest(properties = { "dualmap.services=llama,qwen,gone", "dualmap.scrape.enabled=false",
		"dualmap.max-body-size=1MB",
		// Every route here: a list binds from one property source.
		"spring.cloud.gateway.server.webflux.routes[0].id=llama",
		"spring.cloud.gateway.server.webflux.routes[0].uri=lb://llama",
		"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/v1/**",
		"spring.cloud.gateway.server.webflux.routes[0].predicates[1]=Model=meta-llama/*",
		"spring.cloud.gateway.server.webflux.routes[1].id=qwen",
		"spring.cloud.gateway.server.webflux.routes[1].uri=lb://qwen",
		"spring.cloud.gateway.server.webflux.routes[1].predicates[0]=Path=/v1/**",
		"spring.cloud.gateway.server.webflux.routes[1].predicates[1]=Model=Qwen/Qwen2.5-7B-Instruct,qwen-lora-*",
		"spring.cloud.gateway.server.webflux.routes[2].id=hosted",
		"spring.cloud.gateway.server.webflux.routes[2].uri=${stub-engines.hosted}",
		"spring.cloud.gateway.server.webflux.routes[2].predicates[0]=Path=/v1/**",
		"spring.cloud.gateway.server.webflux.routes[2].predicates[1]=Model=gpt-*",
		"spring.cloud.gateway.server.webflux.routes[3].id=models",
		"spring.cloud.gateway.server.webflux.routes[3].uri=no://op",
		"spring.cloud.gateway.server.webflux.routes[3].predicates[0]=Path=/v1/models",
		"spring.cloud.gateway.server.webflux.routes[3].filters[0]=ModelList",
		"spring.cloud.gateway.server.webflux.routes[4].id=gone-models",
		"spring.cloud.gateway.server.webflux.routes[4].uri=no://op",
		"spring.cloud.gateway.server.webflux.routes[4].predicates[0]=Path=/gone/v1/models",
		"spring.cloud.gateway.server.webflux.routes[4].filters[0]=ModelList=gone",
		// After the Model routes: one they share paths with, one they do not.
		"spring.cloud.gateway.server.webflux.routes[5].id=plain",
		"spring.cloud.gateway.server.webflux.routes[5].uri=${stub-engines.hosted}",
		"spring.cloud.gateway.server.webflux.routes[5].predicates[0]=Path=/v1/**",
		"spring.cloud.gateway.server.webflux.routes[5].predicates[1]=Header=x-plain",
		"spring.cloud.gateway.server.webflux.routes[6].id=upload",
		"spring.cloud.gateway.server.webflux.routes[6].uri=${stub-engines.hosted}",
		"spring.cloud.gateway.server.webflux.routes[6].predicates[0]=Path=/upload/**",
		"spring.cloud.gateway.server.webflux.routes[6].filters[0]=SetPath=/v1/chat/completions",
		// A speech-to-text model, chosen by the model field of the upload (the stub
		// answers on its completions path).
		"spring.cloud.gateway.server.webflux.routes[7].id=whisper",
		"spring.cloud.gateway.server.webflux.routes[7].uri=${stub-engines.whisper}",
		"spring.cloud.gateway.server.webflux.routes[7].predicates[0]=Path=/v1/audio/**",
		"spring.cloud.gateway.server.webflux.routes[7].predicates[1]=Model=whisper-*",
		"spring.cloud.gateway.server.webflux.routes[7].filters[0]=SetPath=/v1/completions",
		"spring.cloud.gateway.server.webflux.routes[8].id=some-models",
		"spring.cloud.gateway.server.webflux.routes[8].uri=no://op",
		"spring.cloud.gateway.server.webflux.routes[8].predicates[0]=Path=/some/v1/models",
		"spring.cloud.gateway.server.webflux.routes[8].filters[0]=ModelList=qwen,whisper",
		// The speech pool is not DualMap's: found through discovery.
		"dualmap.model-list.other-services=whisper" })
class ModelRoutingIntegrationTests {

	@Discovered("llama")
	static final List<StubEngine> LLAMA = List.of(new StubEngine("llama-a"), new StubEngine("llama-b"));

	@Discovered("qwen")
	static final StubEngine QWEN = new StubEngine("qwen");

	/** The plain backend: a route's URI, in no service. */
	@Discovered({})
	static final StubEngine HOSTED = new StubEngine("hosted");

	/** The speech pool, not DualMap's. */
	@Discovered("whisper")
	static final StubEngine WHISPER = new StubEngine("whisper");

	/** The one instance of the pool "gone", gone before the gateway starts. */
	@Discovered("gone")
	static final StubEngine GONE = StubEngine.gone("gone");

	@Autowired
	WebTestClient client;

	static String chat(String model, String system, String user) {
		return """
				{"messages":[{"role":"system","content":"%s"},{"role":"user","content":"%s"}],"model":"%s"}"""
			.formatted(system, user, model);
	}

	EntityExchangeResult<String> post(byte[] body, MediaType type, String encoding) {
		return post(body, type, encoding, "/v1/chat/completions");
	}

	EntityExchangeResult<String> post(byte[] body, MediaType type, String encoding, String path) {
		WebTestClient.RequestBodySpec spec = this.client.post().uri(path).contentType(type);
		if (encoding != null) {
			spec.header("Content-Encoding", encoding);
		}
		return spec.bodyValue(body).exchange().expectBody(String.class).returnResult();
	}

	EntityExchangeResult<String> post(String body) {
		return post(body.getBytes(StandardCharsets.UTF_8), MediaType.APPLICATION_JSON, null);
	}

	static String servedBy(EntityExchangeResult<String> r) {
		assertThat(r.getStatus().value()).as(r.getResponseBody()).isEqualTo(200);
		return r.getResponseBody().replaceAll(".*\"served_by\":\"([^\"]+)\".*", "$1");
	}

	static String reason(EntityExchangeResult<?> r) {
		return r.getResponseHeaders().getFirst(DispatchAccountingFilter.REASON_HEADER);
	}

	@Test
	void eachModelReachesItsOwnPoolAndDualMapStillRoutesWithinIt() {
		String system = "You answer questions about one product line. ".repeat(20);
		Set<String> llama = new HashSet<>();
		for (int i = 0; i < 6; i++) {
			EntityExchangeResult<String> r = post(chat("meta-llama/Llama-3.1-8B-Instruct", system, "question " + i));
			llama.add(servedBy(r));
			assertThat(reason(r)).isEqualTo("affinity");
		}
		// One prefix, one instance of the llama pool.
		assertThat(llama).hasSize(1).isSubsetOf("llama-a", "llama-b");
		EntityExchangeResult<String> qwen = post(chat("Qwen/Qwen2.5-7B-Instruct", system, "q"));
		assertThat(servedBy(qwen)).isEqualTo("qwen");
		// The request id reaches the engine through the body the Model predicate cached.
		assertThat(QWEN.lastRequestId.get()).isNotNull().isEqualTo(qwen.getResponseHeaders().getFirst("x-request-id"));
		assertThat(servedBy(post(chat("qwen-lora-support", system, "q")))).isEqualTo("qwen");
		// "model" anywhere but the top level does not count, wherever it comes.
		assertThat(servedBy(post(
				"{\"metadata\":{\"model\":\"gpt-4o\"},\"model\":\"qwen-lora-x\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")))
			.isEqualTo("qwen");
	}

	@Test
	void aRouteOutsideDualMapGetsTheBodyAsSent() {
		String body = chat("gpt-4o", "A hosted model. ".repeat(10), "unicode \u00e9\u4e2d");
		EntityExchangeResult<String> r = post(body);
		assertThat(servedBy(r)).isEqualTo("hosted");
		assertThat(r.getResponseHeaders().getFirst(DispatchAccountingFilter.INSTANCE_HEADER)).isNull();
		assertThat(r.getResponseBody()).contains(echo(body.getBytes(StandardCharsets.UTF_8)));
		// Not a DualMap route: no request id either.
		assertThat(HOSTED.lastRequestId.get()).isNull();
		assertThat(r.getResponseHeaders().getFirst("x-request-id")).isNull();
	}

	@Test
	void aCompressedBodyIsRoutedByTheModelInside() throws IOException {
		byte[] gzip = gzip(chat("Qwen/Qwen2.5-7B-Instruct", "compressed", "q").getBytes(StandardCharsets.UTF_8));
		EntityExchangeResult<String> r = post(gzip, MediaType.APPLICATION_JSON, "gzip");
		assertThat(servedBy(r)).isEqualTo("qwen");
		assertThat(r.getResponseBody()).contains(echo(gzip));
	}

	@Test
	void requestsNamingNoServedModelFindNoRoute() {
		// OpenAI's answer to an unknown model, so clients' handling of it applies.
		EntityExchangeResult<String> unknown = post(chat("mistral-7b", "s", "u"));
		assertThat(unknown.getStatus().value()).isEqualTo(404);
		assertThat(unknown.getResponseBody()).contains("\"code\":\"model_not_found\"")
			.contains("\"param\":\"model\"")
			.contains("The model `mistral-7b` does not exist");
		for (String body : List.of("{\"messages\":[]}", "{\"model\":7}")) {
			EntityExchangeResult<String> none = post(body);
			assertThat(none.getStatus().value()).isEqualTo(404);
			assertThat(none.getResponseBody()).contains("\"code\":\"model_not_found\"").contains("names no model");
		}
		// A body that cannot name one gets what a DualMap route answers it.
		EntityExchangeResult<String> garbage = post("not json");
		assertThat(garbage.getStatus().value()).isEqualTo(400);
		assertThat(garbage.getResponseBody()).contains("request body is not valid JSON")
			.contains("\"type\":\"invalid_request_error\"");
		EntityExchangeResult<String> array = post("[{\"model\":\"meta-llama/x\"}]");
		assertThat(array.getStatus().value()).isEqualTo(400);
		assertThat(array.getResponseBody()).contains("request body must be a JSON object but was an array");
		// Answered before any route: the id is the client's, else a new one.
		assertThat(unknown.getResponseHeaders().getFirst("x-request-id")).isNotBlank();
		assertThat(this.client.post()
			.uri("/v1/chat/completions")
			.header("x-request-id", "client-7")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(chat("mistral-7b", "s", "u"))
			.exchange()
			.expectBody(String.class)
			.returnResult()
			.getResponseHeaders()
			.getFirst("x-request-id")).isEqualTo("client-7");
	}

	/**
	 * A body of a type no {@code Model} predicate reads (neither JSON nor multipart) is
	 * not read before routing, whatever it holds: when no route takes it, the answer says
	 * why (415), as OpenAI's does, rather than that the model does not exist.
	 */
	@Test
	void aBodyOfAnotherContentTypeThatNoRouteTakesGets415() {
		byte[] json = chat("meta-llama/x", "s", "u").getBytes(StandardCharsets.UTF_8);
		int served = LLAMA.stream().mapToInt(e -> e.served.get()).sum();
		for (MediaType type : List.of(MediaType.TEXT_PLAIN, MediaType.APPLICATION_FORM_URLENCODED)) {
			EntityExchangeResult<String> r = post(json, type, null);
			assertThat(r.getStatus().value()).as(r.getResponseBody()).isEqualTo(415);
			assertThat(r.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_JSON);
			assertThat(r.getResponseBody()).contains("\"code\":\"unsupported_media_type\"")
				.contains("\"type\":\"invalid_request_error\"")
				.contains(type.toString())
				.contains("application/json");
			assertThat(r.getResponseHeaders().getFirst("x-request-id")).isNotBlank();
		}
		assertThat(LLAMA.stream().mapToInt(e -> e.served.get()).sum()).isEqualTo(served);
		// A route that needs no body still takes it, as sent.
		EntityExchangeResult<String> plain = this.client.post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.TEXT_PLAIN)
			.header("x-plain", "1")
			.bodyValue(json)
			.exchange()
			.expectBody(String.class)
			.returnResult();
		assertThat(servedBy(plain)).isEqualTo("hosted");
		assertThat(plain.getResponseBody()).contains(echo(json));
	}

	@Test
	void theModelListMergesEveryPoolThatAnswers() {
		EntityExchangeResult<String> r = this.client.get()
			.uri("/v1/models")
			.header("Authorization", "Bearer sk-test")
			.exchange()
			.expectBody(String.class)
			.returnResult();
		assertThat(r.getStatus().value()).isEqualTo(200);
		JsonNode list = JsonMapper.shared().readTree(r.getResponseBody());
		assertThat(list.path("object").stringValue()).isEqualTo("list");
		List<String> ids = list.path("data").valueStream().map(m -> m.path("id").stringValue()).toList();
		// Pool order, one instance per pool, "shared-model" once; the pool "gone" is left
		// out; the other service (not DualMap's) last.
		assertThat(ids).hasSize(4);
		assertThat(ids.get(0)).isEqualTo("shared-model");
		assertThat(ids.get(1)).isIn("model-of-llama-a", "model-of-llama-b");
		assertThat(ids.get(2)).isEqualTo("model-of-qwen");
		assertThat(ids.get(3)).isEqualTo("model-of-whisper");
		// The caller's credentials reach the instances.
		assertThat(list.path("data").get(2).path("owned_by").stringValue()).isEqualTo("Bearer sk-test");

		// Asked again with the same credentials within the cache's 5 s: no instance is
		// asked; other credentials are.
		int asked = QWEN.modelLists.get();
		assertThat(this.client.get()
			.uri("/v1/models")
			.header("Authorization", "Bearer sk-test")
			.exchange()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody()).isEqualTo(r.getResponseBody());
		assertThat(QWEN.modelLists.get()).isEqualTo(asked);
		EntityExchangeResult<String> other = this.client.get()
			.uri("/v1/models")
			.header("Authorization", "Bearer sk-other")
			.exchange()
			.expectBody(String.class)
			.returnResult();
		assertThat(QWEN.modelLists.get()).isEqualTo(asked + 1);
		assertThat(other.getResponseBody()).contains("Bearer sk-other").doesNotContain("Bearer sk-test");

		// Credentials every instance refuses: their answer, not a 502.
		EntityExchangeResult<String> refused = this.client.get()
			.uri("/v1/models")
			.header("Authorization", "Bearer wrong")
			.exchange()
			.expectBody(String.class)
			.returnResult();
		assertThat(refused.getStatus().value()).isEqualTo(401);
		assertThat(refused.getResponseBody()).isEqualTo("{\"error\":\"Unauthorized\"}");
		assertThat(refused.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_JSON);

		// A route naming a pool and the other service lists those two.
		EntityExchangeResult<String> some = this.client.get()
			.uri("/some/v1/models")
			.exchange()
			.expectBody(String.class)
			.returnResult();
		assertThat(JsonMapper.shared()
			.readTree(some.getResponseBody())
			.path("data")
			.valueStream()
			.map(m -> m.path("id").stringValue())).containsExactly("shared-model", "model-of-qwen", "model-of-whisper");

		EntityExchangeResult<String> none = this.client.get()
			.uri("/gone/v1/models")
			.exchange()
			.expectBody(String.class)
			.returnResult();
		assertThat(none.getStatus().value()).isEqualTo(502);
		assertThat(none.getResponseBody()).contains("\"code\":\"upstream_unavailable\"").contains("[gone]");
	}

	@Test
	void aRouteAfterTheModelRoutesGetsTheBodyTheyRead() {
		String body = chat("mistral-7b", "Not served by a pool. ".repeat(10), "u");
		EntityExchangeResult<String> r = this.client.post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.header("x-plain", "1")
			.bodyValue(body)
			.exchange()
			.expectBody(String.class)
			.returnResult();
		assertThat(servedBy(r)).isEqualTo("hosted");
		assertThat(r.getResponseBody()).contains(echo(body.getBytes(StandardCharsets.UTF_8)));
	}

	@Test
	void aBodyOverTheLimitGets413WhereAModelPredicateReadsIt() {
		String big = chat("gpt-4o", "x".repeat(2 * 1024 * 1024), "u");
		assertTooLarge(post(big));
		// Without a Content-Length: found while reading.
		byte[] bytes = big.getBytes(StandardCharsets.UTF_8);
		assertTooLarge(this.client.post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Flux.range(0, 64)
				.map(i -> DefaultDataBufferFactory.sharedInstance
					.wrap(ByteBuffer.wrap(bytes, i * (bytes.length / 64), bytes.length / 64))), DataBuffer.class)
			.exchange()
			.expectBody(String.class)
			.returnResult());
		// On whichever route matches after the Model predicates failed.
		assertTooLarge(this.client.post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.header("x-plain", "1")
			.bodyValue(big)
			.exchange()
			.expectBody(String.class)
			.returnResult());
	}

	@Test
	void aCompressedBodyThatDecodesPastTheLimitGets413AndOneThatDoesNotDecode400() throws IOException {
		// Small as sent, over dualmap.max-body-size decoded; the model comes first.
		byte[] bomb = gzip(chat("gpt-4o", "x".repeat(3 * 1024 * 1024), "u").getBytes(StandardCharsets.UTF_8));
		assertThat(bomb.length).isLessThan(64 * 1024);
		assertTooLarge(post(bomb, MediaType.APPLICATION_JSON, "gzip"));
		// On whichever route matches after the Model predicates failed, too.
		assertTooLarge(this.client.post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.header("Content-Encoding", "gzip")
			.header("x-plain", "1")
			.bodyValue(bomb)
			.exchange()
			.expectBody(String.class)
			.returnResult());
		EntityExchangeResult<String> notGzip = post("not gzip".getBytes(StandardCharsets.UTF_8),
				MediaType.APPLICATION_JSON, "gzip");
		assertThat(notGzip.getStatus().value()).as(notGzip.getResponseBody()).isEqualTo(400);
		assertThat(notGzip.getResponseBody()).contains("gzip").contains("\"type\":\"invalid_request_error\"");
	}

	@Test
	void anAudioUploadReachesTheRouteOfItsModelField() {
		String upload = ModelRoutePredicateFactoryTests.form("x-boundary", "file", "RIFF" + "\u0002".repeat(300),
				"model", "whisper-large-v3");
		byte[] bytes = upload.getBytes(StandardCharsets.UTF_8);
		EntityExchangeResult<String> r = post(bytes,
				MediaType.parseMediaType("multipart/form-data; boundary=x-boundary"), null, "/v1/audio/transcriptions");
		assertThat(servedBy(r)).isEqualTo("whisper");
		assertThat(r.getResponseBody()).contains(echo(bytes));
		String other = ModelRoutePredicateFactoryTests.form("x-boundary", "file", "RIFF", "model", "tiny");
		assertThat(post(other.getBytes(StandardCharsets.UTF_8),
				MediaType.parseMediaType("multipart/form-data; boundary=x-boundary"), null, "/v1/audio/transcriptions")
			.getStatus()
			.value()).isEqualTo(404);
	}

	@Test
	void requestsForOtherRoutesAreNotReadBeforeRouting() {
		// Over dualmap.max-body-size, but no Model predicate sees it.
		byte[] big = chat("gpt-4o", "x".repeat(2 * 1024 * 1024), "u").getBytes(StandardCharsets.UTF_8);
		EntityExchangeResult<String> r = this.client.post()
			.uri("/upload/file")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(big)
			.exchange()
			.expectBody(String.class)
			.returnResult();
		assertThat(servedBy(r)).isEqualTo("hosted");
		assertThat(r.getResponseBody()).contains(echo(big));
	}

	private static void assertTooLarge(EntityExchangeResult<String> r) {
		assertThat(r.getStatus().value()).isEqualTo(413);
		assertThat(r.getResponseBody()).contains("\"code\":\"request_too_large\"");
	}

	private static String echo(byte[] sent) {
		CRC32 crc = new CRC32();
		crc.update(sent);
		return "\"echo_bytes\":" + sent.length + ",\"echo_crc\":" + crc.getValue();
	}

	private static byte[] gzip(byte[] bytes) throws IOException {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		try (GZIPOutputStream z = new GZIPOutputStream(out)) {
			z.write(bytes);
		}
		return out.toByteArray();
	}

}

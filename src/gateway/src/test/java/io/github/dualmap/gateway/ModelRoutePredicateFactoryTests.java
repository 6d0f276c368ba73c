package io.github.dualmap.gateway;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.zip.GZIPOutputStream;

import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.prompt.PromptParser;
import org.junit.jupiter.api.Test;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.cloud.gateway.handler.AsyncPredicate;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ModelRoutePredicateFactoryTests {

	private final ModelRoutePredicateFactory factory = new ModelRoutePredicateFactory(
			new PromptParser(PrefixHasher.ofDefaults(), JsonMapper.shared()), 1024);

	private static MockServerWebExchange post(String body, MediaType type) {
		return MockServerWebExchange
			.from(MockServerHttpRequest.post("/v1/chat/completions").contentType(type).body(body));
	}

	private AsyncPredicate<ServerWebExchange> predicate(String... models) {
		return this.factory.applyAsync(new ModelRoutePredicateFactory.Config().setModels(List.of(models)));
	}

	private static boolean test(AsyncPredicate<ServerWebExchange> predicate, ServerWebExchange exchange) {
		return Mono.from(predicate.apply(exchange)).block();
	}

	/**
	 * The body the route gets: the request the gateway installs, as often as it is read.
	 */
	private static String replayed(ServerWebExchange exchange) {
		ServerHttpRequest request = exchange
			.getAttribute(ServerWebExchangeUtils.CACHED_SERVER_HTTP_REQUEST_DECORATOR_ATTR);
		assertThat(request).isNotNull();
		return DataBufferUtils.join(request.getBody())
			.map(b -> b.toString(StandardCharsets.UTF_8))
			.defaultIfEmpty("")
			.block();
	}

	@Test
	void modelsMatchExactlyOrByWildcard() {
		Predicate<ServerWebExchange> p = this.factory
			.apply(new ModelRoutePredicateFactory.Config().setModels(List.of("meta-llama/*", "qwen")));
		ServerWebExchange exchange = post("{}", MediaType.APPLICATION_JSON);
		assertThat(p.test(exchange)).isFalse();
		for (String model : List.of("meta-llama/Llama-3.1-8B-Instruct", "qwen")) {
			DualMapExchange.of(exchange).requestModel(model);
			assertThat(p.test(exchange)).as(model).isTrue();
		}
		for (String model : List.of("qwen2", "Qwen", "meta-llama")) {
			DualMapExchange.of(exchange).requestModel(model);
			assertThat(p.test(exchange)).as(model).isFalse();
		}
		assertThat(p).hasToString("Model: [meta-llama/*, qwen]");
		assertThat(predicate("meta-llama/*", "qwen")).hasToString("Model: [meta-llama/*, qwen]");
	}

	@Test
	void aCompressedBodyIsMatchedOnItsModelAndItsDecodedFormKeptForTheRoutingFilter() throws Exception {
		byte[] json = "{\"model\":\"qwen\",\"messages\":[]}".getBytes(StandardCharsets.UTF_8);
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
			gz.write(json);
		}
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.post("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.header("Content-Encoding", "gzip")
			.body(Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(out.toByteArray()))));
		assertThat(test(predicate("qwen"), exchange)).isTrue();
		assertThat(DualMapExchange.of(exchange).takeDecodedBody()).isEqualTo(json);
		// A body without a coding is its own decoded form: nothing is kept.
		MockServerWebExchange plain = post(new String(json, StandardCharsets.UTF_8), MediaType.APPLICATION_JSON);
		assertThat(test(predicate("qwen"), plain)).isTrue();
		assertThat(DualMapExchange.of(plain).takeDecodedBody()).isNull();
	}

	@Test
	void aPredicateWithoutModelsIsRefused() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.factory.apply(new ModelRoutePredicateFactory.Config()))
			.withMessageContaining("Model predicate needs");
		assertThatIllegalArgumentException().isThrownBy(() -> predicate(" "));
	}

	@Test
	void theBodyIsReadOnceWhenThePredicateIsFirstEvaluatedAndReplayedToTheRoute() {
		String json = "{\"model\":\"m\",\"prompt\":\"hi\"}";
		AtomicInteger reads = new AtomicInteger();
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.post("/v1/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Flux.defer(() -> {
				reads.incrementAndGet();
				return Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(json.getBytes(StandardCharsets.UTF_8)));
			})));
		assertThat(test(predicate("other"), exchange)).isFalse();
		assertThat(DualMapExchange.of(exchange).requestModel()).isEqualTo("m");
		assertThat(test(predicate("m"), exchange)).isTrue();
		// One read for both routes' predicates.
		assertThat(reads).hasValue(1);
		assertThat(DualMapExchange.of(exchange).requestBody()).isEqualTo(json.getBytes(StandardCharsets.UTF_8));
		assertThat(replayed(exchange)).isEqualTo(json);
		assertThat(replayed(exchange)).isEqualTo(json);
		// "+json" types are JSON.
		ServerWebExchange api = post(json, MediaType.parseMediaType("application/vnd.api+json"));
		assertThat(test(predicate("m"), api)).isTrue();
	}

	@Test
	void requestsThatCannotNameAModelAreNotRead() {
		String json = "{\"model\":\"m\",\"prompt\":\"hi\"}";
		for (ServerWebExchange exchange : List.of(post(json, MediaType.TEXT_PLAIN),
				post(json, MediaType.APPLICATION_FORM_URLENCODED),
				MockServerWebExchange.from(MockServerHttpRequest.put("/v1/completions").body(json)))) {
			assertThat(test(predicate("m"), exchange)).isFalse();
			assertThat(DualMapExchange.of(exchange).requestBody()).isNull();
			assertThat(exchange.getAttributes())
				.doesNotContainKey(ServerWebExchangeUtils.CACHED_SERVER_HTTP_REQUEST_DECORATOR_ATTR);
			// The body is still there for the route that serves the request.
			assertThat(DataBufferUtils.join(exchange.getRequest().getBody())
				.map(b -> b.toString(StandardCharsets.UTF_8))
				.defaultIfEmpty("")
				.block()).isEqualTo(json);
		}
		assertThat(test(predicate("m"), MockServerWebExchange.from(MockServerHttpRequest.get("/v1/models")))).isFalse();
	}

	/** A multipart form as the OpenAI SDKs send an audio transcription. */
	static String form(String boundary, String... fields) {
		StringBuilder form = new StringBuilder();
		for (int i = 0; i < fields.length; i += 2) {
			form.append("--").append(boundary).append("\r\nContent-Disposition: form-data; name=\"").append(fields[i]);
			if (fields[i].equals("file")) {
				form.append("\"; filename=\"a.wav\"\r\nContent-Type: audio/wav\r\n\r\n");
			}
			else {
				form.append("\"\r\n\r\n");
			}
			form.append(fields[i + 1]).append("\r\n");
		}
		return form.append("--").append(boundary).append("--\r\n").toString();
	}

	@Test
	void aMultipartUploadIsRoutedByItsModelField() {
		MediaType type = MediaType.parseMediaType("multipart/form-data; boundary=b0undary");
		// The file before the model, as the OpenAI Python SDK orders them.
		String upload = form("b0undary", "file", "RIFF....WAVEfmt " + "\u0001".repeat(500), "model", "whisper-large-v3",
				"language", "en");
		ServerWebExchange exchange = post(upload, type);
		assertThat(test(predicate("whisper-*"), exchange)).isTrue();
		assertThat(test(predicate("meta-llama/*"), exchange)).isFalse();
		assertThat(replayed(exchange)).isEqualTo(upload);
		// Without a model field, with an empty one, or not a form at all: no model, body
		// kept.
		for (String body : List.of(form("b0undary", "file", "x", "language", "en"), form("b0undary", "model", ""),
				"--b0undary\r\nnot a part")) {
			ServerWebExchange other = post(body, type);
			assertThat(test(predicate("*"), other)).as(body).isFalse();
			assertThat(replayed(other)).isEqualTo(body);
		}
		// A form without a boundary cannot be read: no model, body kept.
		String unbounded = form("b0undary", "model", "whisper-large-v3");
		ServerWebExchange noBoundary = post(unbounded, MediaType.MULTIPART_FORM_DATA);
		assertThat(test(predicate("*"), noBoundary)).isFalse();
		assertThat(replayed(noBoundary)).isEqualTo(unbounded);
		// A field larger than a form field may be (256 KB) names no model either.
		ModelRoutePredicateFactory roomy = new ModelRoutePredicateFactory(
				new PromptParser(PrefixHasher.ofDefaults(), JsonMapper.shared()), 1 << 20);
		String huge = form("b0undary", "model", "m".repeat(300 * 1024));
		ServerWebExchange large = post(huge, type);
		assertThat(test(roomy.applyAsync(new ModelRoutePredicateFactory.Config().setModels(List.of("m*"))), large))
			.isFalse();
		assertThat(replayed(large)).isEqualTo(huge);
	}

	@Test
	void aBodyWithoutAModelIsReadAndReplayedButMatchesNothing() {
		for (String body : List.of("{\"prompt\":\"hi\"}", "{\"model\":7}", "not json", "")) {
			ServerWebExchange exchange = post(body, MediaType.APPLICATION_JSON);
			assertThat(test(predicate("*"), exchange)).as(body).isFalse();
			assertThat(DualMapExchange.of(exchange).requestModel()).isNull();
			assertThat(replayed(exchange)).isEqualTo(body);
		}
	}

	@Test
	void aBodyOverTheLimitEndsRouteSelectionWith413() {
		String big = "{\"model\":\"m\",\"prompt\":\"" + "x".repeat(2000) + "\"}";
		// Known from Content-Length, and found while reading a body sent without one.
		MockServerWebExchange declared = post(big, MediaType.APPLICATION_JSON);
		MockServerWebExchange chunked = MockServerWebExchange.from(MockServerHttpRequest.post("/v1/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(big.getBytes(StandardCharsets.UTF_8)))));
		assertThat(chunked.getRequest().getHeaders().getContentLength()).isEqualTo(-1);
		for (MockServerWebExchange exchange : List.of(declared, chunked)) {
			assertThatExceptionOfType(ModelRoutePredicateFactory.BodyTooLargeException.class)
				.isThrownBy(() -> test(predicate("m"), exchange))
				.satisfies(ex -> assertThat(ex.getStatusCode().value()).isEqualTo(413));
			assertThat(DualMapExchange.of(exchange).requestModel()).isNull();
		}
		// The handler ahead of Spring Boot's answers it the OpenAI way; others pass.
		OpenAiErrorWebExceptionHandler handler = new OpenAiErrorWebExceptionHandler();
		assertThat(handler.getOrder()).isLessThan(-1);
		handler.handle(declared, new ModelRoutePredicateFactory.BodyTooLargeException(1024)).block();
		assertThat(declared.getResponse().getStatusCode().value()).isEqualTo(413);
		assertThat(declared.getResponse().getBodyAsString().block()).contains("\"code\":\"request_too_large\"")
			.contains("1024 bytes");
		// Among other predicates' errors, which the gateway delays and gathers.
		MockServerWebExchange gathered = post("", MediaType.APPLICATION_JSON);
		handler
			.handle(gathered, Exceptions.multiple(new IllegalStateException("x"),
					new ModelRoutePredicateFactory.BodyTooLargeException(1024)))
			.block();
		assertThat(gathered.getResponse().getStatusCode().value()).isEqualTo(413);
		IllegalStateException other = new IllegalStateException("x");
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> handler.handle(post("", MediaType.APPLICATION_JSON), other).block());
	}

}

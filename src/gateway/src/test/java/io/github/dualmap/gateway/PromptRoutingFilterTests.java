package io.github.dualmap.gateway;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.GZIPOutputStream;

import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.prompt.PromptParser;
import io.github.dualmap.tenant.RequestTokens;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The routing filter without Spring: a compressed body the {@code Model} predicate
 * already decoded is parsed from its decoded bytes, not decoded again.
 */
class PromptRoutingFilterTests {

	private final DualMapRegistry registry = DualMapRegistry.builder().services("llm").build();

	private final PrefixHasher hasher = PrefixHasher.ofDefaults();

	private final PromptRoutingFilter filter = new PromptRoutingFilter(this.registry,
			new PromptParser(this.hasher, JsonMapper.builder().build()),
			new SloResolver(Duration.ofSeconds(5), "x-slo-class", Map.of()), 1 << 20);

	static String completion(String prompt) {
		return "{\"model\":\"m\",\"prompt\":\"" + prompt + "\"}";
	}

	static byte[] gzip(String text) throws Exception {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
			gz.write(text.getBytes(StandardCharsets.UTF_8));
		}
		return out.toByteArray();
	}

	RoutingRequest route(byte[] sent, byte[] decodedByThePredicate) {
		MockServerWebExchange exchange = MockServerWebExchange
			.from(MockServerHttpRequest.post("/v1/completions").header("Content-Encoding", "gzip").body("unused"));
		exchange.getAttributes()
			.put(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR,
					Route.async().id("llm").uri(URI.create("lb://llm")).predicate(e -> true).build());
		DualMapExchange state = DualMapExchange.of(exchange);
		state.requestBody(sent);
		if (decodedByThePredicate != null) {
			state.decodedBody(decodedByThePredicate);
		}
		AtomicReference<ServerWebExchange> passed = new AtomicReference<>();
		this.filter.filter(exchange, e -> {
			passed.set(e);
			return Mono.empty();
		}).block(Duration.ofSeconds(5));
		assertThat(passed.get()).isNotNull();
		// Parsed, it is let go.
		assertThat(state.takeDecodedBody()).isNull();
		return state.routingRequest();
	}

	@Test
	void aBodyThePredicateDecodedIsParsedFromThoseBytes() throws Exception {
		String sentPrompt = "the prompt that was sent ".repeat(40);
		byte[] sent = gzip(completion(sentPrompt));
		// Decoded here: the sent prompt's blocks.
		assertThat(route(sent, null).blocks().chain()).isEqualTo(this.hasher.ofText("m", sentPrompt).chain());
		// Decoded by the predicate: its bytes are used as they are. (Different bytes than
		// the body's only to show which are parsed.)
		String otherPrompt = "what the predicate decoded ".repeat(40);
		assertThat(route(sent, completion(otherPrompt).getBytes(StandardCharsets.UTF_8)).blocks().chain())
			.isEqualTo(this.hasher.ofText("m", otherPrompt).chain());
	}

	/**
	 * A compressed streamed chat that does not ask for its usage: its decoded cap and a
	 * decoded copy are kept for {@link TenantBudgetFilter} when it follows (token budgets
	 * on), and nothing is read or kept for nobody without it.
	 */
	@Test
	void theDecodedCapAndStreamBodyAreKeptOnlyForTokenBudgets() throws Exception {
		byte[] sent = gzip("{\"model\":\"m\",\"stream\":true,\"max_tokens\":9,"
				+ "\"messages\":[{\"role\":\"user\",\"content\":\"compressed\"}]}");
		for (boolean budgets : new boolean[] { false, true }) {
			PromptRoutingFilter filter = new PromptRoutingFilter(this.registry,
					new PromptParser(this.hasher, JsonMapper.builder().build()),
					new SloResolver(Duration.ofSeconds(5), "x-slo-class", Map.of()), BodyLimits.of(1 << 20), null,
					budgets);
			MockServerWebExchange exchange = MockServerWebExchange
				.from(MockServerHttpRequest.post("/v1/chat/completions")
					.header("Content-Encoding", "gzip")
					.body("unused"));
			exchange.getAttributes()
				.put(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR,
						Route.async().id("llm").uri(URI.create("lb://llm")).predicate(e -> true).build());
			DualMapExchange state = DualMapExchange.of(exchange);
			state.requestBody(sent);
			AtomicReference<ServerWebExchange> passed = new AtomicReference<>();
			filter.filter(exchange, e -> {
				passed.set(e);
				return Mono.empty();
			}).block(Duration.ofSeconds(5));
			assertThat(passed.get()).isNotNull();
			RoutingRequest routing = state.routingRequest();
			assertThat(routing.blocks()).as("routed on its decoded prompt either way").isNotNull();
			if (budgets) {
				RequestTokens tokens = state.decodedTokens();
				assertThat(tokens.maxTokens()).isEqualTo(9L);
				assertThat(state.takeDecodedStreamBody()).asString(StandardCharsets.UTF_8).contains("compressed");
			}
			else {
				assertThat(state.decodedTokens()).isNull();
				assertThat(state.takeDecodedStreamBody()).isNull();
			}
		}
	}

	/**
	 * A large body's parse takes its working memory from the budget, except where the
	 * body is only scanned (embeddings and other endpoints routed by load): with the
	 * budget too busy for that memory, a chat request of that size waits its turn (503),
	 * an embeddings request goes through.
	 */
	@Test
	void onlyBodiesBuiltIntoATreeTakeWorkingMemoryFromTheBudget() {
		String input = "x".repeat(BodyEncodings.INLINE_BYTES);
		byte[] body = ("{\"model\":\"m\",\"input\":\"" + input + "\",\"messages\":[{\"role\":\"user\","
				+ "\"content\":\"" + input + "\"}]}")
			.getBytes(StandardCharsets.UTF_8);
		RequestBuffers budget = new RequestBuffers(8L * body.length);
		MockServerWebExchange other = MockServerWebExchange.from(MockServerHttpRequest.post("/held"));
		assertThat(budget.reserve(other, 2L * body.length)).isTrue();
		PromptRoutingFilter limited = new PromptRoutingFilter(this.registry,
				new PromptParser(this.hasher, JsonMapper.builder().build()),
				new SloResolver(Duration.ofSeconds(5), "x-slo-class", Map.of()),
				new BodyLimits(1 << 20, budget, BodyLimits.DEFAULT_READ_TIMEOUT), null, false);
		for (String path : List.of("/v1/embeddings", "/v1/chat/completions")) {
			MockServerWebExchange exchange = MockServerWebExchange
				.from(MockServerHttpRequest.post(path).body("unused"));
			exchange.getAttributes()
				.put(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR,
						Route.async().id("llm").uri(URI.create("lb://llm")).predicate(e -> true).build());
			DualMapExchange.of(exchange).requestBody(body);
			assertThat(budget.reserve(exchange, body.length)).isTrue();
			AtomicReference<ServerWebExchange> passed = new AtomicReference<>();
			limited.filter(exchange, e -> {
				passed.set(e);
				return Mono.empty();
			}).block(Duration.ofSeconds(5));
			if (path.endsWith("embeddings")) {
				assertThat(passed.get()).isNotNull();
				assertThat(budget.rejections()).isZero();
			}
			else {
				assertThat(passed.get()).isNull();
				assertThat(exchange.getResponse().getStatusCode().value()).isEqualTo(503);
				assertThat(budget.rejections()).isOne();
			}
			budget.release(exchange);
		}
	}

	/**
	 * On an endpoint that carries no prompt, only a JSON body (or one without a type) is
	 * read for its model and {@code stream}; an upload or a body of another type is
	 * routed by load as sent, whatever it holds, for the engine to judge.
	 */
	@Test
	void aBodyOfAnotherTypeOnAnotherEndpointIsNotReadAsJson() {
		byte[] body = "{\"model\":\"m\",\"stream\":true,\"input\":\"hi\"}".getBytes(StandardCharsets.UTF_8);
		for (String type : new String[] { "application/json", null, "text/plain", "application/x-www-form-urlencoded",
				"multipart/form-data; boundary=b" }) {
			MockServerHttpRequest.BodyBuilder request = MockServerHttpRequest.post("/v1/embeddings");
			if (type != null) {
				request.header("Content-Type", type);
			}
			MockServerWebExchange exchange = MockServerWebExchange.from(request.body("unused"));
			exchange.getAttributes()
				.put(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR,
						Route.async().id("llm").uri(URI.create("lb://llm")).predicate(e -> true).build());
			DualMapExchange state = DualMapExchange.of(exchange);
			state.requestBody(body);
			AtomicReference<ServerWebExchange> passed = new AtomicReference<>();
			this.filter.filter(exchange, e -> {
				passed.set(e);
				return Mono.empty();
			}).block(Duration.ofSeconds(5));
			assertThat(passed.get()).as(type).isNotNull();
			boolean json = type == null || type.equals("application/json");
			assertThat(state.parsedRequest().model()).as(type).isEqualTo(json ? "m" : null);
			assertThat(state.parsedRequest().stream()).as(type).isEqualTo(json);
			assertThat(state.routingRequest().blocks()).isNull();
		}
	}

}

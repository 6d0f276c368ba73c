package io.github.dualmap.gateway;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.prompt.PromptParser;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.MediaType;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ModelRoutePredicateFactoryTests {

	private final ModelRoutePredicateFactory factory = new ModelRoutePredicateFactory();

	private final RequestModelWebFilter filter = new RequestModelWebFilter(this.factory,
			new PromptParser(PrefixHasher.ofDefaults(), JsonMapper.shared()), 1024);

	private static MockServerWebExchange post(String body, MediaType type) {
		return MockServerWebExchange
			.from(MockServerHttpRequest.post("/v1/chat/completions").contentType(type).body(body));
	}

	/** Runs the filter and returns the exchange the rest of the chain saw. */
	private ServerWebExchange filter(ServerWebExchange exchange) {
		AtomicReference<ServerWebExchange> seen = new AtomicReference<>();
		this.filter.filter(exchange, e -> {
			seen.set(e);
			return Mono.empty();
		}).block();
		return seen.get();
	}

	private static String body(ServerWebExchange exchange) {
		return DataBufferUtils.join(exchange.getRequest().getBody())
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
			exchange.getAttributes().put(DualMapExchangeAttributes.REQUEST_MODEL_ATTR, model);
			assertThat(p.test(exchange)).as(model).isTrue();
		}
		for (String model : List.of("qwen2", "Qwen", "meta-llama")) {
			exchange.getAttributes().put(DualMapExchangeAttributes.REQUEST_MODEL_ATTR, model);
			assertThat(p.test(exchange)).as(model).isFalse();
		}
		assertThat(p).hasToString("Model: [meta-llama/*, qwen]");
	}

	@Test
	void aPredicateWithoutModelsIsRefused() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.factory.apply(new ModelRoutePredicateFactory.Config()))
			.withMessageContaining("Model predicate needs");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.factory.apply(new ModelRoutePredicateFactory.Config().setModels(List.of(" "))));
		assertThat(this.factory.inUse()).isFalse();
	}

	@Test
	void bodiesAreReadBeforeRoutingOnlyOnceARouteUsesThePredicate() {
		String json = "{\"model\":\"m\",\"prompt\":\"hi\"}";
		ServerWebExchange untouched = post(json, MediaType.APPLICATION_JSON);
		assertThat(filter(untouched)).isSameAs(untouched);
		assertThat(untouched.getAttributes()).doesNotContainKey(DualMapExchangeAttributes.REQUEST_BODY_ATTR);

		this.factory.apply(new ModelRoutePredicateFactory.Config().setModels(List.of("m")));
		ServerWebExchange read = filter(post(json, MediaType.APPLICATION_JSON));
		assertThat((String) read.getAttribute(DualMapExchangeAttributes.REQUEST_MODEL_ATTR)).isEqualTo("m");
		// Replayed to the route, as often as it is read.
		assertThat(body(read)).isEqualTo(json);
		assertThat(body(read)).isEqualTo(json);
		// Not JSON: left alone.
		ServerWebExchange text = post(json, MediaType.TEXT_PLAIN);
		assertThat(filter(text)).isSameAs(text);
		// "+json" types are JSON.
		assertThat((String) filter(post(json, MediaType.parseMediaType("application/vnd.api+json")))
			.getAttribute(DualMapExchangeAttributes.REQUEST_MODEL_ATTR)).isEqualTo("m");
	}

	@Test
	void aBodyOverTheLimitIsAnswered413() {
		this.factory.apply(new ModelRoutePredicateFactory.Config().setModels(List.of("m")));
		MockServerWebExchange exchange = post("{\"model\":\"m\",\"prompt\":\"" + "x".repeat(2000) + "\"}",
				MediaType.APPLICATION_JSON);
		assertThat(filter(exchange)).isNull();
		assertThat(exchange.getResponse().getStatusCode().value()).isEqualTo(413);
		assertThat(exchange.getResponse().getBodyAsString().block()).contains("request_too_large");
	}

}

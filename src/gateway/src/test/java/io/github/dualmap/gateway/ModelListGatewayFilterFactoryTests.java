package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.discovery.simple.reactive.SimpleReactiveDiscoveryClient;
import org.springframework.cloud.client.discovery.simple.reactive.SimpleReactiveDiscoveryProperties;
import org.springframework.http.HttpMethod;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ModelListGatewayFilterFactoryTests {

	private final DualMapRegistry registry = DualMapRegistry.builder()
		.services("llama", "qwen")
		.clock(() -> 0L)
		.build();

	private final ModelListGatewayFilterFactory factory = new ModelListGatewayFilterFactory(this.registry,
			WebClient.builder());

	@Test
	void poolsAndTimeoutAreCheckedWhenTheRouteIsBuilt() {
		assertThatIllegalArgumentException().isThrownBy(
				() -> this.factory.apply(new ModelListGatewayFilterFactory.Config().setServices(List.of("mistral"))))
			.withMessage("ModelList names 'mistral', which is not in dualmap.services [llama, qwen]"
					+ " nor in dualmap.model-list.other-services []");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.factory.apply(new ModelListGatewayFilterFactory.Config().setTimeout(Duration.ZERO)))
			.withMessageContaining("timeout must be > 0");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.factory
				.apply(new ModelListGatewayFilterFactory.Config().setCacheTtl(Duration.ofSeconds(-1))))
			.withMessageContaining("cache-ttl must be >= 0");
		// Other services need a discovery client, and are not DualMap's pools.
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.factory
				.apply(new ModelListGatewayFilterFactory.Config().setOtherServices(List.of("whisper"))))
			.withMessageContaining("'whisper'")
			.withMessageContaining("without a discovery client");
		ModelListGatewayFilterFactory discovering = new ModelListGatewayFilterFactory(this.registry,
				WebClient.builder(), new SimpleReactiveDiscoveryClient(new SimpleReactiveDiscoveryProperties()),
				new ModelListGatewayFilterFactory.Defaults("/v1/models", Duration.ofSeconds(2), Duration.ZERO,
						List.of("whisper")));
		assertThatIllegalArgumentException().isThrownBy(
				() -> discovering.apply(new ModelListGatewayFilterFactory.Config().setOtherServices(List.of("qwen"))))
			.withMessageContaining("in dualmap.services");
		// A route may name a pool and an other service; the defaults' other services
		// count.
		assertThat(
				discovering.apply(new ModelListGatewayFilterFactory.Config().setServices(List.of("qwen", "whisper"))))
			.isNotNull();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.factory
				.apply(new ModelListGatewayFilterFactory.Config().setServices(List.of("qwen", "whisper"))))
			.withMessageContaining("'whisper'");
	}

	@Test
	void otherMethodsGet405AndHeadIsAnsweredAsGet() {
		for (MockServerHttpRequest request : List.of(MockServerHttpRequest.post("/v1/models").build(),
				MockServerHttpRequest.delete("/v1/models").build())) {
			AtomicBoolean passed = new AtomicBoolean();
			MockServerWebExchange exchange = MockServerWebExchange.from(request);
			this.factory.apply(new ModelListGatewayFilterFactory.Config()).filter(exchange, e -> {
				passed.set(true);
				return Mono.empty();
			}).block();
			assertThat(passed).isFalse();
			assertThat(exchange.getResponse().getStatusCode().value()).isEqualTo(405);
			assertThat(exchange.getResponse().getHeaders().getAllow()).containsExactlyInAnyOrder(HttpMethod.GET,
					HttpMethod.HEAD);
			assertThat(exchange.getResponse().getBodyAsString().block()).contains("\"code\":\"method_not_allowed\"")
				.contains("method " + request.getMethod().name() + " is not allowed on /v1/models");
		}
		MockServerWebExchange head = MockServerWebExchange.from(MockServerHttpRequest.head("/v1/models"));
		this.factory.apply(new ModelListGatewayFilterFactory.Config()).filter(head, e -> Mono.empty()).block();
		// As GET: no pool has an instance here.
		assertThat(head.getResponse().getStatusCode().value()).isEqualTo(502);
	}

	@Test
	void withNoInstanceAnywhereTheAnswerIs502() {
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/v1/models"));
		this.factory.apply(new ModelListGatewayFilterFactory.Config()).filter(exchange, e -> Mono.empty()).block();
		assertThat(exchange.getResponse().getStatusCode().value()).isEqualTo(502);
		assertThat(exchange.getResponse().getBodyAsString().block()).contains("upstream_unavailable");
	}

}

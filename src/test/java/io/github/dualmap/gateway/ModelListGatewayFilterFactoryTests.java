package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.dualmap.core.SchedulerSettings;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ModelListGatewayFilterFactoryTests {

	private final DualMapRegistry registry = new DualMapRegistry(SchedulerSettings.ofDefaults(), "dualmap",
			List.of("llama", "qwen"), "dualmap.weight", CircuitBreakerConfig.ofDefaults(), () -> 0L);

	private final ModelListGatewayFilterFactory factory = new ModelListGatewayFilterFactory(this.registry,
			WebClient.builder());

	@Test
	void poolsAndTimeoutAreCheckedWhenTheRouteIsBuilt() {
		assertThatIllegalArgumentException().isThrownBy(
				() -> this.factory.apply(new ModelListGatewayFilterFactory.Config().setServices(List.of("mistral"))))
			.withMessage("ModelList names 'mistral', which is not in dualmap.services [llama, qwen]");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.factory.apply(new ModelListGatewayFilterFactory.Config().setTimeout(Duration.ZERO)))
			.withMessageContaining("timeout must be > 0");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.factory
				.apply(new ModelListGatewayFilterFactory.Config().setCacheTtl(Duration.ofSeconds(-1))))
			.withMessageContaining("cache-ttl must be >= 0");
	}

	@Test
	void otherMethodsPassDownTheRoute() {
		AtomicBoolean passed = new AtomicBoolean();
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.post("/v1/models"));
		this.factory.apply(new ModelListGatewayFilterFactory.Config()).filter(exchange, e -> {
			passed.set(true);
			return Mono.empty();
		}).block();
		assertThat(passed).isTrue();
	}

	@Test
	void withNoInstanceAnywhereTheAnswerIs502() {
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/v1/models"));
		this.factory.apply(new ModelListGatewayFilterFactory.Config()).filter(exchange, e -> Mono.empty()).block();
		assertThat(exchange.getResponse().getStatusCode().value()).isEqualTo(502);
		assertThat(exchange.getResponse().getBodyAsString().block()).contains("upstream_unavailable");
	}

}

package io.github.dualmap.gateway;

import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

class DualMapExchangeTests {

	@Test
	void theFiltersAndTheLoadBalancerShareOneStatePerExchange() {
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.post("/v1/completions"));
		assertThat(DualMapExchange.find(exchange)).isNull();
		DualMapExchange state = DualMapExchange.of(exchange);
		assertThat(DualMapExchange.of(exchange)).isSameAs(state);
		// The load balancer sees the exchange's own attribute map.
		assertThat(DualMapExchange.in(exchange.getAttributes())).isSameAs(state);
		assertThat(DualMapExchange.find(exchange)).isSameAs(state);
		// A mutated exchange (a filter that replays the body) keeps the attributes.
		assertThat(DualMapExchange.of(exchange.mutate().build())).isSameAs(state);
	}

	@Test
	void onlyTheFirstPlacementIsFirst() {
		DualMapExchange state = DualMapExchange.in(new HashMap<>());
		assertThat(state.markPlaced()).isFalse();
		assertThat(state.markPlaced()).isTrue();
		assertThat(state.markPlaced()).isTrue();
	}

	@Test
	void decodedBodiesAreTakenOnce() {
		DualMapExchange state = DualMapExchange.in(new HashMap<>());
		assertThat(state.takeDecodedBody()).isNull();
		byte[] decoded = { 1, 2 };
		state.decodedBody(decoded);
		assertThat(state.takeDecodedBody()).isSameAs(decoded);
		assertThat(state.takeDecodedBody()).isNull();
		state.decodedStreamBody(decoded);
		assertThat(state.takeDecodedStreamBody()).isSameAs(decoded);
		assertThat(state.takeDecodedStreamBody()).isNull();
	}

	@Test
	void excludedInstancesAccumulateOverTries() {
		Map<String, Object> attributes = new HashMap<>();
		DualMapExchange.in(attributes).excludedInstances().add("a");
		DualMapExchange.in(attributes).excludedInstances().add("b");
		assertThat(DualMapExchange.in(attributes).excludedInstances()).containsExactlyInAnyOrder("a", "b");
	}

}

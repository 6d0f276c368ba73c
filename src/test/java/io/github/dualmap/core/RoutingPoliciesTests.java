package io.github.dualmap.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RoutingPoliciesTests {

	@ParameterizedTest
	@ValueSource(strings = { "bounded-load-ch", "sglang-cache-aware", "llmd-scorer", "dynamo-cost", "preble",
			"global-min-ttft" })
	void buildsEachPeerByName(String name) {
		RoutingPolicy a = RoutingPolicies.create(name, SchedulerSettings.ofDefaults());
		RoutingPolicy b = RoutingPolicies.create(name, SchedulerSettings.ofDefaults());
		assertThat(a.name()).isEqualTo(name);
		assertThat(a).isNotSameAs(b);
		assertThat(RoutingPolicies.names()).contains(name);
	}

	@Test
	void everyPolicyReportsTheNameItIsRegisteredUnder() {
		// The gateway tags its decisions with the pool's policy().name().
		for (String name : RoutingPolicies.names()) {
			assertThat(RoutingPolicies.create(name, SchedulerSettings.ofDefaults()).name()).as(name).isEqualTo(name);
		}
	}

	@Test
	void unknownNameIsNamedInTheError() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RoutingPolicies.create("no-such-policy", SchedulerSettings.ofDefaults()))
			.withMessageContaining("no-such-policy")
			.withMessageContaining("preble");
	}

}

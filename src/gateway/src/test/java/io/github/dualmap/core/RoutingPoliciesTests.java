package io.github.dualmap.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RoutingPoliciesTests {

	@ParameterizedTest
	@ValueSource(strings = { "bounded-load-ch", "sglang-cache-aware", "smg-cache-aware", "llmd-scorer", "dynamo-cost",
			"preble", "global-min-ttft" })
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
	void onlyTheDualMapPoliciesWithAHotspotStepMoveQueuedRequests() {
		QueueSettings queue = QueueSettings.ofDefaults();
		assertThat(queue.maxMigrations()).isPositive();
		for (String name : new String[] { "dualmap", "dualmap-third-choice", "dualmap-directory" }) {
			assertThat(RoutingPolicies.queueSettingsFor(name, queue)).as(name).isSameAs(queue);
		}
		for (String name : new String[] { "dualmap-no-rebalance", "dualmap-cache-affinity", "dualmap-least-loaded",
				"dynamo-cost", "round-robin", "sglang-cache-aware", "smg-cache-aware" }) {
			QueueSettings own = RoutingPolicies.queueSettingsFor(name, queue);
			assertThat(own.maxMigrations()).as(name).isZero();
			assertThat(own.toBuilder().maxMigrations(queue.maxMigrations()).build()).as(name).isEqualTo(queue);
		}
		QueueSettings none = queue.toBuilder().maxMigrations(0).build();
		assertThat(RoutingPolicies.queueSettingsFor("dynamo-cost", none)).isSameAs(none);
	}

	@Test
	void unknownNameIsNamedInTheError() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RoutingPolicies.create("no-such-policy", SchedulerSettings.ofDefaults()))
			.withMessageContaining("no-such-policy")
			.withMessageContaining("preble");
	}

}

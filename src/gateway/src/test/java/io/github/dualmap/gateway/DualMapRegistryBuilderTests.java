package io.github.dualmap.gateway;

import io.github.dualmap.core.DispatchMode;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.gateway.DualMapRegistry.PoolSettings;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link DualMapRegistry#builder()}: one service per id in configuration order, the
 * defaults for every service, and a service's own settings for that service alone.
 */
class DualMapRegistryBuilderTests {

	@Test
	void everyServiceRunsTheDefaultsInConfigurationOrder() {
		DualMapRegistry registry = DualMapRegistry.builder().services("b", "a").policy("least-loaded").build();
		assertThat(registry.services().keySet()).containsExactly("b", "a");
		assertThat(registry.service("a").policyName()).isEqualTo("least-loaded");
		assertThat(registry.service("a").queues().settings().maxPrefillRequests())
			.isEqualTo(QueueSettings.DEFAULT_MAX_PREFILL_REQUESTS);
	}

	@Test
	void aServiceWithSettingsOfItsOwnRunsThemAndTheOthersTheDefaults() {
		PoolSettings small = new PoolSettings("dualmap", SchedulerSettings.ofDefaults(),
				QueueSettings.custom().maxPrefillRequests(4).build());
		DualMapRegistry registry = DualMapRegistry.builder()
			.services("llm", "small")
			.policy("least-loaded")
			.serviceSettings("small", small)
			.build();
		assertThat(registry.service("small").policyName()).isEqualTo("dualmap");
		assertThat(registry.service("small").queues().settings().maxPrefillRequests()).isEqualTo(4);
		assertThat(registry.service("llm").policyName()).isEqualTo("least-loaded");
		assertThat(registry.service("llm").queues().settings().maxPrefillRequests())
			.isEqualTo(QueueSettings.DEFAULT_MAX_PREFILL_REQUESTS);
	}

	@Test
	void eachPoolRunsTheColdRuleItsDispatchModeTakesUnlessItIsConfigured() {
		QueueSettings passThrough = QueueSettings.custom().mode(DispatchMode.PASS_THROUGH).build();
		SchedulerSettings off = SchedulerSettings.custom().coldCachedShare(0).build();
		DualMapRegistry registry = DualMapRegistry.builder()
			.services("queued", "direct", "directOff")
			.serviceSettings("direct", new PoolSettings("dualmap", SchedulerSettings.ofDefaults(), passThrough))
			.serviceSettings("directOff", new PoolSettings("dualmap", off, passThrough))
			.build();
		assertThat(registry.settings().spreadsCold()).isFalse();
		assertThat(registry.service("queued").instancePool().settings().spreadsCold()).isFalse();
		assertThat(registry.service("direct").instancePool().settings().coldCachedShare())
			.isEqualTo(SchedulerSettings.COLD_CACHED_SHARE);
		assertThat(registry.service("directOff").instancePool().settings().spreadsCold()).isFalse();
	}

	@Test
	void settingsForAServiceThatIsNotListedAreRefused() {
		DualMapRegistry.Builder builder = DualMapRegistry.builder()
			.services("llm")
			.serviceSettings("typo",
					new PoolSettings("dualmap", SchedulerSettings.ofDefaults(), QueueSettings.ofDefaults()));
		assertThatIllegalArgumentException().isThrownBy(builder::build)
			.withMessage("settings given for service 'typo', which is not one of [llm]");
	}

}

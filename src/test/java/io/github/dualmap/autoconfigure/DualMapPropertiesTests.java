package io.github.dualmap.autoconfigure;

import java.time.Duration;

import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.gateway.DualMapRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Defaults of {@code dualmap.*}, their mapping to the core settings, and startup
 * validation messages that name the bad property.
 */
class DualMapPropertiesTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DualMapAutoConfiguration.class))
		.withPropertyValues("dualmap.scrape.enabled=false", "dualmap.services=llm");

	@Test
	void defaultsAreTheReferenceValues() {
		this.runner.run(context -> {
			SchedulerSettings s = context.getBean(DualMapProperties.class).toSchedulerSettings();
			assertThat(s).isEqualTo(SchedulerSettings.custom().defaultSlo(Duration.ofSeconds(5)).build());
			assertThat(s.prefillNanosPerToken()).isEqualTo(25_000);
			assertThat(context.getBean(DualMapRegistry.class).policyName()).isEqualTo("dualmap");
		});
	}

	@Test
	void propertiesReachTheSchedulerSettings() {
		this.runner
			.withPropertyValues("dualmap.switch-factor=0.7", "dualmap.ttft.prefill-per-token=40us",
					"dualmap.hot-prefix.window=300", "dualmap.ring.virtual-nodes=80", "dualmap.slo.ttft=2s")
			.run(context -> {
				SchedulerSettings s = context.getBean(DualMapRegistry.class).settings();
				assertThat(s.switchFactor()).isEqualTo(0.7);
				assertThat(s.prefillNanosPerToken()).isEqualTo(40_000);
				assertThat(s.hotWindow()).isEqualTo(300);
				assertThat(s.virtualNodes()).isEqualTo(80);
				assertThat(s.defaultSloNanos()).isEqualTo(Duration.ofSeconds(2).toNanos());
			});
	}

	@Test
	void badValuesFailStartupNamingTheProperty() {
		expectFailure("dualmap.switch-factor=0", "dualmap.switch-factor must be > 0");
		expectFailure("dualmap.policy=no-such-policy", "dualmap.policy names no known routing policy");
		expectFailure("dualmap.hot-prefix.max-depth=0", "dualmap.hot-prefix.max-depth must be >= 1");
		expectFailure("dualmap.hot-prefix.drop-ratio=0.5",
				"dualmap.hot-prefix.drop-ratio must be <= dualmap.hot-prefix.ratio");
		expectFailure("dualmap.scrape.jitter=1.5", "dualmap.scrape.jitter must be in [0, 1)");
		expectFailure("dualmap.ttft.prefill-per-token=0s", "dualmap.ttft.prefill-per-token must be > 0");
		expectFailure("dualmap.breaker.failure-rate-threshold=0",
				"dualmap.breaker.failure-rate-threshold must be in (0, 100]");
	}

	private void expectFailure(String property, String message) {
		this.runner.withPropertyValues(property).run(context -> {
			assertThat(context).hasFailed();
			Throwable root = context.getStartupFailure();
			StringBuilder all = new StringBuilder();
			for (Throwable t = root; t != null; t = t.getCause()) {
				all.append(t.getMessage()).append('\n');
			}
			assertThat(all.toString()).as(property).contains(message);
		});
	}

	@Test
	void disabledMeansNoBeans() {
		this.runner.withPropertyValues("dualmap.enabled=false")
			.run(context -> assertThat(context).doesNotHaveBean(DualMapRegistry.class));
	}

}

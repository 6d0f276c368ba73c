package io.github.dualmap.autoconfigure;

import io.github.dualmap.emulator.EmulatorPool;
import io.github.dualmap.emulator.demo.DemoPoolConfiguration;
import io.github.dualmap.emulator.demo.DemoProperties;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The exec jar accepts {@code dualmap.demo.*} in every profile, bound by the demo's own
 * {@link DemoProperties}, while {@link DualMapProperties} still refuses an unknown key of
 * its own.
 */
class DemoKeysTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DualMapAutoConfiguration.class))
		.withUserConfiguration(DemoPoolConfiguration.class)
		.withPropertyValues("dualmap.scrape.enabled=false", "dualmap.services=llm");

	@Test
	void theDemosKeysAreAcceptedWithoutItsProfileAndStartNothing() {
		this.runner
			.withPropertyValues("dualmap.demo.instances=2", "dualmap.demo.base-port=9101", "dualmap.demo.time-scale=20",
					"dualmap.demo.profile=a100-8b", "dualmap.demo.model=m")
			.run(context -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(EmulatorPool.class);
				assertThat(context.getBean(DemoProperties.class).instances()).isEqualTo(2);
			});
	}

	@Test
	void anUnknownKeyOfTheGatewayStillFailsBesideThem() {
		this.runner.withPropertyValues("dualmap.demo.instances=2", "dualmap.sloo.ttft=2s").run(context -> {
			assertThat(context).hasFailed();
			StringBuilder messages = new StringBuilder();
			for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
				messages.append(t.getMessage()).append('\n');
			}
			assertThat(messages.toString()).contains("The elements [dualmap.sloo.ttft] were left unbound")
				.doesNotContain("dualmap.demo.instances]");
		});
	}

}

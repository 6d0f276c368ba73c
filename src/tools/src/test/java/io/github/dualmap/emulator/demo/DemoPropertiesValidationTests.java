package io.github.dualmap.emulator.demo;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

import io.github.dualmap.emulator.EmulatorPool;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A bad {@code dualmap.demo.*} value stops the demo with a message that names the
 * property, in an exception Spring Boot reports as such (no stack trace), before any
 * emulated instance starts.
 */
class DemoPropertiesValidationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withUserConfiguration(DemoPoolConfiguration.class)
		.withPropertyValues("spring.profiles.active=demo", "dualmap.demo.base-port=0");

	@Test
	void aBadValueNamesItsProperty() {
		expectInvalid("dualmap.demo.instances=0", "dualmap.demo.instances must be >= 1");
		expectInvalid("dualmap.demo.base-port=-1", "dualmap.demo.base-port must be 0 (free ports)");
		expectInvalid("dualmap.demo.base-port=65534", "dualmap.demo.base-port must be 0 (free ports)");
		expectInvalid("dualmap.demo.base-port=70000", "dualmap.demo.base-port must be 0 (free ports)");
		expectInvalid("dualmap.demo.time-scale=0", "dualmap.demo.time-scale must be a positive finite number");
		expectInvalid("dualmap.demo.profile=h200-70b",
				"dualmap.demo.profile must name an engine profile: h100-8b, h100-8b-fp8 or a100-8b");
		expectInvalid("dualmap.demo.model= ", "dualmap.demo.model must not be blank");
	}

	@Test
	void aPortInUseNamesTheBasePort() throws IOException {
		try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			this.runner.withPropertyValues("dualmap.demo.base-port=" + taken.getLocalPort()).run(context -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.isInstanceOf(InvalidConfigurationPropertyValueException.class)
					.hasMessageContaining("dualmap.demo.base-port")
					.hasMessageContaining("127.0.0.1:" + taken.getLocalPort());
			});
		}
	}

	@Test
	void freePortsWithBasePortZero() {
		this.runner.withPropertyValues("dualmap.demo.instances=2").run(context -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(EmulatorPool.class).servers()).hasSize(2)
				.allSatisfy(server -> assertThat(server.port()).isPositive());
		});
	}

	private void expectInvalid(String property, String message) {
		this.runner.withPropertyValues(property).run(context -> {
			assertThat(context).as(property).hasFailed();
			assertThat(context.getStartupFailure()).as(property)
				.rootCause()
				.isInstanceOf(BindValidationException.class)
				.hasMessageContaining(message);
		});
	}

}

package io.github.dualmap.emulator;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class EmulatorCommandTests {

	@Test
	void optionsBecomeSettings() {
		EmulatorCommand command = new EmulatorCommand();
		new CommandLine(command).parseArgs("--instances", "2", "--base-port", "9100", "--profile", "a100-8b",
				"--time-scale", "10", "--max-model-len", "8192", "--metrics", "sglang");
		EmulatorSettings settings = command.settings();
		assertThat(command.instances).isEqualTo(2);
		assertThat(command.basePort).isEqualTo(9100);
		assertThat(settings.profile().name()).isEqualTo("a100-8b");
		assertThat(settings.profile().tokenBudget()).isEqualTo(2048);
		assertThat(settings.profile().maxModelLen()).isEqualTo(8192);
		assertThat(settings.timeScale()).isEqualTo(10);
		assertThat(settings.metrics()).isEqualTo(MetricsFlavour.SGLANG);
	}

	@Test
	void unknownProfileIsNamed() {
		EmulatorCommand command = new EmulatorCommand();
		new CommandLine(command).parseArgs("--profile", "tpu-70b");
		assertThatIllegalArgumentException().isThrownBy(command::settings).withMessageContaining("tpu-70b");
	}

	@Test
	void poolStartsConsecutiveInstancesAndStopsThem() throws Exception {
		try (EmulatorPool pool = EmulatorPool
			.start(EmulatorSettings.of(io.github.dualmap.engine.EngineProfile.h100_8b()), 2, 0)) {
			assertThat(pool.servers()).hasSize(2);
			for (EmulatorServer s : pool.servers()) {
				assertThat(EmulatorServerTests.get(s, "/health").statusCode()).isEqualTo(200);
			}
		}
	}

}

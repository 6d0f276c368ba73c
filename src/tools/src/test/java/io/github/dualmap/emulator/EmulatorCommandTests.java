package io.github.dualmap.emulator;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class EmulatorCommandTests {

	@Test
	void optionsBecomeSettings() {
		EmulatorCommand command = new EmulatorCommand();
		new CommandLine(command).parseArgs("--instances", "2", "--base-port", "9100", "--profile", "a100-8b",
				"--time-scale", "10", "--max-model-len", "8192", "--metrics", "sglang",
				"--long-prefill-token-threshold", "1024");
		EmulatorSettings settings = command.settings();
		assertThat(command.instances).isEqualTo(2);
		assertThat(command.basePort).isEqualTo(9100);
		assertThat(settings.profile().name()).isEqualTo("a100-8b");
		assertThat(settings.profile().tokenBudget()).isEqualTo(2048);
		assertThat(settings.profile().maxModelLen()).isEqualTo(8192);
		assertThat(settings.profile().longPrefillTokenThreshold()).isEqualTo(1024);
		assertThat(settings.profile().chunkTokens()).isEqualTo(1024);
		assertThat(settings.timeScale()).isEqualTo(10);
		assertThat(settings.metrics()).isEqualTo(MetricsFlavour.SGLANG);
	}

	@Test
	void unknownProfileIsNamed() {
		EmulatorCommand command = new EmulatorCommand();
		new CommandLine(command).parseArgs("--profile", "tpu-70b");
		assertThatIllegalArgumentException().isThrownBy(command::settings).withMessageContaining("tpu-70b");
	}

	/** Runs the command; returns its exit code, stderr in {@code err}. */
	private static int run(StringWriter err, String... args) {
		return new EmulatorCommand().redirect(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true))
			.runWith(args);
	}

	@Test
	void badInputIsOneLineAndExitCode2() throws Exception {
		for (String[] args : new String[][] { { "--instances", "-2" }, { "--time-scale", "0" }, { "--metrics", "foo" },
				{ "--instances", "x" }, { "--no-such-flag" } }) {
			StringWriter err = new StringWriter();
			assertThat(run(err, args)).as(String.join(" ", args)).isEqualTo(2);
			assertThat(err.toString().lines()).as(err.toString()).hasSize(1);
			assertThat(err.toString()).startsWith("emulator: ").doesNotContain("\tat ");
		}
		// A port in use names the address and why.
		try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			StringWriter err = new StringWriter();
			assertThat(run(err, "--instances", "1", "--base-port", String.valueOf(taken.getLocalPort()))).isEqualTo(2);
			assertThat(err.toString().lines()).hasSize(1);
			assertThat(err.toString()).contains("cannot bind emulator on 127.0.0.1:" + taken.getLocalPort())
				.containsIgnoringCase("in use");
		}
	}

	@Test
	void messagesNameTheOptionsAsTheyAreTyped() {
		for (String[] args : new String[][] {
				{ "--time-scale", "0", "emulator: --time-scale must be a positive finite number but was 0.0" },
				{ "--max-model-len", "0", "emulator: --max-model-len must be > 0 but was 0" },
				{ "--kv-tokens", "10",
						"emulator: --kv-tokens must be between 16 and 34359738352 tokens"
								+ " (1 to 2^31-1 blocks of 16) but was 10" },
				{ "--jitter", "1", "emulator: --jitter must be in [0, 1) but was 1.0" },
				{ "--long-prefill-token-threshold", "-1",
						"emulator: --long-prefill-token-threshold must be >= 0 but was -1" },
				{ "--instances", "0", "emulator: --instances must be >= 1 but was 0" }, { "--host", "256.1.1.1",
						"emulator: --host 256.1.1.1 is neither an IP address nor a host name that" + " resolves" } }) {
			StringWriter err = new StringWriter();
			assertThat(run(err, args[0], args[1], "--base-port", "0")).as(args[0]).isEqualTo(2);
			assertThat(err.toString().strip()).startsWith(args[2]);
			assertThat(err.toString().lines()).hasSize(1);
		}
	}

	@Test
	void versionIsTheJars() {
		StringWriter out = new StringWriter();
		int code = new EmulatorCommand().redirect(new PrintWriter(out, true), new PrintWriter(new StringWriter(), true))
			.runWith("--version");
		assertThat(code).isZero();
		assertThat(out.toString()).startsWith("dualmap-gateway ");
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

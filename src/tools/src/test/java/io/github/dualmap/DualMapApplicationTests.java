package io.github.dualmap;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The exec jar's first argument: a command, help, or the gateway's own arguments; a typo
 * of a command must not start a gateway.
 */
class DualMapApplicationTests {

	private final AtomicBoolean gatewayRan = new AtomicBoolean();

	private int dispatch(String... args) {
		return DualMapApplication.dispatch(args, () -> this.gatewayRan.set(true));
	}

	@Test
	void noCommandOrOptionsRunTheGateway() {
		assertThat(dispatch()).isEqualTo(-1);
		assertThat(this.gatewayRan).isTrue();
		this.gatewayRan.set(false);
		assertThat(dispatch("--spring.profiles.active=demo")).isEqualTo(-1);
		assertThat(this.gatewayRan).isTrue();
	}

	@Test
	void helpListsTheCommandsAndATypoIsRefused() {
		PrintStream out = System.out;
		PrintStream err = System.err;
		ByteArrayOutputStream printed = new ByteArrayOutputStream();
		ByteArrayOutputStream errors = new ByteArrayOutputStream();
		System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
		System.setErr(new PrintStream(errors, true, StandardCharsets.UTF_8));
		try {
			assertThat(dispatch("--help")).isZero();
			assertThat(dispatch("simm", "--trace", "t.jsonl")).isEqualTo(2);
			assertThat(dispatch("-help")).isEqualTo(2);
			assertThat(dispatch("--version")).isZero();
		}
		finally {
			System.setOut(out);
			System.setErr(err);
		}
		assertThat(this.gatewayRan).isFalse();
		assertThat(printed.toString(StandardCharsets.UTF_8)).contains("sim ", "churn ", "emulator ", "overhead ")
			.contains("dualmap-gateway ");
		assertThat(errors.toString(StandardCharsets.UTF_8)).startsWith("unknown command 'simm'");
	}

}

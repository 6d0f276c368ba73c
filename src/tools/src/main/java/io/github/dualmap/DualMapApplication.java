package io.github.dualmap;

import java.util.Arrays;

import io.github.dualmap.emulator.EmulatorCommand;
import io.github.dualmap.emulator.demo.DemoConfigurationLoader;
import io.github.dualmap.emulator.demo.DemoPoolConfiguration;
import io.github.dualmap.overhead.OverheadCommand;
import io.github.dualmap.sim.ChurnCommand;
import io.github.dualmap.sim.ConsoleCommand;
import io.github.dualmap.sim.SimCommand;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;

/**
 * Entry point of the {@code -exec} jar: with no sub-command it runs a standalone gateway
 * with the DualMap auto-configuration; users who embed the library run their own
 * application instead. A first argument naming a sub-command ({@code emulator},
 * {@code sim}, {@code churn}, {@code overhead}) runs that command instead of the gateway.
 * <p>
 * With the {@code demo} profile, {@link #main} adds the demo's configuration
 * ({@link DemoConfigurationLoader}) and this class's import the pool of emulated engines
 * ({@link DemoPoolConfiguration}). Only this application does: one of a user's with the
 * jar on its classpath and a profile of the same name gets none of it. Tests of the demo
 * run through {@code main} ({@code @SpringBootTest(useMainMethod = ALWAYS)}).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(DemoPoolConfiguration.class)
public class DualMapApplication {

	static final String USAGE = """
			Usage: java -jar dualmap-gateway-exec.jar [COMMAND] [OPTIONS]
			Without a command, runs a gateway (Spring Boot: --key=value arguments set properties,
			--spring.profiles.active=demo adds the demo pool of emulated engines).
			Commands (each takes --help):
			  sim        find each routing policy's capacity within a TTFT SLO on a trace
			  churn      measure keys moved by one membership change, for two rings and one
			  emulator   serve emulated vLLM instances over HTTP
			  overhead   measure what the gateway adds per request against a direct call
			""";

	public static void main(String[] args) {
		int code = dispatch(args, () -> gateway().run(args));
		if (code >= 0) {
			System.exit(code);
		}
	}

	/**
	 * The standalone gateway, with the demo's configuration when its profile is active.
	 */
	static SpringApplication gateway() {
		SpringApplication application = new SpringApplication(DualMapApplication.class);
		application.addListeners(new DemoConfigurationLoader());
		return application;
	}

	/**
	 * Runs the command {@code args} name, or {@code gateway}; returns the exit code, or
	 * -1 while the gateway runs. A first argument that is neither a command nor an option
	 * (a typo of a command) is refused rather than started as a gateway.
	 */
	static int dispatch(String[] args, Runnable gateway) {
		String command = args.length > 0 ? args[0] : "";
		String[] rest = args.length > 0 ? Arrays.copyOfRange(args, 1, args.length) : args;
		switch (command) {
			case "sim" -> {
				return SimCommand.run(rest);
			}
			case "churn" -> {
				return ChurnCommand.run(rest);
			}
			case "overhead" -> {
				return OverheadCommand.run(rest);
			}
			case "emulator" -> {
				return EmulatorCommand.run(rest);
			}
			case "help", "--help", "-h" -> {
				System.out.print(USAGE);
				return 0;
			}
			case "--version", "-V" -> {
				System.out.println(ConsoleCommand.version());
				return 0;
			}
			default -> {
				// Spring Boot reads --name[=value] arguments; anything else is a typo.
				if (!command.isEmpty() && !command.startsWith("--")) {
					System.err.println("unknown command '" + command + "'\n" + USAGE);
					return 2;
				}
				gateway.run();
				return -1;
			}
		}
	}

}

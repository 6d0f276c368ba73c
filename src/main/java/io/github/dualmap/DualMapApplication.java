package io.github.dualmap;

import java.util.Arrays;

import io.github.dualmap.emulator.EmulatorCommand;
import io.github.dualmap.emulator.demo.DemoPoolConfiguration;
import io.github.dualmap.overhead.OverheadCommand;
import io.github.dualmap.sim.ChurnCommand;
import io.github.dualmap.sim.SimCommand;
import picocli.CommandLine;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;

/**
 * Entry point of the {@code -exec} jar: with no sub-command it runs a standalone gateway
 * with the DualMap auto-configuration; users who embed the library run their own
 * application instead. A first argument naming a sub-command ({@code emulator},
 * {@code sim}, {@code churn}, {@code overhead}) runs that command instead of the gateway.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(DemoPoolConfiguration.class)
public class DualMapApplication {

	public static void main(String[] args) {
		String command = args.length > 0 ? args[0] : "";
		switch (command) {
			case "sim" -> System.exit(SimCommand.run(Arrays.copyOfRange(args, 1, args.length)));
			case "churn" -> System.exit(ChurnCommand.run(Arrays.copyOfRange(args, 1, args.length)));
			case "overhead" -> System.exit(OverheadCommand.run(Arrays.copyOfRange(args, 1, args.length)));
			case "emulator" -> System.exit(runCommand(new EmulatorCommand(), args));
			default -> SpringApplication.run(DualMapApplication.class, args);
		}
	}

	private static int runCommand(Object command, String[] args) {
		return new CommandLine(command).execute(Arrays.copyOfRange(args, 1, args.length));
	}

}

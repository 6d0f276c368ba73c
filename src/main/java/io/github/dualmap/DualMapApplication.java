package io.github.dualmap;

import java.util.Arrays;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/**
 * Entry point of the {@code -exec} jar: with no sub-command it runs a standalone gateway
 * with the DualMap auto-configuration; users who embed the library run their own
 * application instead.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class DualMapApplication {

	public static void main(String[] args) {
		String command = args.length > 0 ? args[0] : "";
		switch (command) {
			case "sim" -> System.exit(io.github.dualmap.sim.SimCommand.run(Arrays.copyOfRange(args, 1, args.length)));
			default -> SpringApplication.run(DualMapApplication.class, args);
		}
	}

}

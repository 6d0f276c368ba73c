package io.github.dualmap;

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
		SpringApplication.run(DualMapApplication.class, args);
	}

}

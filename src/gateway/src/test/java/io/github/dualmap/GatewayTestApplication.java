package io.github.dualmap;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/**
 * The gateway as an application with nothing of its own: auto-configuration only. The
 * configuration of every {@link GatewayIntegrationTest} without beans of its own, so that
 * tests differing only in properties share this class.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class GatewayTestApplication {

}

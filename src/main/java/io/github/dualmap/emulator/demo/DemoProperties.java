package io.github.dualmap.emulator.demo;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code dualmap.demo.*}: the emulated pool started by the {@code demo} profile.
 *
 * @param instances number of instances
 * @param basePort port of the first instance, the others follow
 * @param timeScale how many times faster than real time the engines run
 * @param profile engine profile name
 * @param model served model name
 */
@ConfigurationProperties("dualmap.demo")
public record DemoProperties(@DefaultValue("4") int instances, @DefaultValue("8101") int basePort,
		@DefaultValue("1.0") double timeScale, @DefaultValue("h100-8b") String profile,
		@DefaultValue("meta-llama/Llama-3.1-8B-Instruct") String model) {
}

package io.github.dualmap.emulator.demo;

import io.github.dualmap.engine.EngineProfile;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Min;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * {@code dualmap.demo.*}: the emulated pool started by the {@code demo} profile,
 * validated at startup with messages that name the bad property.
 *
 * @param instances number of instances
 * @param basePort port of the first instance, the others follow (0: free ports)
 * @param timeScale how many times faster than real time the engines run
 * @param profile engine profile name
 * @param model served model name
 */
@ConfigurationProperties("dualmap.demo")
@Validated
public record DemoProperties(
		@Min(value = 1, message = "dualmap.demo.instances must be >= 1") @DefaultValue("4") int instances,
		@DefaultValue("8101") int basePort, @DefaultValue("1.0") double timeScale,
		@DefaultValue("h100-8b") String profile, @DefaultValue("meta-llama/Llama-3.1-8B-Instruct") String model) {

	@AssertTrue(message = "dualmap.demo.base-port must be 0 (free ports) or leave room in 1..65535 for "
			+ "dualmap.demo.instances consecutive ports")
	private boolean isBasePortValid() {
		return this.basePort == 0
				|| this.basePort > 0 && (long) this.basePort + Math.max(this.instances, 1) - 1 <= 65535;
	}

	@AssertTrue(message = "dualmap.demo.time-scale must be a positive finite number")
	private boolean isTimeScaleValid() {
		return this.timeScale > 0 && !Double.isInfinite(this.timeScale);
	}

	@AssertTrue(message = "dualmap.demo.model must not be blank")
	private boolean isModelNamed() {
		return !this.model.isBlank();
	}

	@AssertTrue(message = "dualmap.demo.profile must name an engine profile: h100-8b, h100-8b-fp8 or a100-8b")
	private boolean isProfileKnown() {
		try {
			EngineProfile.named(this.profile);
			return true;
		}
		catch (IllegalArgumentException ex) {
			return false;
		}
	}

}

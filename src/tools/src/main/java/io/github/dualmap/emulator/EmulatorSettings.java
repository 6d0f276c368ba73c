package io.github.dualmap.emulator;

import io.github.dualmap.engine.EngineProfile;

/**
 * How an emulated instance presents itself.
 *
 * @param model served model name
 * @param profile engine profile (latency, limits, context length)
 * @param timeScale how many times faster than real time the model runs (1 = real time)
 * @param metrics {@code /metrics} flavour
 * @param host address to bind, loopback by default
 */
public record EmulatorSettings(String model, EngineProfile profile, double timeScale, MetricsFlavour metrics,
		String host) {

	/** Model name served by default. */
	public static final String DEFAULT_MODEL = "meta-llama/Llama-3.1-8B-Instruct";

	public EmulatorSettings {
		if (model.isBlank()) {
			throw new IllegalArgumentException("model must not be blank");
		}
		if (!(timeScale > 0) || Double.isInfinite(timeScale)) {
			throw new IllegalArgumentException("timeScale must be a positive finite number but was " + timeScale);
		}
	}

	/** The default model on {@code profile}, real time, vLLM metrics, loopback. */
	public static EmulatorSettings of(EngineProfile profile) {
		return new EmulatorSettings(DEFAULT_MODEL, profile, 1.0, MetricsFlavour.VLLM, "127.0.0.1");
	}

	public EmulatorSettings withTimeScale(double timeScale) {
		return new EmulatorSettings(model, profile, timeScale, metrics, host);
	}

	public EmulatorSettings withMetrics(MetricsFlavour metrics) {
		return new EmulatorSettings(model, profile, timeScale, metrics, host);
	}

	public EmulatorSettings withModel(String model) {
		return new EmulatorSettings(model, profile, timeScale, metrics, host);
	}

}

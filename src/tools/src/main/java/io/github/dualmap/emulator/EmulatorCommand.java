package io.github.dualmap.emulator;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.CountDownLatch;

import io.github.dualmap.engine.EngineProfile;
import io.github.dualmap.sim.ConsoleCommand;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code emulator} sub-command of the exec jar: starts N emulated vLLM instances and runs
 * until interrupted.
 */
@Command(name = "emulator", mixinStandardHelpOptions = true,
		description = "Start emulated vLLM-compatible instances (no GPU) on --host (loopback by default).")
public final class EmulatorCommand extends ConsoleCommand<EmulatorCommand> {

	public EmulatorCommand() {
		super("emulator");
	}

	/** Runs the command with {@code args}; returns the exit code (once stopped). */
	public static int run(String... args) {
		return new EmulatorCommand().runWith(args);
	}

	@Option(names = "--instances", defaultValue = "4", description = "Number of instances (default ${DEFAULT-VALUE}).")
	int instances;

	@Option(names = "--base-port", defaultValue = "8101",
			description = "Port of the first instance; the others follow (default ${DEFAULT-VALUE}).")
	int basePort;

	@Option(names = "--profile", defaultValue = EngineProfile.DEFAULT,
			description = "Engine profile: h100-8b, h100-8b-fp8 or a100-8b (default ${DEFAULT-VALUE}).")
	String profile;

	@Option(names = "--time-scale", defaultValue = "1.0",
			description = "Run the model this many times faster than real time (default ${DEFAULT-VALUE}).")
	double timeScale;

	@Option(names = "--model", defaultValue = EmulatorSettings.DEFAULT_MODEL,
			description = "Served model name (default ${DEFAULT-VALUE}).")
	String model;

	@Option(names = "--max-model-len", description = "Context length in tokens (default: the profile's).")
	Integer maxModelLen;

	@Option(names = "--kv-tokens", description = "KV cache capacity in tokens (default: the profile's).")
	Long kvTokens;

	@Option(names = "--long-prefill-token-threshold", defaultValue = "0", paramLabel = "TOKENS",
			description = "Most prompt tokens one request is scheduled in a step, vLLM's "
					+ "--long-prefill-token-threshold; 0 for none (default ${DEFAULT-VALUE}).")
	int longPrefillTokenThreshold;

	@Option(names = "--jitter", defaultValue = "0",
			description = "Relative step time noise in [0, 1) (default ${DEFAULT-VALUE}).")
	double jitter;

	@Option(names = "--seed", defaultValue = "1", description = "Seed of the jitter (default ${DEFAULT-VALUE}).")
	long seed;

	@Option(names = "--metrics", defaultValue = "vllm",
			description = "/metrics flavour: vllm or sglang (default ${DEFAULT-VALUE}).")
	String metrics;

	@Option(names = "--host", defaultValue = "127.0.0.1", description = "Address to bind (default ${DEFAULT-VALUE}).")
	String host;

	/**
	 * The settings these options describe, checked here so that a message names the
	 * option as it is typed, not the setting it becomes.
	 */
	EmulatorSettings settings() {
		if (instances < 1) {
			throw new IllegalArgumentException("--instances must be >= 1 but was " + instances);
		}
		if (!(timeScale > 0) || Double.isInfinite(timeScale)) {
			throw new IllegalArgumentException("--time-scale must be a positive finite number but was " + timeScale);
		}
		if (maxModelLen != null && maxModelLen <= 0) {
			throw new IllegalArgumentException("--max-model-len must be > 0 but was " + maxModelLen);
		}
		if (!(jitter >= 0 && jitter < 1)) {
			throw new IllegalArgumentException("--jitter must be in [0, 1) but was " + jitter);
		}
		if (longPrefillTokenThreshold < 0) {
			throw new IllegalArgumentException(
					"--long-prefill-token-threshold must be >= 0 but was " + longPrefillTokenThreshold);
		}
		if (model.isBlank()) {
			throw new IllegalArgumentException("--model must not be blank");
		}
		EngineProfile p = EngineProfile.named(profile)
			.withJitter(jitter, seed)
			.withLongPrefillTokenThreshold(longPrefillTokenThreshold);
		int block = p.blockTokens();
		if (kvTokens != null && (kvTokens < block || kvTokens / block > Integer.MAX_VALUE)) {
			throw new IllegalArgumentException(
					"--kv-tokens must be between " + block + " and " + (long) block * Integer.MAX_VALUE
							+ " tokens (1 to 2^31-1 blocks of " + block + ") but was " + kvTokens);
		}
		try {
			InetAddress.getByName(host);
		}
		catch (UnknownHostException ex) {
			// Else the bind fails with an exception that has no message.
			throw new IllegalArgumentException(
					"--host " + host + " is neither an IP address nor a host name that resolves");
		}
		if (maxModelLen != null) {
			p = p.withMaxModelLen(maxModelLen);
		}
		if (kvTokens != null) {
			p = p.withKvCapacityTokens(kvTokens);
		}
		return new EmulatorSettings(model, p, timeScale, MetricsFlavour.of(metrics), host);
	}

	@Override
	public Integer call() throws InterruptedException {
		EmulatorPool pool = EmulatorPool.start(settings(), instances, basePort);
		CountDownLatch stopped = new CountDownLatch(1);
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			pool.close();
			stopped.countDown();
		}, "emulator-shutdown"));
		for (EmulatorServer s : pool.servers()) {
			stdout.println("emulator " + s.baseUrl() + "  model=" + model + " profile=" + profile + " time-scale="
					+ timeScale + "  (/v1/completions, /v1/chat/completions, /v1/models, /health, /metrics)");
		}
		stdout.println("Ctrl-C to stop.");
		stopped.await();
		return 0;
	}

}

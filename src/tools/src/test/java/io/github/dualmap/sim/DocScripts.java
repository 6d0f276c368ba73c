package io.github.dualmap.sim;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Runs the Python scripts of {@code docs/scripts}, which turn the simulator's outputs
 * into the tables of docs/benchmarks.md. A test that runs one is skipped where no
 * {@code python3} runs.
 */
final class DocScripts {

	private DocScripts() {
	}

	/** What a script printed (standard output and error together) and its exit code. */
	record Outcome(int exitCode, String output) {
	}

	/**
	 * Runs {@code docs/scripts/<script>} with {@code args} and returns what it printed;
	 * fails unless it exits 0 within a minute.
	 */
	static String run(String script, String... args) throws IOException, InterruptedException {
		Outcome outcome = exec(script, args);
		assertThat(outcome.exitCode()).as(script + " printed:\n" + outcome.output()).isZero();
		return outcome.output();
	}

	/** Runs {@code docs/scripts/<script>} with {@code args}, whatever its exit code. */
	static Outcome exec(String script, String... args) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of("python3", path(script).toString()));
		command.addAll(List.of(args));
		Process process;
		try {
			process = new ProcessBuilder(command).redirectErrorStream(true).start();
		}
		catch (IOException ex) {
			assumeTrue(false, "python3 does not run here: " + ex.getMessage());
			throw ex;
		}
		String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).as(script).isTrue();
		return new Outcome(process.exitValue(), out);
	}

	/**
	 * docs/scripts/{@code script}, from the working directory or a directory above it.
	 */
	private static Path path(String script) {
		Path start = Path.of("").toAbsolutePath();
		for (Path dir = start; dir != null; dir = dir.getParent()) {
			Path file = dir.resolve("docs").resolve("scripts").resolve(script);
			if (Files.isRegularFile(file)) {
				return file;
			}
		}
		return fail("docs/scripts/" + script + " is neither in " + start + " nor in a directory above it");
	}

}

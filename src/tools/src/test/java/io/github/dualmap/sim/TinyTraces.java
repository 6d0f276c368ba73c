package io.github.dualmap.sim;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.github.dualmap.sim.trace.SyntheticWorkload;
import io.github.dualmap.sim.trace.Trace;
import io.github.dualmap.sim.trace.TraceRequest;

/** Small trace files for the tests that run {@code sim} on a file. */
final class TinyTraces {

	private TinyTraces() {
	}

	/**
	 * Writes {@code dir/tiny.jsonl}, a Mooncake-format file of the synthetic tenants
	 * workload's first {@code requests} requests (seed 3), and returns its path.
	 */
	static Path mooncakeFile(Path dir, int requests) throws IOException {
		Trace t = SyntheticWorkload.TENANTS.generate(requests, 3);
		List<String> lines = new ArrayList<>();
		for (TraceRequest r : t.requests()) {
			StringBuilder ids = new StringBuilder();
			for (long id : r.hashIds()) {
				ids.append(ids.isEmpty() ? "" : ", ").append(id);
			}
			lines.add(String.format(Locale.ROOT,
					"{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d, \"hash_ids\": [%s]}",
					Math.round(r.timestampMillis()), r.inputTokens(), r.outputTokens(), ids));
		}
		Path file = dir.resolve("tiny.jsonl");
		Files.write(file, lines);
		return file;
	}

}

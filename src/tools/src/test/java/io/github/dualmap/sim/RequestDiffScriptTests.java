package io.github.dualmap.sim;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code docs/scripts/request_diff.py} on two hand-made request logs, where what was
 * ahead of each late request is known: its third table counts the requests ahead by
 * sender and splits the late ones by the age of another router's long prompt ahead of
 * them. Skipped where no {@code python3} runs.
 */
class RequestDiffScriptTests {

	@TempDir
	Path dir;

	@Test
	void theLateRequestsAreSplitByTheAgeOfAnotherRoutersLongPromptAheadOfThem() throws Exception {
		Path[] logs = logs();
		assertThat(run(logs[0], logs[1])).contains("| 0k-4k | 3 | 0.3 / 500 | 0.7 / 13,333 | 1 | 1 | 1 |");
		// At a tenth of a second the prompt sent 0.2 s before is an older one.
		assertThat(run(logs[0], logs[1], "--scrape-interval", "0.1"))
			.contains("| 0k-4k | 3 | 0.3 / 500 | 0.7 / 13,333 | 0 | 2 | 1 |");
	}

	/**
	 * Run A serves every request in time; in run B three short prompts on router 1 are
	 * late: one released 0.2 s after router 0's long prompt and behind router 1's own
	 * smaller one, one 2 s after router 2's long prompt, one with nothing ahead.
	 */
	private Path[] logs() throws IOException {
		List<String> a = new ArrayList<>();
		List<String> b = new ArrayList<>();
		// index, router, arrival, prompt, cached, instance, released, ttft, late in B
		Object[][] requests = { { 0, 0, 10.0, 20_000, 0, "e1", 10.0, 3.0, false },
				{ 1, 1, 10.1, 2_000, 500, "e1", 10.1, 0.4, false }, { 2, 1, 10.2, 1_000, 0, "e1", 10.2, 6.0, true },
				{ 3, 2, 18.0, 20_000, 0, "e2", 18.0, 4.0, false }, { 4, 1, 20.0, 1_000, 0, "e2", 20.0, 6.0, true },
				{ 5, 1, 30.0, 1_000, 0, "e3", 30.0, 6.0, true } };
		for (Object[] r : requests) {
			boolean late = (Boolean) r[8];
			a.add(line(r, late ? 0.5 : (Double) r[7], "within_slo"));
			b.add(line(r, (Double) r[7], late ? "late" : "within_slo"));
		}
		Path one = this.dir.resolve("a.jsonl");
		Path four = this.dir.resolve("b.jsonl");
		Files.write(one, a);
		Files.write(four, b);
		return new Path[] { one, four };
	}

	private static String line(Object[] r, double ttft, String outcome) {
		return String.format(Locale.ROOT,
				"{\"index\":%d,\"router\":%d,\"arrival_s\":%.3f,\"prompt_tokens\":%d,\"feasible\":true,\"slo_s\":5.0,"
						+ "\"instance\":\"%s\",\"released_s\":%.3f,\"reason\":\"affinity\",\"moves\":0,\"rescued\":false,"
						+ "\"cached_tokens\":%d,\"ttft_s\":%.3f,\"outcome\":\"%s\",\"rejection\":null,\"rejected_at\":null}",
				r[0], r[1], r[2], r[3], r[5], r[6], r[4], ttft, outcome);
	}

	private static String run(Path a, Path b, String... options) throws Exception {
		List<String> args = new ArrayList<>(List.of(a.toString(), b.toString()));
		args.addAll(List.of(options));
		return DocScripts.run("request_diff.py", args.toArray(String[]::new));
	}

}

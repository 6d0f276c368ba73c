package io.github.dualmap.sim;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every script of {@code docs/scripts} that docs/benchmarks.md runs, on what the
 * simulator writes for a small trace: request logs, the engine timeline and the timelines
 * of a slowdown and of a scale-out and scale-in. A field the simulator renames, or a
 * script that no longer reads it, fails here rather than in a reader's shell. Skipped
 * where no {@code python3} runs.
 */
class DocScriptsTests {

	@TempDir
	Path dir;

	private final StringWriter err = new StringWriter();

	private void sim(Path trace, String... args) {
		List<String> all = new ArrayList<>(List.of("--trace", trace.toString(), "--instances", "2", "--policies",
				"dualmap", "--warmup", "100", "--rate", "3"));
		all.addAll(List.of(args));
		SimCommand command = new SimCommand().redirect(new PrintWriter(new StringWriter(), true),
				new PrintWriter(this.err, true), () -> 0L);
		assertThat(command.runWith(all.toArray(String[]::new))).as(this.err.toString()).isZero();
	}

	private String out(String name) {
		return this.dir.resolve(name).toString();
	}

	@Test
	void theRequestLogScriptsReadTheLogsOfOneAndOfTwoRouters() throws Exception {
		Path trace = TinyTraces.mooncakeFile(this.dir, 400);
		sim(trace, "--request-log", "--out", out("one"));
		sim(trace, "--routers", "2", "--request-log", "--out", out("two"));
		String one = this.dir.resolve("one").resolve("requests-dualmap.jsonl").toString();
		String two = this.dir.resolve("two").resolve("requests-dualmap.jsonl").toString();
		assertThat(DocScripts.run("request_diff.py", one, two)).contains("| A: prompt tokens | feasible |")
			.contains("| B: prompt tokens | feasible |")
			.contains("| 0k-4k | ");
		assertThat(DocScripts.run("prefill_overlap.py", one, two)).contains("| " + one + " | ")
			.contains("| " + two + " | ");
		assertThat(DocScripts.run("turn_split.py", trace.toString(), one, two)).contains("| " + one + " | ")
			.contains("| " + two + " | ");
	}

	@Test
	void theTimelineScriptsReadTheEngineTimelineAndTheTimelinesOfChangesAgainstAReference() throws Exception {
		Path trace = TinyTraces.mooncakeFile(this.dir, 400);
		sim(trace, "--engine-timeline", "--out", out("engines"));
		assertThat(DocScripts.run("engine_table.py", out("engines"), "10", "30")).contains("| 10 | ")
			.contains("| 30 | ");
		sim(trace, "--slow-down", "50%:0:3", "--out", out("slow"));
		sim(trace, "--slow-down", "50%:0:1", "--out", out("reference"));
		sim(trace, "--scale", "50%:+1", "--out", out("scaleout"));
		sim(trace, "--scale", "50%:-1", "--out", out("scalein"));
		assertThat(DocScripts.run("scale_table.py", out("scaleout"), out("scalein"), out("reference")))
			.contains("| +2 | dualmap | ")
			.contains("| −1 | dualmap | ");
		assertThat(DocScripts.run("scale_table.py", "one=" + out("slow"), out("reference")))
			.contains("| one | dualmap | ")
			.contains("slowed instances' estimate over the others'");
		assertThat(DocScripts.run("seed_table.py", out("slow") + "=" + out("reference"))).contains("| `dualmap` | ");
	}

	@Test
	void cacheReplacementComparesEachPoolSizeAndRefusesATraceShorterThanItsWarmUp() throws Exception {
		Path longer = TinyTraces.mooncakeFile(Files.createDirectories(this.dir.resolve("long")), 700);
		assertThat(DocScripts.run("cache_replacement.py", longer.toString(), "1", "2")).contains("| 1 | ")
			.contains("| 2 | ");
		Path shorter = TinyTraces.mooncakeFile(this.dir, 400);
		DocScripts.Outcome refused = DocScripts.exec("cache_replacement.py", shorter.toString(), "1");
		assertThat(refused.exitCode()).isNotZero();
		assertThat(refused.output()).contains("has 400 requests and the first 500 are not counted");
	}

}

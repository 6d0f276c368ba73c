package io.github.dualmap.sim.report;

import java.util.List;
import java.util.Locale;

import io.github.dualmap.sim.BenchmarkReport;
import io.github.dualmap.sim.RunResult;
import io.github.dualmap.sim.WorkBound;

/**
 * The results as markdown: the headline table, one row per policy with metrics at each
 * policy's capacity, then the engine state and the SLO attainment in the same runs.
 */
public final class MarkdownTable {

	private MarkdownTable() {
	}

	/**
	 * The workload's {@link WorkBound}: the rate at which the report's engines would be
	 * busy all the time with every reusable prefix cached, the same with their caches
	 * pooled into one LRU cache ({@link WorkBound#pooledLru}), the headline's ceiling
	 * ({@link io.github.dualmap.sim.Yardstick#headlineCeiling}: the same engines doing
	 * the least work that passes the headline), and each policy's capacity as a share of
	 * all three.
	 */
	public static String workBound(BenchmarkReport report, WorkBound bound, WorkBound pooledLru, Ceilings ceilings,
			String profile) {
		StringBuilder out = new StringBuilder();
		double max = bound.maxRate(report.instances());
		out.append(String.format(Locale.ROOT, "%nWork bound (no router can serve more)%n%n"));
		out.append(String.format(Locale.ROOT,
				"With every prefix an earlier request computed still cached (an infinite KV cache: %.1f %% of the "
						+ "measured prompt tokens) and the work spread evenly, %d %s engines are busy all the time at "
						+ "%.2f req/s (%.3f s of engine time per request, the fixed cost of each step left out; "
						+ "%.2f req/s with no reuse).%n%n",
				100 * bound.reusableShare(), report.instances(), profile, max, bound.busySecondsPerRequest(),
				bound.coldMaxRate(report.instances())));
		double lru = pooledLru.maxRate(report.instances());
		out.append(String.format(Locale.ROOT,
				"With the engines' caches pooled into one that evicts least recently used blocks, as each engine "
						+ "does (no block held twice, none held by running requests, requests served in arrival "
						+ "order), %.1f %% of the measured prompt tokens are reused and the engines are busy all the "
						+ "time at %.2f req/s: about the most a router gets from LRU engine caches, not a bound "
						+ "(caches fed apart can keep more than one LRU cache).%n%n",
				100 * pooledLru.reusableShare(), lru));
		out.append(String.format(Locale.ROOT,
				"The headline may leave some requests out (turned away or late): %s. Left out of the costliest "
						+ "requests, with every prefix cached for the rest, the engines are busy all the time at "
						+ "%.2f req/s, the headline's ceiling: no router passes the headline above it. With the "
						+ "pooled LRU cache's reuse instead, %.2f req/s (not a bound).%n%n",
				allowance(report), ceilings.infiniteCache(), ceilings.pooledLru()));
		if (report.hasReplicates()) {
			out.append(String.format(Locale.ROOT,
					"The rates are those of the first seed's workload; each capacity is the row's replicate with the "
							+ "lower median capacity.%n%n"));
		}
		out.append("| policy | capacity (req/s) | share of the bound | share of the pooled-LRU rate "
				+ "| share of the headline's ceiling | share of its pooled-LRU rate |\n");
		out.append("|---|---:|---:|---:|---:|---:|\n");
		for (BenchmarkReport.PolicyReport p : report.policies()) {
			double c = p.search().capacity();
			out.append(String.format(Locale.ROOT, "| %s | %.2f | %.1f %% | %.1f %% | %.1f %% | %.1f %% |%n", p.name(),
					c, 100 * c / max, 100 * c / lru, 100 * c / ceilings.infiniteCache(),
					100 * c / ceilings.pooledLru()));
		}
		return out.toString();
	}

	/**
	 * The headline's ceiling ({@link io.github.dualmap.sim.Yardstick#headlineCeiling}) in
	 * req/s: with every prefix an earlier request computed cached (a bound), and with the
	 * reuse of the engines' caches pooled into one LRU cache (not a bound).
	 */
	public record Ceilings(double infiniteCache, double pooledLru) {
	}

	/**
	 * What the report's headline lets a run leave out, e.g. "up to 10 % of the feasible
	 * requests, 10 % of their prompt tokens and 20 % of each prompt-size quartile".
	 */
	static String allowance(BenchmarkReport report) {
		StringBuilder b = new StringBuilder("up to ").append(percent(1 - report.targetAttainment()))
			.append(" of the feasible requests");
		boolean tokens = report.promptTokenTarget() > 0;
		boolean sizes = report.sizeFloor() > 0;
		if (tokens) {
			b.append(sizes ? ", " : " and ")
				.append(percent(1 - report.promptTokenTarget()))
				.append(" of their prompt tokens");
		}
		if (sizes) {
			b.append(" and ").append(percent(1 - report.sizeFloor())).append(" of each prompt-size quartile");
		}
		return b.toString();
	}

	private static String percent(double share) {
		return new java.math.BigDecimal(100 * share).setScale(2, java.math.RoundingMode.HALF_UP)
			.stripTrailingZeros()
			.toPlainString() + " %";
	}

	public static String render(BenchmarkReport report) {
		StringBuilder out = new StringBuilder();
		out.append(String.format(Locale.ROOT, "Trace %s, %d instances, %d router(s), TTFT SLO %.3g s%n", report.trace(),
				report.instances(), report.routers(), report.sloTtftSeconds()));
		out.append(String.format(Locale.ROOT, "Capacity: the highest rate with %s%n%n", report.metric()));
		boolean replicated = report.hasReplicates();
		if (replicated) {
			List<BenchmarkReport.Replicate> seeds = report.policies().get(0).replicates();
			out.append(String.format(Locale.ROOT,
					"%d replicates, seeds %d to %d: `capacity median (min-max)` and `replicates` (each seed's "
							+ "capacity, in seed order) are over all of them; every other column, here and below, "
							+ "is the row's replicate with the lower median capacity (the lowest seed of those "
							+ "with it).%n%n",
					seeds.size(), seeds.get(0).seed(), seeds.get(seeds.size() - 1).seed()));
		}
		out.append(replicated ? "| policy | capacity median (min-max) | replicates " : "| policy ");
		out.append("| capacity (req/s) | request-only capacity (req/s) | feasible | feasible within SLO "
				+ "| their prompt tokens within SLO | by prompt size, shortest quartile first | rejected | rescued |\n");
		out.append(replicated ? "|---|---:|---|" : "|---|");
		out.append("---:|---:|---:|---:|---:|---|---:|---:|\n");
		for (BenchmarkReport.PolicyReport p : report.policies()) {
			RunResult r = p.headline();
			RunResult.Judged j = r.judged();
			StringBuilder sizes = new StringBuilder();
			for (RunResult.SizeQuartile q : j.quartiles()) {
				sizes.append(sizes.isEmpty() ? "" : ", ")
					.append(String.format(Locale.ROOT, "%.0f %% (%d-%d)", 100 * q.attainment(), q.minPromptTokens(),
							q.maxPromptTokens()));
			}
			out.append(String.format(Locale.ROOT, "| %s", label(p.name())));
			if (replicated) {
				out.append(String.format(Locale.ROOT, " | %.2f (%.2f-%.2f) | %s", p.capacityMedian(), p.capacityMin(),
						p.capacityMax(), replicates(p)));
			}
			out.append(String.format(Locale.ROOT,
					" | %.2f | %.2f | %.1f %% | %.1f %% | %.1f %% | %s | %.1f %% | %.1f %% |%n", p.search().capacity(),
					p.search().requestsCapacity(), 100 * r.feasibleShare(), 100 * j.requestShare(),
					100 * j.tokenShare(), sizes.isEmpty() ? "-" : sizes, 100 * r.rejectedShare(),
					100 * r.rescueShare()));
		}
		out.append(String.format(Locale.ROOT,
				"%nAt each row's capacity (or, when no rate passed, at the charts' rate). A `+queue` row is a hybrid: "
						+ "the peer behind this gateway's dispatch queue, whose rescue makes the final placement of "
						+ "the `rescued` share.%n%n"));
		out.append("| policy | capacity (req/s) | goodput (req/s) | TTFT p50 (s) | TTFT p90 (s) | TTFT p99 (s) "
				+ "| hit rate | load CV | migrations | decision p99 (us) |\n");
		out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (BenchmarkReport.PolicyReport p : report.policies()) {
			RunResult r = p.headline();
			double goodput = p.search().atCapacity() == null ? 0 : r.goodput();
			out.append(String.format(Locale.ROOT,
					"| %s | %.2f | %.2f | %.3f | %.3f | %.3f | %.1f %% | %.3f | %d | %.1f |%n", p.name(),
					p.search().capacity(), goodput, r.ttft().p50Seconds(), r.ttft().p90Seconds(), r.ttft().p99Seconds(),
					100 * r.hitRate(), r.loadCv(), r.migrations(), r.decisionNanosP99() / 1000.0));
		}
		out.append(String.format(Locale.ROOT, "%nEngine state in the same runs (from the first measured arrival)%n%n"));
		out.append("| policy | rate (req/s) | running / instance | KV usage mean | KV usage peak | preemptions "
				+ "| evicted blocks | rejected | measured requests per instance |\n");
		out.append("|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
		for (BenchmarkReport.PolicyReport p : report.policies()) {
			RunResult r = p.headline();
			RunResult.EngineLoad e = r.engines();
			StringBuilder sent = new StringBuilder();
			for (int count : r.requestsPerInstance()) {
				sent.append(sent.isEmpty() ? "" : " / ").append(count);
			}
			out.append(String.format(Locale.ROOT, "| %s | %.2f | %.1f | %.3f | %.3f | %d | %d | %d | %s |%n", p.name(),
					r.rate(), e.runningPerInstance(), e.kvUsageMean(), e.kvUsagePeak(), e.preemptions(),
					e.evictedBlocks(), r.requests().rejected(), sent.isEmpty() ? "-" : sent));
		}
		out.append(String.format(Locale.ROOT, "%nSLO attainment in the same runs%n%n"));
		out.append("| policy | rate (req/s) | measured | within SLO | attainment | prompt tokens within SLO "
				+ "| mean prompt, rejected / all | TTFT p90 / p99 of the served (s) | run |\n");
		out.append("|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
		for (BenchmarkReport.PolicyReport p : report.policies()) {
			RunResult r = p.headline();
			RunResult.PromptTokens t = r.prompts();
			String rejectedMean = r.requests().rejected() == 0 ? "-"
					: String.format(Locale.ROOT, "%.0f", (double) t.rejected() / r.requests().rejected());
			String served = r.served().count() == 0 ? "-" : String.format(Locale.ROOT, "%.3f / %.3f",
					r.served().ttftP90Seconds(), r.served().ttftP99Seconds());
			out.append(String.format(Locale.ROOT, "| %s | %.2f | %d | %d | %.1f %% | %.1f %% | %s / %.0f | %s | %s |%n",
					p.name(), r.rate(), r.requests().measured(), r.requests().withinSlo(), 100 * r.attainment(),
					100 * t.withinSloShare(), rejectedMean,
					r.requests().measured() == 0 ? 0 : (double) t.measured() / r.requests().measured(), served,
					r.requests().stoppedEarly()
							? "stopped once over 10 % had missed (rest counted as misses; --no-stop runs all)"
							: "whole trace"));
		}
		out.append(String.format(Locale.ROOT,
				"%nEvaluated rates (req/s): P passes the headline, R passes on "
						+ "requests only, F fails both, T transient (the work served in time exceeds what the engines "
						+ "can do over the run: a burst, never a capacity), then the measured window%n%n"));
		out.append("| policy | rates |\n|---|---|\n");
		for (BenchmarkReport.PolicyReport p : report.policies()) {
			StringBuilder rates = new StringBuilder();
			for (RunResult x : p.search().points()) {
				RunResult.Judged j = x.judged();
				String verdict = j.isTransient() ? "T"
						: x.passesHeadline(report.targetAttainment(), report.promptTokenTarget(), report.sizeFloor())
								? "P" : x.passesRequests(report.targetAttainment()) ? "R" : "F";
				rates.append(rates.isEmpty() ? "" : ", ")
					.append(String.format(Locale.ROOT, "%.2f %s", x.rate(), verdict));
				if (Double.isFinite(j.engineSeconds())) {
					rates.append(String.format(Locale.ROOT, " %.0fs", j.engineSeconds() / report.instances()));
				}
			}
			out.append(String.format(Locale.ROOT, "| %s | %s |%n", p.name(), rates));
		}
		if (report.policies().stream().anyMatch(p -> !p.headline().classes().isEmpty())) {
			out.append(String.format(Locale.ROOT, "%nSLO classes in the same runs%n%n"));
			out.append(
					"| policy | rate (req/s) | class | SLO (s) | requests | within SLO | TTFT p90 (s) | TTFT p99 (s) |\n");
			out.append("|---|---:|---|---:|---:|---:|---:|---:|\n");
			for (BenchmarkReport.PolicyReport p : report.policies()) {
				RunResult r = p.headline();
				for (RunResult.ClassResult c : r.classes()) {
					out.append(String.format(Locale.ROOT, "| %s | %.2f | %s | %.3g | %d | %.1f %% | %.3f | %.3f |%n",
							p.name(), r.rate(), c.name(), c.sloSeconds(), c.measured(), 100 * c.attainment(),
							c.ttftP90Seconds(), c.ttftP99Seconds()));
				}
			}
		}
		return out.toString();
	}

	/** Each replicate's capacity, in seed order. */
	private static String replicates(BenchmarkReport.PolicyReport p) {
		StringBuilder b = new StringBuilder();
		for (BenchmarkReport.Replicate r : p.replicates()) {
			b.append(b.isEmpty() ? "" : ", ").append(String.format(Locale.ROOT, "%.2f", r.capacity()));
		}
		return b.toString();
	}

	/** A {@code +queue} row is labelled a hybrid. */
	static String label(String policy) {
		return policy.endsWith("+queue") ? policy + " (hybrid)" : policy;
	}

}

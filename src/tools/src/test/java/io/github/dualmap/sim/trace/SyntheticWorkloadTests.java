package io.github.dualmap.sim.trace;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class SyntheticWorkloadTests {

	@Test
	void topTenantTakesItsZipfShare() {
		Trace t = SyntheticWorkload.TENANTS.generate(20_000, 7);
		Map<Long, Integer> byTenant = new HashMap<>();
		t.requests().forEach(r -> byTenant.merge(r.hashIds()[0], 1, Integer::sum));
		double top = byTenant.values().stream().mapToInt(Integer::intValue).max().orElseThrow() / 20_000.0;
		double expected = new ZipfDistribution(SyntheticWorkload.TENANT_COUNT, SyntheticWorkload.TENANT_ZIPF_EXPONENT)
			.probability(0);
		assertThat(expected).isBetween(0.15, 0.3);
		assertThat(top).isCloseTo(expected, within(0.015));
		assertThat(byTenant.size()).isGreaterThan(40);
	}

	@Test
	void sessionTurnsExtendThePreviousTurnsFullBlocks() {
		Trace t = SyntheticWorkload.SESSIONS.generate(3000, 11);
		// A later turn of a session carries every full block of an earlier turn.
		Map<Long, TraceRequest> lastByBlock = new HashMap<>();
		int grown = 0;
		for (TraceRequest r : t.requests()) {
			long[] ids = r.hashIds();
			assertThat(ids).hasSize((r.inputTokens() + 511) / 512);
			if (ids.length > 2) {
				TraceRequest earlier = lastByBlock.get(ids[2]);
				if (earlier != null) {
					int kept = earlier.inputTokens() / 512;
					assertThat(Arrays.copyOf(ids, kept)).containsExactly(Arrays.copyOf(earlier.hashIds(), kept));
					assertThat(r.inputTokens()).isGreaterThan(earlier.inputTokens() + earlier.outputTokens());
					assertThat(r.timestampMillis()).isGreaterThanOrEqualTo(earlier.timestampMillis());
					grown++;
				}
				lastByBlock.put(ids[2], r);
			}
		}
		assertThat(grown).isGreaterThan(500);
	}

	@Test
	void ragRequestsShareSystemBlockAndPopularDocuments() {
		Trace t = SyntheticWorkload.RAG.generate(5000, 3);
		long system = t.requests().get(0).hashIds()[0];
		Map<Long, Integer> byDocument = new HashMap<>();
		for (TraceRequest r : t.requests()) {
			assertThat(r.hashIds()[0]).isEqualTo(system);
			byDocument.merge(r.hashIds()[1], 1, Integer::sum);
		}
		int top = byDocument.values().stream().mapToInt(Integer::intValue).max().orElseThrow();
		assertThat(top).isGreaterThan(5000 / SyntheticWorkload.DOCUMENT_COUNT * 5);
	}

	@Test
	void sameSeedSameTraceOtherSeedOtherTrace() {
		for (SyntheticWorkload w : SyntheticWorkload.values()) {
			Trace a = w.generate(500, 1);
			Trace b = w.generate(500, 1);
			Trace c = w.generate(500, 2);
			assertThat(a.size()).isEqualTo(500);
			for (int i = 0; i < a.size(); i++) {
				assertThat(a.requests().get(i).hashIds()).containsExactly(b.requests().get(i).hashIds());
				assertThat(a.requests().get(i).timestampMillis()).isEqualTo(b.requests().get(i).timestampMillis());
			}
			assertThat(a.requests().stream().mapToDouble(TraceRequest::timestampMillis).toArray())
				.isNotEqualTo(c.requests().stream().mapToDouble(TraceRequest::timestampMillis).toArray());
		}
	}

	@Test
	void noReuseGivesEveryRequestBlocksOfItsOwnWithAChatServicesMedianLengths() {
		Trace t = SyntheticWorkload.NO_REUSE.generate(20_000, 7);
		assertThat(t.name()).isEqualTo("synthetic-no-reuse");
		java.util.Set<Long> seen = new java.util.HashSet<>();
		int[] prompts = new int[t.size()];
		int[] outputs = new int[t.size()];
		for (int i = 0; i < t.size(); i++) {
			TraceRequest r = t.requests().get(i);
			assertThat(r.hashIds()).hasSize((r.inputTokens() + 511) / 512);
			for (long id : r.hashIds()) {
				assertThat(seen.add(id)).as("block %d of request %d is shared", id, i).isTrue();
			}
			prompts[i] = r.inputTokens();
			outputs[i] = r.outputTokens();
		}
		java.util.Arrays.sort(prompts);
		java.util.Arrays.sort(outputs);
		assertThat(prompts[prompts.length / 2]).isCloseTo(SyntheticWorkload.NO_REUSE_MEDIAN_PROMPT,
				org.assertj.core.api.Assertions.withinPercentage(5));
		assertThat(outputs[outputs.length / 2]).isCloseTo(SyntheticWorkload.NO_REUSE_MEDIAN_OUTPUT,
				org.assertj.core.api.Assertions.withinPercentage(5));
		// Spread: about 16 % of lognormal(sigma 1) samples lie above e times the median.
		long above = java.util.Arrays.stream(prompts).filter(p -> p > Math.E * 1020).count();
		assertThat(above / (double) prompts.length).isBetween(0.14, 0.18);
		assertThat(prompts[0]).isGreaterThanOrEqualTo(SyntheticWorkload.NO_REUSE_MIN_PROMPT);
		assertThat(prompts[prompts.length - 1]).isLessThanOrEqualTo(SyntheticWorkload.MAX_SESSION_TOKENS);
		assertThat(outputs[0]).isPositive();
		assertThat(SyntheticWorkload.fromCliName("no-reuse")).isEqualTo(SyntheticWorkload.NO_REUSE);
		assertThat(SyntheticWorkload.NO_REUSE.cliName()).isEqualTo("no-reuse");
	}

	@Test
	void unknownNameIsRejected() {
		assertThat(SyntheticWorkload.fromCliName("rag")).isEqualTo(SyntheticWorkload.RAG);
		assertThatThrownBy(() -> SyntheticWorkload.fromCliName("chat")).hasMessageContaining("'chat'");
	}

}

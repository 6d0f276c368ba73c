package io.github.dualmap.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

class EngineTests {

	private static final EngineProfile H100 = EngineProfile.h100_8b();

	@Test
	void coldPromptIdleTtftMatchesTheAnalyticFormula() {
		// t0 + c_lin*8192 + (4*L*d/F)*8192*(0 + 8192/2), written out from
		// docs/emulator.md
		double analytic = 0.007 + 20e-6 * 8192 + (4.0 * 32 * 4096 / 400e12) * 8192 * (8192 / 2.0);
		Engine engine = new Engine(H100);
		Map<String, Long> ttft = run(engine, List.of(request("a", 0, 8192, 4)), 0);
		assertThat(ttft.get("a") / 1e9).isCloseTo(analytic, within(analytic * 0.10));
		assertThat(engine.stats().ttft().count()).isEqualTo(1);
	}

	@Test
	void aSlowedEngineTakesThatManyTimesItsModelledStepTime() {
		Engine normal = new Engine(H100);
		Engine slowed = new Engine(H100);
		slowed.setStepTimeFactor(2.5);
		long base = run(normal, List.of(request("a", 0, 8192, 4)), 0).get("a");
		assertThat(run(slowed, List.of(request("a", 0, 8192, 4)), 0).get("a")).isCloseTo(Math.round(2.5 * base),
				within(2L));
		slowed.setStepTimeFactor(1);
		assertThat(run(slowed, List.of(request("b", 1, 8192, 4)), 10_000_000_000L).get("b")).isCloseTo(base,
				within(2L));
		assertThatThrownBy(() -> slowed.setStepTimeFactor(0)).hasMessageContaining("above 0");
		assertThatThrownBy(() -> slowed.setStepTimeFactor(Double.POSITIVE_INFINITY)).hasMessageContaining("finite");
	}

	@Test
	void longPromptIsChunkedToTheTokenBudget() {
		Engine engine = new Engine(EngineProfile.a100_8b());
		Map<String, Long> ttft = run(engine, List.of(request("a", 0, 10_000, 1)), 0);
		double analytic = EngineProfile.a100_8b().coldTtftSeconds(10_000);
		assertThat(ttft.get("a") / 1e9).isCloseTo(analytic, within(analytic * 0.10));
		// 10,000 tokens over a 2,048 budget: five prefill steps, each paying t0
		assertThat(analytic).isGreaterThan(5 * 0.010 + 65e-6 * 10_000);
	}

	@Test
	void theLongPrefillThresholdLetsAShortPromptPastALongPrefill() {
		// 40,000 tokens ahead of 1,000: without the threshold the long prompt takes the
		// whole 8,192-token budget of every step until it is done, so the short one waits
		// for its prefill; with a threshold of 2,048 each step leaves 6,144 tokens to the
		// short one, which has its first token after one step.
		List<EngineRequest> both = List.of(request("long", 1, 40_000, 1), request("short", 2, 1_000, 1));
		Map<String, Long> fifo = run(new Engine(H100), both, 0);
		EngineProfile capped = H100.withLongPrefillTokenThreshold(2048);
		Engine engine = new Engine(capped);
		engine.submit(both.get(0), 0);
		engine.submit(both.get(1), 0);
		StepResult first = engine.step(0);
		assertThat(first.prefillTokens()).isEqualTo(2048 + 1000);
		assertThat(first.emitted()).extracting(RequestProgress::id).containsExactly("short");
		assertThat(fifo.get("short")).isGreaterThan(fifo.get("long") - 1);
		// the long prompt alone pays t0 and the attention of 20 chunks instead of 5
		Map<String, Long> alone = run(new Engine(capped), List.of(request("long", 1, 40_000, 1)), 0);
		double analytic = capped.coldTtftSeconds(40_000);
		assertThat(alone.get("long") / 1e9).isCloseTo(analytic, within(analytic * 0.01));
		assertThat(analytic).isCloseTo(H100.coldTtftSeconds(40_000) + 15 * H100.t0Seconds(), within(0.001));
		assertThatIllegalArgumentException().isThrownBy(() -> H100.withLongPrefillTokenThreshold(-1))
			.withMessageContaining("longPrefillTokenThreshold must be >= 0");
	}

	@Test
	void repeatedPromptReportsCachedTokensAndALowerTtft() {
		Engine engine = new Engine(H100);
		long first = run(engine, List.of(request("a", 1, 8192, 2)), 0).get("a");
		List<RequestProgress> seen = new ArrayList<>();
		long second = run(engine, List.of(request("b", 1, 8192, 2)), 10_000_000_000L, seen).get("b");
		RequestProgress b = seen.stream().filter(p -> p.id().equals("b")).findFirst().orElseThrow();
		// 512 full blocks, hit capped at prompt length minus one: 511 blocks
		assertThat(b.cachedTokens()).isEqualTo(511 * 16);
		assertThat(second).isLessThan(first / 5);
		EngineStats stats = engine.stats();
		assertThat(stats.prefixQueryTokens()).isEqualTo(2 * 8192);
		assertThat(stats.prefixHitTokens()).isEqualTo(511 * 16);
	}

	@Test
	void aRequestAdmittedInTheSameStepFindsTheBlocksScheduledBeforeIt() {
		// vLLM V1 caches a block when the step that computes it is scheduled: b, admitted
		// in the same step as a, reuses the 1,024-token prefix a computes in that step.
		Engine engine = new Engine(H100);
		EngineRequest a = request("a", 1, 1024, 1);
		int[] longer = new int[1536];
		for (int i = 0; i < longer.length; i++) {
			longer[i] = 100_003 + i;
		}
		EngineRequest b = EngineRequest.ofTokens("b", longer, 1, 16);
		engine.submit(a, 0);
		engine.submit(b, 0);
		StepResult first = engine.step(0);
		assertThat(first.prefillTokens()).isEqualTo(1024 + 512);
		assertThat(first.emitted()).extracting(RequestProgress::id).containsExactlyInAnyOrder("a", "b");
		RequestProgress pb = first.emitted().stream().filter(p -> p.id().equals("b")).findFirst().orElseThrow();
		assertThat(pb.cachedTokens()).isEqualTo(1024);
		assertThat(engine.stats().prefixHitTokens()).isEqualTo(1024);
	}

	@Test
	void concurrentLoadRaisesTtft() {
		long alone = run(new Engine(H100), List.of(request("a", 0, 4096, 8)), 0).get("a");
		List<EngineRequest> burst = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			burst.add(request("r" + i, 100 + i, 4096, 8));
		}
		Map<String, Long> loaded = run(new Engine(H100), burst, 0);
		assertThat(loaded.values().stream().mapToLong(Long::longValue).max().orElseThrow()).isGreaterThan(3 * alone);
	}

	@Test
	void smallCacheEvictsOldPrefixes() {
		// 64 blocks of 16 tokens; each prompt takes 32 blocks
		Engine engine = new Engine(H100.withKvCapacityTokens(64 * 16));
		long t = 0;
		run(engine, List.of(request("a", 1, 512, 1)), t);
		run(engine, List.of(request("b", 2, 512, 1)), t += 1_000_000_000L);
		List<RequestProgress> seen = new ArrayList<>();
		run(engine, List.of(request("a2", 1, 512, 1)), t += 1_000_000_000L, seen);
		assertThat(seen.get(0).cachedTokens()).isEqualTo(31 * 16);
		run(engine, List.of(request("c", 3, 512, 1), request("d", 4, 512, 1)), t += 1_000_000_000L);
		seen.clear();
		run(engine, List.of(request("a3", 1, 512, 1)), t += 1_000_000_000L, seen);
		assertThat(seen.get(0).cachedTokens()).isZero();
		assertThat(engine.stats().evictedBlocks()).isGreaterThan(0);
	}

	@Test
	void runningOutOfBlocksPreemptsAndEveryRequestStillFinishes() {
		// 40 blocks: four requests of 8 prompt blocks that each grow to 16 blocks
		Engine engine = new Engine(H100.withKvCapacityTokens(40 * 16));
		List<EngineRequest> requests = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			requests.add(request("r" + i, 10 + i, 128, 128));
		}
		List<RequestProgress> seen = new ArrayList<>();
		Map<String, Long> ttft = run(engine, requests, 0, seen);
		EngineStats stats = engine.stats();
		assertThat(stats.preemptions()).isGreaterThan(0);
		assertThat(ttft).hasSize(4);
		assertThat(stats.finished()).isEqualTo(4);
		assertThat(stats.generationTokens()).isEqualTo(4 * 128);
		assertThat(stats.kvUsage()).isZero();
		assertThat(stats.running() + stats.waiting()).isZero();
	}

	@Test
	void decodeEmitsOneTokenPerStepAndRecordsInterTokenLatency() {
		Engine engine = new Engine(H100);
		run(engine, List.of(request("a", 0, 100, 10)), 0);
		EngineStats stats = engine.stats();
		assertThat(stats.itl().count()).isEqualTo(9);
		// one decoding sequence: t0 + c_lin + c_kv*context, about 7 ms
		assertThat(stats.itl().mean()).isCloseTo(0.00702, within(0.0001));
		assertThat(stats.e2e().count()).isEqualTo(1);
	}

	@Test
	void capsRunningSequences() {
		Engine engine = new Engine(H100.withScheduling(8192, 2));
		for (int i = 0; i < 5; i++) {
			engine.submit(request("r" + i, i, 32, 4), 0);
		}
		engine.step(0);
		assertThat(engine.running()).isEqualTo(2);
		assertThat(engine.waiting()).isEqualTo(3);
	}

	@Test
	void rejectsRequestsBeyondTheContextLength() {
		Engine engine = new Engine(H100.withMaxModelLen(1000));
		assertThatIllegalArgumentException().isThrownBy(() -> engine.submit(request("x", 0, 900, 101), 0))
			.withMessageContaining("1001")
			.withMessageContaining("1000");
	}

	@Test
	void abortFreesBlocks() {
		Engine engine = new Engine(H100);
		engine.submit(request("a", 0, 1024, 100), 0);
		engine.step(0);
		assertThat(engine.stats().kvUsage()).isGreaterThan(0);
		assertThat(engine.abort("a")).isTrue();
		assertThat(engine.stats().kvUsage()).isZero();
		assertThat(engine.hasWork()).isFalse();
	}

	@Test
	void jitterIsReproducibleWithASeed() {
		EngineProfile noisy = H100.withJitter(0.2, 42);
		long a = run(new Engine(noisy), List.of(request("a", 0, 2048, 1)), 0).get("a");
		long b = run(new Engine(noisy), List.of(request("a", 0, 2048, 1)), 0).get("a");
		long plain = run(new Engine(H100), List.of(request("a", 0, 2048, 1)), 0).get("a");
		assertThat(a).isEqualTo(b).isNotEqualTo(plain);
	}

	/** A prompt of {@code tokens} tokens whose content is determined by {@code seed}. */
	static EngineRequest request(String id, int seed, int tokens, int output) {
		int[] ids = new int[tokens];
		for (int i = 0; i < tokens; i++) {
			ids[i] = seed * 100_003 + i;
		}
		return EngineRequest.ofTokens(id, ids, output, 16);
	}

	static Map<String, Long> run(Engine engine, List<EngineRequest> requests, long start) {
		return run(engine, requests, start, new ArrayList<>());
	}

	/** Submits all at {@code start}, steps until idle; returns TTFT per id. */
	static Map<String, Long> run(Engine engine, List<EngineRequest> requests, long start, List<RequestProgress> seen) {
		for (EngineRequest r : requests) {
			engine.submit(r, start);
		}
		Map<String, Long> ttft = new HashMap<>();
		long now = start;
		for (int guard = 0; engine.hasWork(); guard++) {
			assertThat(guard).isLessThan(1_000_000);
			StepResult step = engine.step(Math.max(now, engine.nextStepStartNanos()));
			for (RequestProgress p : step.emitted()) {
				if (p.outputTokens() == 1) {
					ttft.put(p.id(), p.firstTokenNanos() - p.arrivalNanos());
					seen.add(p);
				}
			}
			now = step.endNanos();
		}
		return ttft;
	}

}

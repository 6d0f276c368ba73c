package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.engine.Engine;
import io.github.dualmap.engine.EngineProfile;
import io.github.dualmap.engine.EngineRequest;
import io.github.dualmap.engine.EngineStats;
import io.github.dualmap.engine.HashIdExpander;
import io.github.dualmap.sim.trace.Trace;
import io.github.dualmap.sim.trace.TraceRequest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class WorkBoundTests {

	private static final EngineProfile H100 = EngineProfile.h100_8b();

	/** The h100 profile without the fixed cost of a step, which the bound leaves out. */
	private static final EngineProfile NO_T0 = H100.withLatency(0, H100.cLinSeconds(), H100.attentionFlops(),
			H100.cKvSeconds());

	private static TraceRequest request(int i, int prompt, int output, long... ids) {
		return new TraceRequest(i * 1000.0, prompt, output, ids);
	}

	/**
	 * Prompts that share prefixes in every way the engine's chain allows: a partial last
	 * block reused by a longer prompt, a shorter prompt capped at prompt length minus
	 * one, a cold one, and a branch after a shared first block.
	 */
	private static Trace sharing() {
		return new Trace("sharing", 512,
				List.of(request(0, 1300, 5, 1, 2, 3), request(1, 1800, 3, 1, 2, 3, 4), request(2, 1024, 2, 1, 2),
						request(3, 100, 4, 9), request(4, 700, 1, 1, 5), request(5, 1800, 6, 1, 2, 3, 4)));
	}

	/**
	 * What an engine of {@code profile} did serving the trace's requests one at a time.
	 */
	private record Served(double seconds, int steps, EngineStats stats) {
	}

	private static Served serveOneAtATime(Trace trace, EngineProfile profile) {
		Engine engine = new Engine(profile);
		HashIdExpander expander = new HashIdExpander(trace.blockTokens(), profile.blockTokens());
		long now = 0;
		int steps = 0;
		for (int i = 0; i < trace.size(); i++) {
			TraceRequest r = trace.requests().get(i);
			engine.submit(EngineRequest.ofHashIds("r" + i, r.hashIds(), r.inputTokens(), r.outputTokens(), expander),
					now);
			while (engine.hasWork()) {
				now = engine.step(now).endNanos();
				steps++;
			}
		}
		return new Served(now / 1e9, steps, engine.stats());
	}

	@Test
	void matchesTheEngineServingTheRequestsOneAtATimeWithNothingEvicted() {
		Trace trace = sharing();
		Served served = serveOneAtATime(trace, NO_T0);
		assertThat(served.stats().evictedBlocks()).isZero();

		WorkBound bound = WorkBound.of(trace, NO_T0, 0);

		assertThat(bound.measured()).isEqualTo(6);
		assertThat(bound.busySecondsPerRequest() * bound.measured()).isCloseTo(served.seconds(), within(1e-6));
		assertThat(bound.reusableShare())
			.isCloseTo((double) served.stats().prefixHitTokens() / served.stats().prefixQueryTokens(), within(1e-12));
		// Of 6,724 prompt tokens: 1,296 (81 blocks of the first prompt's 1,300), 1,008
		// (the
		// first 1,024 less the last token, in blocks), 512, and 1,792 (112 blocks of the
		// second prompt, capped below its 1,800).
		assertThat(bound.reusableShare()).isCloseTo((1296 + 1008 + 512 + 1792) / 6724.0, within(1e-12));
	}

	@Test
	void leavesOutTheFixedCostOfEachStepWhichTheEngineStillPays() {
		Trace trace = sharing();
		Served served = serveOneAtATime(trace, H100);
		WorkBound bound = WorkBound.of(trace, H100, 0);
		assertThat(bound.busySecondsPerRequest() * bound.measured())
			.isCloseTo(served.seconds() - served.steps() * H100.t0Seconds(), within(1e-6));
	}

	@Test
	void warmUpRequestsFillTheCacheButAreNotCosted() {
		WorkBound all = WorkBound.of(sharing(), H100, 0);
		WorkBound afterTwo = WorkBound.of(sharing(), H100, 2);

		assertThat(afterTwo.measured()).isEqualTo(4);
		// The last four reuse what the first two computed.
		assertThat(afterTwo.reusableShare()).isCloseTo((1008 + 512 + 1792) / (1024 + 100 + 700 + 1800.0),
				within(1e-12));
		double firstTwo = WorkBound.seconds(H100, 1300, 0, 5) + WorkBound.seconds(H100, 1800, 1296, 3);
		assertThat(afterTwo.busySecondsPerRequest() * 4).isCloseTo(all.busySecondsPerRequest() * 6 - firstTwo,
				within(1e-9));
	}

	/**
	 * Three conversations of two 512-token blocks taking turns, eight rounds: an LRU
	 * cache that holds fewer than all three loses each before its next turn.
	 */
	private static Trace threeTakingTurns() {
		List<TraceRequest> requests = new ArrayList<>();
		for (int i = 0; i < 24; i++) {
			long c = i % 3;
			requests.add(request(i, 1024, 1, 10 * c + 1, 10 * c + 2));
		}
		return new Trace("three-taking-turns", 512, requests);
	}

	@Test
	void pooledLruReusesWhatTheEngineKeepsServingTheRequestsOneAtATime() {
		// Prompts of whole blocks and one output token: the engine holds nothing but the
		// prompt's blocks, as the model assumes; it keeps exactly what the model keeps.
		for (int capacityBlocks : new int[] { 100, 150, 200, 1_000 }) {
			EngineProfile small = NO_T0.withKvCapacityTokens(capacityBlocks * 16L);
			Served served = serveOneAtATime(threeTakingTurns(), small);
			WorkBound lru = WorkBound.pooledLru(threeTakingTurns(), small, 0, 1);
			assertThat(lru.reusableShare() * 24 * 1024).as("%d blocks", capacityBlocks)
				.isCloseTo(served.stats().prefixHitTokens(), within(1e-6));
			assertThat(lru.busySecondsPerRequest() * 24).isCloseTo(served.seconds(), within(1e-6));
		}
		// A running request's partial and decode blocks evict a little more in the
		// engine, which the model leaves out: it keeps at least as much.
		long prompts = sharing().requests().stream().mapToLong(TraceRequest::inputTokens).sum();
		for (int capacityBlocks : new int[] { 120, 150, 200, 1_000 }) {
			EngineProfile small = NO_T0.withKvCapacityTokens(capacityBlocks * 16L);
			long engineHits = serveOneAtATime(sharing(), small).stats().prefixHitTokens();
			double modelHits = WorkBound.pooledLru(sharing(), small, 0, 1).reusableShare() * prompts;
			assertThat(modelHits).as("%d blocks", capacityBlocks).isGreaterThanOrEqualTo(engineHits - 1e-6);
			if (capacityBlocks == 1_000) {
				assertThat(modelHits).isCloseTo(engineHits, within(1e-6));
			}
		}
		// Too small for the three (64 blocks each): nothing is left at a conversation's
		// next turn; large enough: every turn after the first reuses 63 of 64 blocks.
		EngineProfile small = H100.withKvCapacityTokens(100 * 16L);
		assertThat(WorkBound.pooledLru(threeTakingTurns(), small, 3, 1).reusableShare()).isZero();
		WorkBound two = WorkBound.pooledLru(threeTakingTurns(), small, 3, 2);
		assertThat(two.reusableShare()).isEqualTo(63 * 16 / 1024.0);
		assertThat(two.busySecondsPerRequest())
			.isEqualTo(WorkBound.of(threeTakingTurns(), small, 3).busySecondsPerRequest());
	}

	@Test
	void pooledLruWorkCostsEachRequestAsThePooledLruBoundDoes() {
		// Room for one conversation's blocks and for two: each turn is costed alike.
		EngineProfile small = H100.withKvCapacityTokens(100 * 16L);
		Trace t = threeTakingTurns();
		for (int instances = 1; instances <= 2; instances++) {
			double[] work = WorkBound.pooledLruWorkSeconds(t, small, instances);
			assertThat(work).hasSize(t.size());
			for (int warmup = 0; warmup < t.size(); warmup++) {
				double sum = 0;
				for (int i = warmup; i < t.size(); i++) {
					sum += work[i];
				}
				assertThat(sum / (t.size() - warmup)).as("%d instances, warm-up %d", instances, warmup)
					.isCloseTo(WorkBound.pooledLru(t, small, warmup, instances).busySecondsPerRequest(), within(1e-12));
			}
		}
		assertThatThrownBy(() -> WorkBound.pooledLruWorkSeconds(t, small, 0))
			.isInstanceOf(IllegalArgumentException.class);
	}

	@Test
	void pooledLruWithRoomForEverythingIsTheInfiniteCache() {
		WorkBound infinite = WorkBound.of(sharing(), H100, 1);
		WorkBound lru = WorkBound.pooledLru(sharing(), H100, 1, 1);
		assertThat(lru).isEqualTo(infinite);
		assertThatThrownBy(() -> WorkBound.pooledLru(sharing(), H100, 1, 0))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("instances must be > 0");
	}

	@Test
	void withoutReuseTheBoundIsTheColdOne() {
		List<TraceRequest> requests = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			requests.add(request(i, 2000 + 100 * i, 50, 100L * i, 100L * i + 1, 100L * i + 2, 100L * i + 3));
		}
		WorkBound bound = WorkBound.of(new Trace("distinct", 512, requests), H100, 0);

		assertThat(bound.reusableShare()).isZero();
		assertThat(bound.busySecondsPerRequest()).isEqualTo(bound.coldBusySecondsPerRequest());
		assertThat(bound.maxRate(16)).isEqualTo(bound.coldMaxRate(16));
	}

	@Test
	void aPoolOfNEnginesServesNTimesOneEnginesWork() {
		WorkBound bound = WorkBound.of(sharing(), H100, 0);

		assertThat(bound.maxRate(1)).isCloseTo(1 / bound.busySecondsPerRequest(), within(1e-9));
		assertThat(bound.maxRate(16)).isCloseTo(16 * bound.maxRate(1), within(1e-9));
		assertThat(bound.maxRate(8)).isGreaterThan(bound.coldMaxRate(8));
	}

	@Test
	void costIsLinearAndAttentionForTheFreshPartPlusEachDecodeStep() {
		// 1,000 fresh tokens after 24 cached, then 9 decode steps at contexts
		// 1,025..1,033.
		double expected = 1000 * H100.cLinSeconds() + H100.cAttnSeconds() * (1000.0 * 24 + 1000.0 * 1000 / 2)
				+ 9 * H100.cLinSeconds() + H100.cKvSeconds() * (9 * 1024 + 45);
		assertThat(WorkBound.seconds(H100, 1024, 24, 10)).isCloseTo(expected, within(1e-15));
	}

	@Test
	void rejectsAWarmUpThatLeavesNothingAndBlocksTheEngineCannotSplit() {
		assertThatThrownBy(() -> new WorkBound(0, 0, 1, 1)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("measured must be > 0");
		assertThatThrownBy(() -> WorkBound.of(sharing(), H100, 6)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("warmup must be in [0, 6)");
		Trace odd = new Trace("odd", 24, List.of(request(0, 100, 1, 1), request(1, 100, 1, 2)));
		assertThatThrownBy(() -> WorkBound.of(odd, H100, 0)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("not a multiple of the engine's 16");
	}

}

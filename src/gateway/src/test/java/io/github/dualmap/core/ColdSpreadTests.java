package io.github.dualmap.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.dualmap.core.DualMapPolicy.Variant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The cold rule of {@link DualMapPolicy}: a request none of whose first ring instances
 * holds much of its prompt goes to the least occupied of its first d ring instances.
 */
class ColdSpreadTests {

	private static final long SLO = Duration.ofSeconds(5).toNanos();

	private final ManualClock clock = new ManualClock();

	private long loadChains = 1L << 40;

	/**
	 * No prefix expansion (a chain's key is its first block), the linear TTFT model, the
	 * cold rule on at the share measured.
	 */
	private static SchedulerSettings.Builder settings() {
		return SchedulerSettings.custom()
			.hotWindow(1_000)
			.hotMinSamples(1_000)
			.ttftModel(TtftModel.LINEAR)
			.coldCachedShare(SchedulerSettings.COLD_CACHED_SHARE);
	}

	private InstancePool pool(SchedulerSettings settings, int instances) {
		InstancePool pool = new InstancePool("llm", settings, clock);
		List<RingMember> members = new ArrayList<>();
		for (int i = 0; i < instances; i++) {
			members.add(new RingMember("i" + i, 1));
		}
		pool.updateMembership(members);
		return pool;
	}

	private static RoutingRequest request(long... chain) {
		return new RoutingRequest("r", new PromptBlocks(chain, 64, chain.length * 64), SLO, 0);
	}

	/** The first {@code d} ring instances of {@code r}'s key. */
	private static String[] spread(InstancePool pool, RoutingRequest r, int d) {
		String[] ids = new String[d];
		assertThat(pool.rings().spread(r.blocks().keyAt(1), ids)).isEqualTo(d);
		return ids;
	}

	/**
	 * One request of {@code tokens} uncached tokens of unrelated work in flight on
	 * {@code id}.
	 */
	private InstancePool.InFlight load(InstancePool pool, String id, int tokens) {
		RoutingRequest r = new RoutingRequest("load", new PromptBlocks(new long[] { loadChains++ }, 64, tokens), SLO,
				0);
		return pool.dispatch(r, new Decision(id, Reason.AFFINITY, 0, tokens, -1));
	}

	private void occupy(InstancePool pool, String id, int requests) {
		for (int i = 0; i < requests; i++) {
			load(pool, id, 1);
		}
	}

	@Test
	void spreadStartsWithTheTwoCandidatesAndIsTheSameWhateverTheOrderOfDiscovery() {
		List<RingMember> members = new ArrayList<>();
		for (int i = 0; i < 12; i++) {
			members.add(new RingMember("i" + i, 1));
		}
		DualHashRing rings = DualHashRing.of(members, 160);
		List<RingMember> shuffled = new ArrayList<>(members);
		Collections.shuffle(shuffled, new java.util.Random(7));
		DualHashRing other = DualHashRing.of(shuffled, 160);
		for (long key = 1; key < 2_000; key++) {
			String[] ids = new String[5];
			String[] again = new String[5];
			assertThat(rings.spread(key, ids)).isEqualTo(5);
			other.spread(key, again);
			assertThat(again).containsExactly(ids);
			assertThat(Arrays.stream(ids).distinct().count()).isEqualTo(5);
			Candidates c = rings.candidates(key);
			assertThat(ids[0]).isEqualTo(c.first());
			assertThat(ids[1]).isEqualTo(c.second());
			// The third is the next new instance on ring 1, the fourth on ring 2.
			String third = rings.walk(0, key, id -> !id.equals(c.first()) && !id.equals(c.second()));
			assertThat(ids[2]).isEqualTo(third);
			String fourth = rings.walk(1, key,
					id -> !id.equals(c.first()) && !id.equals(c.second()) && !id.equals(third));
			assertThat(ids[3]).isEqualTo(fourth);
		}
	}

	@Test
	void spreadFindsNoMoreThanTheMembers() {
		DualHashRing rings = DualHashRing.of(List.of(new RingMember("a", 1), new RingMember("b", 1)), 160);
		String[] ids = new String[4];
		assertThat(rings.spread(42, ids)).isEqualTo(2);
		assertThat(Arrays.copyOf(ids, 2)).containsExactlyInAnyOrder("a", "b");
		assertThat(DualHashRing.empty().spread(42, ids)).isZero();
	}

	@Test
	void aColdRequestGoesToTheLeastOccupiedOfItsTwoCandidatesWhenThePoolIsIdle() {
		InstancePool pool = pool(settings().build(), 8);
		DualMapPolicy policy = DualMapPolicy.of(pool.settings());
		RoutingRequest r = request(11, 12, 13);
		String[] ids = spread(pool, r, 4);
		// Ties go to ring order: the first candidate.
		Decision idle = policy.choose(r, pool);
		assertThat(idle.instanceId()).isEqualTo(ids[0]);
		assertThat(idle.reason()).isEqualTo(Reason.COLD);
		occupy(pool, ids[0], 3);
		occupy(pool, ids[1], 2);
		// The third and fourth ring instances are idle, but below one load step d is 2.
		assertThat(policy.coldCandidates(pool, 4)).isEqualTo(2);
		Decision d = policy.choose(r, pool);
		assertThat(d.instanceId()).isEqualTo(ids[1]);
		assertThat(d.reason()).isEqualTo(Reason.COLD);
		assertThat(d.uncachedTokens()).isEqualTo(192);
		assertThat(d.ttftEstimateNanos()).isEqualTo(pool.estimateTtft(pool.instance(ids[1]), 0, 192));
	}

	@Test
	void queuedRequestsAndTheEnginesScrapedCountAreOccupancyToo() {
		InstancePool pool = pool(settings().build(), 8);
		DualMapPolicy policy = DualMapPolicy.of(pool.settings());
		RoutingRequest r = request(21, 22);
		String[] ids = spread(pool, r, 2);
		occupy(pool, ids[1], 2);
		// Requests this router still queues on the first candidate count.
		pool.instance(ids[0]).queuedRequests.addAndGet(3);
		assertThat(policy.occupancy(pool, pool.instance(ids[0]))).isEqualTo(3);
		assertThat(policy.choose(r, pool).instanceId()).isEqualTo(ids[1]);
		// Other routers' requests show only in the engine's counts.
		pool.instance(ids[1]).updateEngine(new EngineSnapshot(clock.nanos(), 4, 6, 0.5, 0, 0, 0));
		assertThat(policy.occupancy(pool, pool.instance(ids[1]))).isEqualTo(10);
		assertThat(policy.choose(r, pool).instanceId()).isEqualTo(ids[0]);
		// A stale snapshot is unknown: the router's own count again.
		clock.advance(Duration.ofSeconds(3));
		assertThat(policy.occupancy(pool, pool.instance(ids[1]))).isEqualTo(2);
	}

	@Test
	void theColdChoiceWidensToFourRingInstancesAsThePoolsBacklogGrows() {
		InstancePool pool = pool(settings().build(), 8);
		DualMapPolicy policy = DualMapPolicy.of(pool.settings());
		RoutingRequest r = request(31, 32, 33);
		String[] ids = spread(pool, r, 4);
		List<String> elsewhere = pool.instances()
			.stream()
			.map(InstanceState::id)
			.filter(id -> !Arrays.asList(ids).contains(id))
			.toList();
		occupy(pool, ids[0], 5);
		occupy(pool, ids[1], 4);
		occupy(pool, ids[2], 2);
		occupy(pool, ids[3], 1);
		assertThat(policy.choose(r, pool).instanceId()).isEqualTo(ids[1]);
		// One load step on the mean instance (8 x 16,384 tokens over the pool): three.
		load(pool, elsewhere.get(0), 8 * 16_384);
		assertThat(policy.coldCandidates(pool, 4)).isEqualTo(3);
		assertThat(policy.choose(r, pool).instanceId()).isEqualTo(ids[2]);
		// Two steps: four, the most by default.
		load(pool, elsewhere.get(1), 8 * 16_384);
		assertThat(policy.coldCandidates(pool, 4)).isEqualTo(4);
		assertThat(policy.choose(r, pool).instanceId()).isEqualTo(ids[3]);
		load(pool, elsewhere.get(2), 8 * 5 * 16_384);
		assertThat(policy.coldCandidates(pool, 4)).isEqualTo(4);
		assertThat(policy.choose(r, pool).instanceId()).isEqualTo(ids[3]);
		// With at most two, the choice stays between the candidates whatever the load.
		DualMapPolicy two = DualMapPolicy.of(pool.settings().toBuilder().coldCandidatesMax(2).build());
		assertThat(two.choose(r, pool).instanceId()).isEqualTo(ids[1]);
	}

	@Test
	void occupancyDecidesOnlyAmongInstancesWithinTheSwitchBudget() {
		// Two ring instances whatever the load.
		InstancePool pool = pool(settings().coldCandidatesMax(2).build(), 8);
		DualMapPolicy policy = DualMapPolicy.of(pool.settings());
		RoutingRequest r = request(71, 72);
		String[] ids = spread(pool, r, 2);
		occupy(pool, ids[0], 3);
		// The idler candidate has one long prompt in prefill: 4 s of work by the linear
		// model (160,000 tokens at 25 us), past the switch budget (0.5 x the 5 s SLO).
		load(pool, ids[1], 160_000);
		assertThat(pool.estimateTtft(pool.instance(ids[1]), 0, 128)).isGreaterThan(SLO / 2);
		Decision d = policy.choose(r, pool);
		assertThat(d.instanceId()).isEqualTo(ids[0]);
		assertThat(d.reason()).isEqualTo(Reason.COLD);
		// Both past it: the lower estimate.
		load(pool, ids[0], 200_000);
		assertThat(policy.choose(r, pool).instanceId()).isEqualTo(ids[1]);
	}

	@Test
	void aWarmRequestKeepsTheChoiceBetweenItsTwoCandidates() {
		SchedulerSettings on = settings().build();
		SchedulerSettings off = on.toBuilder().coldCachedShare(0).build();
		assertThat(on.spreadsCold()).isTrue();
		assertThat(off.spreadsCold()).isFalse();
		InstancePool pool = pool(on, 8);
		RoutingRequest r = request(41, 42, 43, 44);
		String[] ids = spread(pool, r, 4);
		// Half the prompt cached on the busier candidate; the others idle.
		pool.instance(ids[0]).shadow().record(new long[] { 41, 42 });
		occupy(pool, ids[0], 6);
		load(pool, ids[3], 16 * 16_384);
		Decision warm = DualMapPolicy.of(on).choose(r, pool);
		assertThat(warm.instanceId()).isEqualTo(ids[0]);
		assertThat(warm.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(warm).isEqualTo(DualMapPolicy.of(off).choose(r, pool));
		// Below the share it is cold: the least occupied of the first four.
		RoutingRequest longer = request(41, 42, 43, 44, 45, 46, 47);
		Decision cold = DualMapPolicy.of(on).choose(longer, pool);
		assertThat(cold.reason()).isEqualTo(Reason.COLD);
		assertThat(cold.instanceId()).isEqualTo(ids[1]);
		// The two-choice rule keeps it on the cached candidate.
		assertThat(DualMapPolicy.of(off).choose(longer, pool).instanceId()).isEqualTo(ids[0]);
	}

	@Test
	void aWarmRequestFollowsItsPromptToAFurtherRingInstance() {
		InstancePool pool = pool(settings().build(), 8);
		DualMapPolicy policy = DualMapPolicy.of(pool.settings());
		RoutingRequest first = request(51, 52);
		String[] ids = spread(pool, first, 4);
		// The first turn went by occupancy to the fourth ring instance.
		occupy(pool, ids[0], 3);
		occupy(pool, ids[1], 3);
		occupy(pool, ids[2], 3);
		load(pool,
				pool.instances()
					.stream()
					.map(InstanceState::id)
					.filter(id -> !Arrays.asList(ids).contains(id))
					.findFirst()
					.orElseThrow(),
				16 * 16_384);
		Decision d1 = policy.choose(first, pool);
		assertThat(d1.instanceId()).isEqualTo(ids[3]);
		pool.dispatch(first, d1);
		// The next turn is warm there; it is found although neither candidate has it.
		occupy(pool, ids[3], 5);
		RoutingRequest next = request(51, 52, 53);
		Decision d2 = policy.choose(next, pool);
		assertThat(d2.instanceId()).isEqualTo(ids[3]);
		assertThat(d2.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(d2.cachedTokens()).isEqualTo(128);
	}

	@Test
	void replicasWithNoSharedStateAgreeOnTheInstancesAndTheColdChoice() {
		SchedulerSettings settings = settings().build();
		InstancePool one = pool(settings, 16);
		InstancePool two = new InstancePool("llm", settings, clock);
		List<RingMember> members = new ArrayList<>(one.rings().members());
		Collections.reverse(members);
		two.updateMembership(members);
		DualMapPolicy p1 = DualMapPolicy.of(settings);
		DualMapPolicy p2 = DualMapPolicy.of(settings);
		for (long k = 1; k < 300; k++) {
			RoutingRequest r = request(k * 7919, k);
			assertThat(spread(two, r, 4)).containsExactly(spread(one, r, 4));
			// Both idle: the first candidate on both.
			assertThat(p2.choose(r, two).instanceId()).isEqualTo(p1.choose(r, one).instanceId())
				.isEqualTo(one.rings().candidates(r.blocks().keyAt(1)).first());
		}
		// The same engine counts scraped by each: the same cold choice.
		for (InstanceState s : one.instances()) {
			int n = Math.abs(s.id().hashCode()) % 7;
			EngineSnapshot e = new EngineSnapshot(clock.nanos(), 0, n, 0.5, 0, 0, 0);
			s.updateEngine(e);
			two.instance(s.id()).updateEngine(e);
		}
		for (long k = 1; k < 300; k++) {
			RoutingRequest r = request(k * 7919, k);
			assertThat(p2.choose(r, two).instanceId()).isEqualTo(p1.choose(r, one).instanceId());
		}
	}

	@Test
	void onlyTheFullChoiceVariantsSpreadColdRequests() {
		InstancePool pool = pool(settings().build(), 8);
		RoutingRequest r = request(61, 62);
		String[] ids = spread(pool, r, 2);
		occupy(pool, ids[0], 4);
		for (Variant v : Variant.values()) {
			Decision d = new DualMapPolicy(v, pool.settings()).choose(r, pool);
			boolean spreads = v == Variant.FULL || v == Variant.THIRD_CHOICE || v == Variant.DIRECTORY;
			assertThat(d.reason() == Reason.COLD).as(v.policyName()).isEqualTo(spreads);
		}
	}

	@Test
	void theRuleIsOffByDefault() {
		assertThat(SchedulerSettings.ofDefaults().spreadsCold()).isFalse();
		InstancePool pool = pool(SchedulerSettings.custom().hotWindow(1_000).hotMinSamples(1_000).build(), 8);
		RoutingRequest r = request(81, 82);
		assertThat(DualMapPolicy.of(pool.settings()).choose(r, pool).reason()).isEqualTo(Reason.AFFINITY);
	}

	@Test
	void settingsAreChecked() {
		assertThatIllegalArgumentException().isThrownBy(() -> settings().coldCachedShare(1.5).build())
			.withMessageContaining("coldCachedShare must be in [0, 1]");
		assertThatIllegalArgumentException().isThrownBy(() -> settings().coldCandidatesMax(1).build())
			.withMessageContaining("coldCandidatesMax must be in [2, 16]");
		assertThatIllegalArgumentException().isThrownBy(() -> settings().coldCandidatesMax(17).build())
			.withMessageContaining("coldCandidatesMax");
		assertThatIllegalArgumentException().isThrownBy(() -> settings().coldLoadStepTokens(0).build())
			.withMessageContaining("coldLoadStepTokens must be > 0");
		assertThatIllegalArgumentException().isThrownBy(() -> settings().ttftRelaxAfter(Duration.ofSeconds(-1)).build())
			.withMessageContaining("ttftRelaxAfterNanos must be >= 0");
	}

}

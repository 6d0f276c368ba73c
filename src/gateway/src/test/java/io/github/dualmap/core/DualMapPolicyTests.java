package io.github.dualmap.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import io.github.dualmap.core.DualMapPolicy.Variant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class DualMapPolicyTests {

	private static final long SLO = Duration.ofSeconds(5).toNanos();

	/**
	 * Settings that never expand a prefix, so a chain's key stays its first block, with
	 * the linear TTFT model: estimates are pending tokens at 25 us each plus 20 ms. The
	 * cold rule is off: every request chooses between its two candidates, as warm ones do
	 * with it on (its own cases: {@link ColdSpreadTests}).
	 */
	private static SchedulerSettings.Builder settings() {
		return SchedulerSettings.custom()
			.hotWindow(1_000)
			.hotMinSamples(1_000)
			.ttftModel(TtftModel.LINEAR)
			.coldCachedShare(0);
	}

	private final ManualClock clock = new ManualClock();

	private long loadChains = 1L << 40;

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

	private static Candidates candidates(InstancePool pool, RoutingRequest r) {
		return pool.rings().candidates(r.blocks().keyAt(1));
	}

	/** Queues {@code tokens} uncached tokens of unrelated work on {@code id}. */
	private InstancePool.InFlight load(InstancePool pool, String id, int tokens) {
		RoutingRequest r = new RoutingRequest("load", new PromptBlocks(new long[] { loadChains++ }, 64, tokens), SLO,
				0);
		return pool.dispatch(r, new Decision(id, Reason.AFFINITY, 0, tokens, -1));
	}

	private static void cache(InstancePool pool, String id, RoutingRequest r) {
		pool.instance(id).shadow().record(r.blocks().chain());
	}

	private static RoutingRequest withSlo(RoutingRequest r, long sloNanos) {
		return new RoutingRequest(r.id(), r.blocks(), sloNanos, r.arrivalNanos());
	}

	@Test
	void affinityPrefersTheLongerCachedPrefix() {
		InstancePool pool = pool(settings().build(), 6);
		DualMapPolicy policy = DualMapPolicy.of(pool.settings());
		RoutingRequest r = request(11, 12, 13);
		Candidates c = candidates(pool, r);
		cache(pool, c.second(), r);
		Decision d = policy.choose(r, pool);
		assertThat(d.instanceId()).isEqualTo(c.second());
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(d.cachedTokens()).isEqualTo(191);
		assertThat(d.uncachedTokens()).isEqualTo(1);
		assertThat(d.ttftEstimateNanos()).isEqualTo(pool.estimateTtft(pool.instance(c.second()), 191, 1));
	}

	@Test
	void equalCacheGoesToTheLowerEstimateThenToTheFirstCandidate() {
		InstancePool pool = pool(settings().build(), 6);
		DualMapPolicy policy = DualMapPolicy.of(pool.settings());
		RoutingRequest r = request(21, 22);
		Candidates c = candidates(pool, r);
		assertThat(policy.choose(r, pool).instanceId()).isEqualTo(c.first());
		load(pool, c.first(), 500);
		Decision d = policy.choose(r, pool);
		assertThat(d.instanceId()).isEqualTo(c.second());
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
	}

	@Test
	void tiesGoToRingOrderWhileACandidatesEngineHoldsRequestsThisGatewayDidNotSend() {
		InstancePool pool = pool(settings().build(), 6);
		DualMapPolicy policy = DualMapPolicy.of(pool.settings());
		RoutingRequest r = request(23, 24);
		Candidates c = candidates(pool, r);
		InstanceState first = pool.instance(c.first());
		load(pool, c.first(), 500);
		assertThat(policy.choose(r, pool).instanceId()).as("nothing foreign: the lower estimate").isEqualTo(c.second());

		// The engine runs three requests beyond the one this gateway sent.
		scrape(first, 0, 3);
		Decision d = policy.choose(r, pool);
		assertThat(d.instanceId()).as("another sender: ring order").isEqualTo(c.first());
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		cache(pool, c.second(), r);
		assertThat(policy.choose(r, pool).instanceId()).as("a longer cached prefix still wins").isEqualTo(c.second());

		RoutingRequest cold = request(25, 26);
		Candidates cc = candidates(pool, cold);
		InstanceState other = pool.instance(cc.second());
		load(pool, cc.first(), 500);
		scrape(other, 1, 0);
		assertThat(policy.choose(cold, pool).instanceId()).as("either candidate's engine shows it")
			.isEqualTo(cc.first());
		clock.advance(Duration.ofSeconds(3));
		assertThat(policy.choose(cold, pool).instanceId()).as("a stale scrape shows nothing").isEqualTo(cc.second());
		scrape(other, 1, 0);
		other.markEngineUnknown();
		assertThat(policy.choose(cold, pool).instanceId()).as("nor a failed one").isEqualTo(cc.second());
		scrape(other, 0, 0);
		assertThat(policy.choose(cold, pool).instanceId()).as("a scrape of our own requests alone")
			.isEqualTo(cc.second());
		scrape(other, 0, 1);
		assertThat(policy.choose(cold, pool).instanceId()).isEqualTo(cc.first());
		other.peerLoad(0, 0, 0);
		assertThat(policy.choose(cold, pool).instanceId())
			.as("the other sender publishes its load (replica sync): the lower estimate")
			.isEqualTo(cc.second());
	}

	/**
	 * A fresh scrape of {@code s}: {@code waiting} requests in its engine's queue, and
	 * running every request this gateway has in flight there and {@code othersRunning}
	 * more.
	 */
	private void scrape(InstanceState s, int waiting, int othersRunning) {
		s.updateEngine(new EngineSnapshot(clock.nanos(), waiting, s.inFlight() + othersRunning, 0.1, 0, 0, 0));
	}

	@Test
	void tieBreakSettingFixesTheChoiceEitherWay() {
		for (TieBreak tie : TieBreak.values()) {
			InstancePool pool = pool(settings().tieBreak(tie).build(), 6);
			DualMapPolicy policy = DualMapPolicy.of(pool.settings());
			RoutingRequest r = request(27, 28);
			Candidates c = candidates(pool, r);
			load(pool, c.first(), 500);
			String alone = policy.choose(r, pool).instanceId();
			InstanceState first = pool.instance(c.first());
			scrape(first, 0, 3);
			String shared = policy.choose(r, pool).instanceId();
			switch (tie) {
				case AUTO -> assertThat(List.of(alone, shared)).containsExactly(c.second(), c.first());
				case ESTIMATE -> assertThat(List.of(alone, shared)).containsExactly(c.second(), c.second());
				case RING_ORDER -> assertThat(List.of(alone, shared)).containsExactly(c.first(), c.first());
			}
		}
	}

	/** An instance that is neither ring candidate of {@code r}. */
	private static String offThePair(InstancePool pool, RoutingRequest r) {
		Candidates c = candidates(pool, r);
		return pool.instances()
			.stream()
			.map(InstanceState::id)
			.filter(id -> !id.equals(c.first()) && !id.equals(c.second()))
			.findFirst()
			.orElseThrow();
	}

	/** Sends {@code r} to {@code id} and finishes it: cached there, no load left. */
	private static void served(InstancePool pool, String id, RoutingRequest r) {
		pool.dispatch(r, new Decision(id, Reason.SLO_SWITCH, 0, r.blocks().promptTokens(), -1)).finish();
	}

	@Test
	void directoryFindsAConversationWhereverItsEarlierTurnWent() {
		InstancePool pool = pool(settings().hotspotFloorTokens(Long.MAX_VALUE).build(), 6);
		DualMapPolicy directory = new DualMapPolicy(Variant.DIRECTORY, pool.settings());
		DualMapPolicy full = DualMapPolicy.of(pool.settings());
		RoutingRequest turn1 = request(61, 62, 63);
		RoutingRequest turn2 = request(61, 62, 63, 64);
		String elsewhere = offThePair(pool, turn2);
		// Released before any policy asked for the directory: not in it.
		served(pool, elsewhere, turn1);
		assertThat(pool.directory().owner(turn2.blocks().chain())).isNull();
		served(pool, elsewhere, turn1);
		assertThat(pool.directory().owner(turn2.blocks().chain())).isEqualTo(elsewhere);
		Decision d = directory.choose(turn2, pool);
		assertThat(d.instanceId()).isEqualTo(elsewhere);
		assertThat(d.reason()).isEqualTo(Reason.DIRECTORY);
		assertThat(d.cachedTokens()).isEqualTo(3 * 64);
		// The full policy knows only the pair.
		assertThat(full.choose(turn2, pool).instanceId()).isIn(candidates(pool, turn2).first(),
				candidates(pool, turn2).second());
		// The directory's instance stops taking work: the pair again.
		pool.instance(elsewhere).draining(true);
		Decision drained = directory.choose(turn2, pool);
		assertThat(drained.instanceId()).isNotEqualTo(elsewhere);
		assertThat(drained.reason()).isEqualTo(Reason.AFFINITY);
	}

	@Test
	void directoryCandidateWinsOnlyByALongerCachedPrefixAndGivesWayToTheSloSwitch() {
		InstancePool pool = pool(settings().hotspotFloorTokens(Long.MAX_VALUE).build(), 6);
		DualMapPolicy policy = new DualMapPolicy(Variant.DIRECTORY, pool.settings());
		pool.directory();
		RoutingRequest r = request(71, 72, 73, 74);
		Candidates c = candidates(pool, r);
		String elsewhere = offThePair(pool, r);
		served(pool, elsewhere, request(71, 72));
		// A candidate holds more: it wins, by affinity.
		cache(pool, c.second(), r);
		Decision longer = policy.choose(r, pool);
		assertThat(longer.instanceId()).isEqualTo(c.second());
		assertThat(longer.reason()).isEqualTo(Reason.AFFINITY);
		// The directory's instance holds more, but is past the switch budget: the
		// faster candidate, net of the prefix it gives up.
		RoutingRequest deeper = request(71, 72, 73, 74, 75);
		served(pool, elsewhere, deeper);
		InstancePool.InFlight busy = load(pool, elsewhere, 150_000);
		Decision switched = policy.choose(deeper, pool);
		assertThat(switched.instanceId()).isEqualTo(c.second());
		assertThat(switched.reason()).isEqualTo(Reason.SLO_SWITCH);
		busy.finish();
		Decision back = policy.choose(deeper, pool);
		assertThat(back.instanceId()).isEqualTo(elsewhere);
		assertThat(back.reason()).isEqualTo(Reason.DIRECTORY);
	}

	/**
	 * The rule the published rows ran: a tie on the cache goes to the lower estimate, the
	 * directory's instance included, as between two candidates.
	 */
	@Test
	void directoryCandidateHoldingAsMuchAsTheCandidatesWinsOnlyByALowerEstimate() {
		InstancePool pool = pool(settings().hotspotFloorTokens(Long.MAX_VALUE).build(), 6);
		DualMapPolicy policy = new DualMapPolicy(Variant.DIRECTORY, pool.settings());
		pool.directory();
		// A shared system prompt: on both candidates, and last sent elsewhere.
		RoutingRequest system = request(111, 112);
		RoutingRequest r = request(111, 112, 113);
		Candidates c = candidates(pool, r);
		String elsewhere = offThePair(pool, r);
		cache(pool, c.first(), system);
		cache(pool, c.second(), system);
		served(pool, elsewhere, system);
		load(pool, c.first(), 500);
		load(pool, c.second(), 600);
		Decision lighter = policy.choose(r, pool);
		assertThat(lighter.instanceId()).isEqualTo(elsewhere);
		assertThat(lighter.reason()).isEqualTo(Reason.DIRECTORY);
		load(pool, elsewhere, 700);
		Decision heavier = policy.choose(r, pool);
		assertThat(heavier.instanceId()).isEqualTo(c.first());
		assertThat(heavier.reason()).isEqualTo(Reason.AFFINITY);
	}

	@Test
	void directoryVariantHonoursTheThirdChoiceSettingAsTheFullPolicyDoes() {
		SchedulerSettings on = settings().thirdChoice(true).build();
		InstancePool pool = pool(on, 8);
		RoutingRequest r = request(121, 122);
		Candidates c = candidates(pool, r);
		load(pool, c.first(), 300_000);
		load(pool, c.second(), 300_000);
		assertThat(DualMapPolicy.of(on).choose(r, pool).reason()).isEqualTo(Reason.THIRD_CHOICE);
		DualMapPolicy directory = new DualMapPolicy(Variant.DIRECTORY, on);
		directory.onMembershipChanged(pool);
		assertThat(directory.choose(r, pool).reason()).isEqualTo(Reason.THIRD_CHOICE);
	}

	@Test
	void onlyTheDirectoryVariantHasItsPoolKeepADirectory() {
		InstancePool pool = pool(settings().build(), 3);
		for (Variant v : Variant.values()) {
			if (v != Variant.DIRECTORY) {
				new DualMapPolicy(v, pool.settings()).onMembershipChanged(pool);
			}
		}
		assertThat(pool.directoryIfKept()).isNull();
		new DualMapPolicy(Variant.DIRECTORY, pool.settings()).onMembershipChanged(pool);
		assertThat(pool.directoryIfKept()).isNotNull();
	}

	@Test
	void directoryOwnerOnTheRingPairLeavesTheTwoCandidateChoice() {
		InstancePool pool = pool(settings().build(), 6);
		DualMapPolicy policy = new DualMapPolicy(Variant.DIRECTORY, pool.settings());
		pool.directory();
		RoutingRequest r = request(81, 82);
		Candidates c = candidates(pool, r);
		served(pool, c.second(), r);
		Decision d = policy.choose(r, pool);
		assertThat(d.instanceId()).isEqualTo(c.second());
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
	}

	@Test
	void directoryLearnsOtherReplicasReleasesAndIsBoundedByTheShadowIndexes() {
		InstancePool pool = pool(settings().shadowCapacityTokens(64 * 10).build(), 3);
		PrefixDirectory directory = pool.directory();
		assertThat(directory.capacity()).isEqualTo(3 * 10);
		InstanceState s = pool.instances().get(1);
		long[] chain = { 91, 92, 93 };
		pool.recordElsewhere(s, chain);
		assertThat(directory.owner(chain)).isEqualTo(s.id());
		assertThat(s.shadow().peekMatchedBlocks(chain)).isEqualTo(3);
	}

	@Test
	void sloSwitchFiresUnderLoadAndGoesBackWhenLoadDrops() {
		// No hotspot by load, to see the switch on its own.
		InstancePool pool = pool(settings().hotspotFloorTokens(Long.MAX_VALUE).build(), 6);
		for (Variant v : List.of(Variant.FULL, Variant.NO_REBALANCE)) {
			DualMapPolicy policy = new DualMapPolicy(v, pool.settings());
			RoutingRequest r = request(31, 32);
			Candidates c = candidates(pool, r);
			cache(pool, c.second(), r);
			// 150k tokens at 25 us each is 3.75 s: over half the 5 s SLO.
			InstancePool.InFlight busy = load(pool, c.second(), 150_000);
			Decision switched = policy.choose(r, pool);
			assertThat(switched.instanceId()).as(v.policyName()).isEqualTo(c.first());
			assertThat(switched.reason()).isEqualTo(Reason.SLO_SWITCH);
			assertThat(switched.cachedTokens()).isZero();
			busy.finish();
			Decision back = policy.choose(r, pool);
			assertThat(back.instanceId()).isEqualTo(c.second());
			assertThat(back.reason()).isEqualTo(Reason.AFFINITY);
		}
	}

	@Test
	void noSloSwitchIntoAColderCandidateWhoseKvCacheIsAboveTheLimit() {
		InstancePool pool = pool(settings().hotspotFloorTokens(Long.MAX_VALUE).switchMaxKvUsage(0.9).build(), 6);
		DualMapPolicy policy = DualMapPolicy.of(pool.settings());
		RoutingRequest r = request(31, 32);
		Candidates c = candidates(pool, r);
		cache(pool, c.second(), r);
		load(pool, c.second(), 150_000);
		InstanceState other = pool.instance(c.first());
		other.updateEngine(new EngineSnapshot(clock.nanos(), 0, 40, 0.95, 0, 0, 900_000));
		Decision kept = policy.choose(r, pool);
		assertThat(kept.instanceId()).isEqualTo(c.second());
		assertThat(kept.reason()).isEqualTo(Reason.AFFINITY);
		// At the limit, or once the scrape is stale (unknown), the switch goes ahead.
		other.updateEngine(new EngineSnapshot(clock.nanos(), 0, 40, 0.9, 0, 0, 900_000));
		assertThat(policy.choose(r, pool).reason()).isEqualTo(Reason.SLO_SWITCH);
		other.updateEngine(new EngineSnapshot(clock.nanos(), 0, 40, 0.95, 0, 0, 900_000));
		clock.advance(Duration.ofSeconds(3));
		assertThat(policy.choose(r, pool).reason()).isEqualTo(Reason.SLO_SWITCH);
		// Off (1): the same full cache does not stop the switch.
		InstancePool off = pool(settings().hotspotFloorTokens(Long.MAX_VALUE).switchMaxKvUsage(1).build(), 6);
		cache(off, c.second(), r);
		load(off, c.second(), 150_000);
		off.instance(c.first()).updateEngine(new EngineSnapshot(clock.nanos(), 0, 40, 0.95, 0, 0, 900_000));
		assertThat(DualMapPolicy.of(off.settings()).choose(r, off).reason()).isEqualTo(Reason.SLO_SWITCH);
	}

	@Test
	void sloSwitchMustGainMoreThanThePrefillOfTheCachedPrefixItGivesUp() {
		long[] chain = new long[100];
		for (int i = 0; i < chain.length; i++) {
			chain[i] = 51 + i;
		}
		RoutingRequest r = request(chain);
		for (double charge : new double[] { 1.0, 0.0 }) {
			InstancePool pool = pool(settings().hotspotFloorTokens(Long.MAX_VALUE).switchHitCharge(charge).build(), 6);
			DualMapPolicy policy = DualMapPolicy.of(pool.settings());
			Candidates c = candidates(pool, r);
			cache(pool, c.second(), r);
			// Staying: 150,001 tokens ahead and its own. Switching: 140,000 + all 6,400
			// prompt tokens, 3,601 fewer, but the 6,399 cached tokens given up are more.
			load(pool, c.second(), 150_000);
			load(pool, c.first(), 140_000);
			Decision d = policy.choose(r, pool);
			if (charge > 0) {
				assertThat(d.instanceId()).isEqualTo(c.second());
				assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
			}
			else {
				assertThat(d.instanceId()).isEqualTo(c.first());
				assertThat(d.reason()).isEqualTo(Reason.SLO_SWITCH);
			}
		}
	}

	@Test
	void noSloSwitchWhenTheOtherCandidateIsNoFaster() {
		InstancePool pool = pool(settings().hotspotFloorTokens(Long.MAX_VALUE).build(), 6);
		DualMapPolicy policy = DualMapPolicy.of(pool.settings());
		RoutingRequest r = request(41, 42);
		Candidates c = candidates(pool, r);
		cache(pool, c.second(), r);
		load(pool, c.second(), 150_000);
		load(pool, c.first(), 200_000);
		Decision d = policy.choose(r, pool);
		assertThat(d.instanceId()).isEqualTo(c.second());
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
	}

	@Test
	void sloSwitchBudgetIsTheRequestsOwnSloOrTheDefaultWhenItHasNone() {
		InstancePool pool = pool(settings().hotspotFloorTokens(Long.MAX_VALUE).build(), 6);
		DualMapPolicy policy = DualMapPolicy.of(pool.settings());
		RoutingRequest r = request(31, 32);
		Candidates c = candidates(pool, r);
		cache(pool, c.second(), r);
		// 30k tokens at 25 us each is 0.75 s: over half of a 1 s SLO, within half of 5 s.
		load(pool, c.second(), 30_000);
		Decision tight = policy.choose(withSlo(r, Duration.ofSeconds(1).toNanos()), pool);
		assertThat(tight.instanceId()).isEqualTo(c.first());
		assertThat(tight.reason()).isEqualTo(Reason.SLO_SWITCH);
		Decision standard = policy.choose(r, pool);
		assertThat(standard.instanceId()).isEqualTo(c.second());
		assertThat(standard.reason()).isEqualTo(Reason.AFFINITY);
		// No SLO of its own: the pool's default, not a budget of zero.
		Decision none = policy.choose(withSlo(r, 0), pool);
		assertThat(none.instanceId()).isEqualTo(c.second());
		assertThat(none.reason()).isEqualTo(Reason.AFFINITY);
	}

	@Test
	void sloSwitchChargesOnlyTheCachedTokensTheOtherCandidateLacks() {
		long[] chain = new long[100];
		for (int i = 0; i < chain.length; i++) {
			chain[i] = 51 + i;
		}
		RoutingRequest r = request(chain);
		InstancePool pool = pool(settings().hotspotFloorTokens(Long.MAX_VALUE).build(), 6);
		Candidates c = candidates(pool, r);
		// Half the prompt cached on the second candidate: 3,200 tokens given up by a
		// switch (80 ms), far less than the 10,000 tokens (250 ms) fewer ahead on the
		// first.
		pool.instance(c.second()).shadow().record(Arrays.copyOf(chain, 50));
		load(pool, c.second(), 150_000);
		load(pool, c.first(), 140_000);
		Decision d = DualMapPolicy.of(pool.settings()).choose(r, pool);
		assertThat(d.instanceId()).isEqualTo(c.first());
		assertThat(d.reason()).isEqualTo(Reason.SLO_SWITCH);
	}

	@Test
	void noSloSwitchWhenTheOtherCandidateIsEquallyLoaded() {
		InstancePool pool = pool(settings().hotspotFloorTokens(Long.MAX_VALUE).build(), 6);
		RoutingRequest r = request(61, 62);
		Candidates c = candidates(pool, r);
		// Nothing cached: both estimates are equal and over the switch budget.
		load(pool, c.first(), 150_000);
		load(pool, c.second(), 150_000);
		Decision d = DualMapPolicy.of(pool.settings()).choose(r, pool);
		assertThat(d.instanceId()).isEqualTo(c.first());
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
	}

	@Test
	void withTheAttentionModelTheSwitchPaysForTheAttentionOfTheColdPromptToo() {
		long[] chain = new long[100];
		for (int i = 0; i < chain.length; i++) {
			chain[i] = 51 + i;
		}
		RoutingRequest r = request(chain);
		for (TtftModel model : TtftModel.values()) {
			InstancePool pool = pool(settings().hotspotFloorTokens(Long.MAX_VALUE)
				.ttftModel(model)
				.prefillNanosPerToken(20_000)
				.attentionNanosPerPair(1.31)
				.calibrationAlpha(0)
				.build(), 6);
			Candidates c = candidates(pool, r);
			cache(pool, c.second(), r);
			// 150,016 tokens ahead on the affinity choice (3.0 s, over half the SLO),
			// 136,064 on the other: switching starts 0.15 s sooner at 20 us a token,
			// more than the 0.128 s of the 6,399 cached tokens given up, so the linear
			// model switches. The attention model also counts the cold prompt's own
			// attention there (20.5 M pairs, 27 ms) in its estimate and again in the
			// charge: 0.18 s against 0.15 s, and it keeps the cached prefix.
			loadInSmallRequests(pool, c.second(), 150_016);
			loadInSmallRequests(pool, c.first(), 136_064);
			Decision d = DualMapPolicy.of(pool.settings()).choose(r, pool);
			if (model == TtftModel.LINEAR) {
				assertThat(d.instanceId()).isEqualTo(c.first());
				assertThat(d.reason()).isEqualTo(Reason.SLO_SWITCH);
			}
			else {
				assertThat(d.instanceId()).isEqualTo(c.second());
				assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
			}
		}
	}

	/**
	 * {@code tokens} of unrelated work on {@code id} in 64-token requests (little
	 * attention).
	 */
	private void loadInSmallRequests(InstancePool pool, String id, int tokens) {
		for (int i = 0; i < tokens / 64; i++) {
			load(pool, id, 64);
		}
	}

	@Test
	void hotspotStepLeavesTheCacheOnlyWhenTheAffinityChoiceEatsTheSwitchBudget() {
		InstancePool pool = pool(settings().build(), 6);
		DualMapPolicy policy = DualMapPolicy.of(pool.settings());
		RoutingRequest r = request(51, 52);
		Candidates c = candidates(pool, r);
		cache(pool, c.second(), r);
		// 80k tokens at 25 us each is 2 s: a hotspot of the pool (the mean is 80k / 6),
		// but within half the 5 s SLO, so the request keeps its cached prefix.
		InstancePool.InFlight within = load(pool, c.second(), 80_000);
		assertThat(pool.isHotspot(pool.instance(c.second()))).isTrue();
		Decision kept = policy.choose(r, pool);
		assertThat(kept.instanceId()).isEqualTo(c.second());
		assertThat(kept.reason()).isEqualTo(Reason.AFFINITY);
		// A request queued past the 3 s bound makes it hot too, still not over budget.
		pool.instance(c.second()).oldestQueuedNanos(clock.nanos());
		clock.advance(Duration.ofSeconds(4));
		assertThat(policy.choose(r, pool).reason()).isEqualTo(Reason.AFFINITY);
		// 40k more: 3 s, over the budget, and the other candidate is faster.
		load(pool, c.second(), 40_000);
		Decision stepped = policy.choose(r, pool);
		assertThat(stepped.instanceId()).isEqualTo(c.first());
		assertThat(stepped.reason()).isEqualTo(Reason.HOTSPOT);
		assertThat(stepped.cachedTokens()).isZero();
		// Without the hotspot step the same move is a plain SLO switch.
		assertThat(new DualMapPolicy(Variant.NO_REBALANCE, pool.settings()).choose(r, pool).reason())
			.isEqualTo(Reason.SLO_SWITCH);
		// The other candidate is no faster: nowhere better to steer to.
		InstancePool.InFlight slower = load(pool, c.first(), 130_000);
		Decision both = policy.choose(r, pool);
		assertThat(both.instanceId()).isEqualTo(c.second());
		assertThat(both.reason()).isEqualTo(Reason.AFFINITY);
		slower.finish();
		within.finish();
		assertThat(policy.choose(r, pool).reason()).isEqualTo(Reason.AFFINITY);
	}

	@Test
	void staleEngineStatsAreUnknownNotSaturated() {
		InstancePool pool = pool(settings().hotspotFloorTokens(Long.MAX_VALUE).build(), 6);
		DualMapPolicy policy = DualMapPolicy.of(pool.settings());
		RoutingRequest r = request(61, 62);
		Candidates c = candidates(pool, r);
		cache(pool, c.second(), r);
		InstanceState home = pool.instance(c.second());
		home.updateEngine(new EngineSnapshot(clock.nanos(), 1_000, 64, 0.99, 0, 0, 0));
		assertThat(policy.choose(r, pool).reason()).isEqualTo(Reason.SLO_SWITCH);
		clock.advance(Duration.ofSeconds(3));
		Decision stale = policy.choose(r, pool);
		assertThat(stale.instanceId()).isEqualTo(c.second());
		assertThat(stale.reason()).isEqualTo(Reason.AFFINITY);
		home.updateEngine(new EngineSnapshot(clock.nanos(), 1_000, 64, 0.99, 0, 0, 0));
		home.markEngineUnknown();
		assertThat(policy.choose(r, pool).reason()).isEqualTo(Reason.AFFINITY);
	}

	@Test
	void unavailableCandidatesFallBack() {
		InstancePool pool = pool(settings().build(), 6);
		DualMapPolicy policy = DualMapPolicy.of(pool.settings());
		RoutingRequest r = request(71, 72);
		Candidates c = candidates(pool, r);
		cache(pool, c.second(), r);
		pool.instance(c.second()).draining(true);
		Decision one = policy.choose(r, pool);
		assertThat(one.instanceId()).isEqualTo(c.first());
		assertThat(one.reason()).isEqualTo(Reason.FALLBACK);
		pool.instance(c.first()).healthy(false);
		Decision walked = policy.choose(r, pool);
		String expected = pool.rings().walk(0, 71, id -> pool.instance(id).acceptsNewWork());
		assertThat(walked.instanceId()).isEqualTo(expected).isNotIn(c.first(), c.second());
		assertThat(walked.reason()).isEqualTo(Reason.FALLBACK);
		pool.instances().forEach(s -> s.healthy(false));
		assertThat(policy.choose(r, pool)).isNull();
		assertThat(policy.choose(r, new InstancePool("empty", pool.settings(), clock))).isNull();
	}

	@Test
	void anUnparsedBodyGoesToTheLeastLoadedInstance() {
		InstancePool pool = pool(settings().build(), 3);
		load(pool, "i0", 100);
		load(pool, "i2", 50);
		RoutingRequest r = new RoutingRequest("r", null, SLO, 0);
		for (Variant v : Variant.values()) {
			Decision d = new DualMapPolicy(v, pool.settings()).choose(r, pool);
			assertThat(d.instanceId()).as(v.policyName()).isEqualTo("i1");
			assertThat(d.reason()).isEqualTo(Reason.LOAD);
		}
	}

	@Test
	void unparsedBodiesOnEquallyLoadedInstancesTakeTurns() {
		// Requests routed by load alone add no pending tokens and often end at once
		// (embeddings, a model list): all of them went to the first idle instance.
		InstancePool pool = pool(settings().build(), 3);
		load(pool, "i0", 100);
		RoutingRequest r = new RoutingRequest("r", null, SLO, 0);
		for (DualMapPolicy policy : List.of(DualMapPolicy.of(pool.settings()),
				new DualMapPolicy(Variant.LEAST_LOADED, pool.settings()))) {
			Map<String, Integer> chosen = new TreeMap<>();
			for (int i = 0; i < 30; i++) {
				chosen.merge(policy.choose(r, pool).instanceId(), 1, Integer::sum);
			}
			assertThat(chosen).containsExactly(Map.entry("i1", 15), Map.entry("i2", 15));
		}
		for (RoutingPolicy other : List.of(new ConsistentHashPolicy(), new LeastLoadedPolicy())) {
			Map<String, Integer> chosen = new TreeMap<>();
			for (int i = 0; i < 30; i++) {
				chosen.merge(other.choose(r, pool).instanceId(), 1, Integer::sum);
			}
			assertThat(chosen).as(other.name()).containsExactly(Map.entry("i1", 15), Map.entry("i2", 15));
		}
	}

	@Test
	void thirdChoiceWhenBothCandidatesWouldMissTheSlo() {
		InstancePool pool = pool(settings().build(), 8);
		RoutingRequest r = request(81, 82);
		Candidates c = candidates(pool, r);
		// 300k tokens each: 7.5 s, past the whole SLO on both candidates.
		load(pool, c.first(), 300_000);
		load(pool, c.second(), 300_000);
		List<String> extras = new ArrayList<>();
		for (int ring = 0; ring < 2; ring++) {
			extras.add(pool.rings().walk(ring, 81, id -> !id.equals(c.first()) && !id.equals(c.second())));
		}
		Decision d = new DualMapPolicy(Variant.THIRD_CHOICE, pool.settings()).choose(r, pool);
		assertThat(d.reason()).isEqualTo(Reason.THIRD_CHOICE);
		assertThat(d.instanceId()).isIn(extras);
		assertThat(d.ttftEstimateNanos()).isLessThan(SLO);

		assertThat(DualMapPolicy.of(pool.settings()).choose(r, pool).reason()).isNotEqualTo(Reason.THIRD_CHOICE);
		SchedulerSettings on = pool.settings().toBuilder().thirdChoice(true).build();
		assertThat(DualMapPolicy.of(on).choose(r, pool).reason()).isEqualTo(Reason.THIRD_CHOICE);
		assertThat(new DualMapPolicy(Variant.NO_REBALANCE, on).choose(r, pool).reason())
			.isNotEqualTo(Reason.THIRD_CHOICE);

		// Of the two extra instances the faster one is taken, whichever ring found it.
		assertThat(extras.get(0)).isNotEqualTo(extras.get(1));
		for (int faster = 0; faster < 2; faster++) {
			InstancePool.InFlight slower = load(pool, extras.get(1 - faster), 100_000);
			Decision best = new DualMapPolicy(Variant.THIRD_CHOICE, pool.settings()).choose(r, pool);
			assertThat(best.instanceId()).isEqualTo(extras.get(faster));
			assertThat(best.reason()).isEqualTo(Reason.THIRD_CHOICE);
			slower.finish();
		}

		// Extra instances that are no better are not taken.
		extras.forEach(id -> load(pool, id, 400_000));
		Decision none = new DualMapPolicy(Variant.THIRD_CHOICE, pool.settings()).choose(r, pool);
		assertThat(none.instanceId()).isIn(c.first(), c.second());
	}

	@Test
	void cacheAffinityAblationIgnoresLoadAndHotspots() {
		InstancePool pool = pool(settings().build(), 6);
		RoutingRequest r = request(91, 92);
		Candidates c = candidates(pool, r);
		cache(pool, c.second(), r);
		load(pool, c.second(), 400_000);
		assertThat(pool.isHotspot(pool.instance(c.second()))).isTrue();
		Decision d = new DualMapPolicy(Variant.CACHE_AFFINITY, pool.settings()).choose(r, pool);
		assertThat(d.instanceId()).isEqualTo(c.second());
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		Decision full = DualMapPolicy.of(pool.settings()).choose(r, pool);
		assertThat(full.instanceId()).isEqualTo(c.first());
		assertThat(full.reason()).isEqualTo(Reason.HOTSPOT);
	}

	@Test
	void leastLoadedAblationIgnoresTheCache() {
		InstancePool pool = pool(settings().build(), 6);
		DualMapPolicy policy = new DualMapPolicy(Variant.LEAST_LOADED, pool.settings());
		RoutingRequest r = request(101, 102);
		Candidates c = candidates(pool, r);
		cache(pool, c.second(), r);
		// Equal load: the ring-0 candidate, cache or not.
		assertThat(policy.choose(r, pool).instanceId()).isEqualTo(c.first());
		load(pool, c.second(), 10);
		Decision d = policy.choose(r, pool);
		assertThat(d.instanceId()).isEqualTo(c.first());
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		load(pool, c.first(), 20);
		Decision other = policy.choose(r, pool);
		assertThat(other.instanceId()).isEqualTo(c.second());
		// The cache still shows in the decision, for accounting.
		assertThat(other.cachedTokens()).isEqualTo(127);
	}

	@Test
	void slowStartRampsUpANewInstance() {
		SchedulerSettings s = settings().slowStart(Duration.ofSeconds(10)).build();
		InstancePool pool = pool(s, 4);
		clock.advance(Duration.ofMinutes(1));
		List<RingMember> members = new ArrayList<>(pool.rings().members());
		members.add(new RingMember("fresh", 1));
		pool.updateMembership(members);
		DualMapPolicy policy = DualMapPolicy.of(s);
		assertThat(pool.warmth(pool.instance("fresh"))).isEqualTo(0.1);
		assertThat(pool.warmth(pool.instance("i0"))).isEqualTo(1);
		assertThat(sharesOfFresh(pool, policy, 0)).isZero();
		clock.advance(Duration.ofSeconds(5));
		assertThat(pool.warmth(pool.instance("fresh"))).isEqualTo(0.5);
		clock.advance(Duration.ofSeconds(5));
		assertThat(sharesOfFresh(pool, policy, 10_000)).isPositive();
	}

	/**
	 * Decisions that went to "fresh" among idle, uncached keys where it is a candidate.
	 */
	private static int sharesOfFresh(InstancePool pool, DualMapPolicy policy, long firstKey) {
		int n = 0;
		for (long k = firstKey; k < firstKey + 2_000; k++) {
			Candidates c = pool.rings().candidates(k);
			if (c.first().equals("fresh") || c.second().equals("fresh")) {
				if (policy.choose(request(k), pool).instanceId().equals("fresh")) {
					n++;
				}
			}
		}
		return n;
	}

	@Test
	void everyVariantIsRegisteredUnderItsName() {
		SchedulerSettings s = SchedulerSettings.ofDefaults();
		for (Variant v : Variant.values()) {
			RoutingPolicy p = RoutingPolicies.create(v.policyName(), s);
			assertThat(p).isInstanceOf(DualMapPolicy.class);
			assertThat(((DualMapPolicy) p).variant()).isEqualTo(v);
			assertThat(p.name()).isEqualTo(v.policyName());
			assertThat(Variant.ofPolicyName(v.policyName())).isEqualTo(v);
		}
		assertThat(RoutingPolicies.names()).startsWith("dualmap", "dualmap-no-rebalance", "dualmap-cache-affinity",
				"dualmap-least-loaded", "dualmap-third-choice");
		assertThatIllegalArgumentException().isThrownBy(() -> Variant.ofPolicyName("dualmap-x"))
			.withMessageContaining("'dualmap-x'");
	}

}

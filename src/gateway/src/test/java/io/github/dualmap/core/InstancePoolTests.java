package io.github.dualmap.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

class InstancePoolTests {

	private ManualClock clock;

	private InstancePool pool;

	@BeforeEach
	void setUp() {
		clock = new ManualClock();
		usePool(SchedulerSettings.ofDefaults());
	}

	// A pool of instances a and b on the test's clock.
	private void usePool(SchedulerSettings settings) {
		pool = new InstancePool("llm", settings, clock);
		pool.updateMembership(List.of(new RingMember("a", 1), new RingMember("b", 1)));
	}

	private static RoutingRequest request(int tokens) {
		return new RoutingRequest("r", new PromptBlocks(new long[] { tokens, tokens + 1 }, 64, tokens), 0, 0);
	}

	private InstancePool.InFlight send(String id, int uncached) {
		return pool.dispatch(request(uncached), new Decision(id, Reason.AFFINITY, 0, uncached, -1));
	}

	private void assertNonNegative(InstanceState s) {
		assertThat(s.prefillTokens()).isNotNegative();
		assertThat(s.prefillRequests()).isNotNegative();
		assertThat(s.inFlight()).isNotNegative();
	}

	@Property(tries = 200)
	void accountingNeverGoesNegativeWhateverTheOrderOfEvents(@ForAll long seed) {
		setUp();
		Random random = new Random(seed);
		InstanceState a = pool.instance("a");
		List<InstancePool.InFlight> handles = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			handles.add(send("a", 100 + i));
		}
		assertThat(a.prefillTokens()).isEqualTo(510);
		assertThat(a.inFlight()).isEqualTo(5);
		// Complete, error and cancel paths each call firstToken and/or finish, in any
		// order and any number of times.
		for (int step = 0; step < 40; step++) {
			InstancePool.InFlight d = handles.get(random.nextInt(handles.size()));
			if (random.nextBoolean()) {
				d.firstToken();
			}
			else {
				d.finish();
			}
			assertNonNegative(a);
		}
		handles.forEach(InstancePool.InFlight::finish);
		assertThat(a.prefillTokens()).isZero();
		assertThat(a.prefillRequests()).isZero();
		assertThat(a.inFlight()).isZero();
		assertThat(a.dispatched()).isEqualTo(5);
	}

	@Test
	void whatPeerReplicasPublishedCountsInTheEstimatesAndThePoolMeanUntilReplaced() {
		InstanceState a = pool.instance("a");
		send("a", 1_000);
		a.peerLoad(2, 3_000, 4_000);
		assertThat(a.peerPendingTokens()).isEqualTo(7_000);
		assertThat(a.knownPendingTokens()).isEqualTo(8_000);
		assertThat(a.localPendingTokens()).isEqualTo(1_000);
		assertThat(pool.pendingTokens(a)).isEqualTo(8_000);
		assertThat(pool.meanPendingTokens()).isEqualTo(4_000.0);

		a.peerLoad(0, 0, 1_000);
		assertThat(pool.pendingTokens(a)).isEqualTo(2_000);
		assertThat(pool.meanPendingTokens()).isEqualTo(1_000.0);
		a.peerLoad(-1, -5, -7);
		assertThat(a.peerPrefillRequests()).isZero();
		assertThat(a.peerPendingTokens()).isZero();
		assertThat(pool.meanPendingTokens()).isEqualTo(500.0);

		// An instance that stops accepting work leaves the mean with its peers' load.
		a.peerLoad(0, 0, 9_000);
		a.draining(true);
		assertThat(pool.meanPendingTokens()).isZero();
		a.draining(false);
		assertThat(pool.meanPendingTokens()).isEqualTo(5_000.0);
	}

	@Test
	void peersPrefillCountsWithThePairsTheyPublishedAndTheRestAtThePoolsMeanPairsPerToken() {
		InstanceState a = pool.instance("a");
		send("a", 1_000);
		long own = PrefillWork.pairs(0, 1_000);
		assertThat(pool.prefillWork(a)).isEqualTo(new PrefillWork(1_000, own));
		// Without pairs, peer tokens count at the pool's mean pairs per token.
		a.peerLoad(1, 1_000, 0);
		long atMean1000 = pool.prefillWork(a).pairs() - own;
		a.peerLoad(1, 1_500, 0);
		long atMean1500 = pool.prefillWork(a).pairs() - own;
		assertThat(atMean1000).isPositive().isLessThan(atMean1500);
		// One peer published 9,000,000 pairs for 2,000 of 3,000 tokens (a long prompt
		// behind a cached prefix): those count exactly, the other 1,000 at the mean.
		a.peerLoad(1, 3_000, 500, 9_000_000, 2_000);
		assertThat(a.peerPrefillPairs()).isEqualTo(9_000_000);
		assertThat(a.peerPairedTokens()).isEqualTo(2_000);
		assertThat(pool.prefillWork(a)).isEqualTo(new PrefillWork(4_000, own + 9_000_000 + atMean1000));
		// The work ahead of a new request adds the peers' 500 queued tokens at the mean.
		assertThat(pool.pendingWork(a)).isEqualTo(new PrefillWork(4_500, own + 9_000_000 + atMean1500));
		// Paired tokens beyond the tokens in prefill are capped; none paired: no pairs.
		a.peerLoad(1, 3_000, 0, 9_000_000, 5_000);
		assertThat(a.peerPairedTokens()).isEqualTo(3_000);
		assertThat(pool.prefillWork(a)).isEqualTo(new PrefillWork(4_000, own + 9_000_000));
		a.peerLoad(1, 3_000, 0, 9_000_000, 0);
		assertThat(a.peerPrefillPairs()).isZero();
		a.peerLoad(0, 0, 0);
		assertThat(pool.prefillWork(a)).isEqualTo(new PrefillWork(1_000, own));
		// Another sender's prompt seen through the engine counts as peer tokens without
		// pairs do.
		assertThat(pool.plusForeign(pool.prefillWork(a), 1_000)).isEqualTo(new PrefillWork(2_000, own + atMean1000));
		assertThat(pool.plusForeign(pool.prefillWork(a), 0)).isEqualTo(pool.prefillWork(a));
	}

	@Test
	void firstTokenReleasesPrefillOnceAndFeedsTheModel() {
		InstanceState a = pool.instance("a");
		InstancePool.InFlight d = send("a", 1_000);
		assertThat(d.uncachedTokens()).isEqualTo(1_000);
		assertThat(d.isPrefillDone()).isFalse();
		clock.advance(Duration.ofMillis(500));
		assertThat(d.firstToken()).isEqualTo(Duration.ofMillis(500).toNanos());
		assertThat(d.isPrefillDone()).isTrue();
		assertThat(d.firstToken()).isEqualTo(-1);
		assertThat(a.prefillTokens()).isZero();
		assertThat(a.inFlight()).isEqualTo(1);
		// 480 ms over 1000 tokens is far slower than the configured 25 us per token.
		assertThat(pool.estimator().nanosPerToken()).isGreaterThan(25_000);
		d.finish();
		d.finish();
		assertThat(a.inFlight()).isZero();
		assertThat(d.isFinished()).isTrue();
	}

	@Test
	void anErrorBeforeTheFirstTokenReleasesPrefillWithoutCalibrating() {
		InstanceState a = pool.instance("a");
		InstancePool.InFlight d = send("a", 1_000);
		clock.advance(Duration.ofSeconds(30));
		d.finish();
		assertThat(d.firstToken()).isEqualTo(-1);
		assertThat(a.prefillTokens()).isZero();
		assertThat(a.inFlight()).isZero();
		assertThat(pool.estimator().nanosPerToken()).isEqualTo(25_000);
	}

	@Test
	void dispatchRecordsTheChainInTheShadowIndex() {
		RoutingRequest r = request(300);
		pool.dispatch(r, new Decision("b", Reason.AFFINITY, 0, 300, -1));
		assertThat(pool.instance("b").shadow().peekMatchedBlocks(r.blocks().chain())).isEqualTo(2);
		assertThat(pool.instance("a").shadow().size()).isZero();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> pool.dispatch(r, new Decision("zz", Reason.AFFINITY, 0, 1, -1)))
			.withMessageContaining("'zz'");
	}

	@Test
	void membershipChangesKeepTheStateOfInstancesThatStay() {
		InstanceState a = pool.instance("a");
		InstancePool.InFlight d = send("a", 700);
		assertThat(
				pool.updateMembership(List.of(new RingMember("c", 1), new RingMember("a", 1), new RingMember("b", 1))))
			.isTrue();
		assertThat(pool.instance("a")).isSameAs(a);
		assertThat(a.prefillTokens()).isEqualTo(700);
		assertThat(pool.instances()).extracting(InstanceState::id).containsExactly("a", "b", "c");
		// Same set in another order: nothing to rebuild.
		assertThat(
				pool.updateMembership(List.of(new RingMember("b", 1), new RingMember("c", 1), new RingMember("a", 1))))
			.isFalse();
		// A weight change rebuilds the rings but keeps the state.
		assertThat(
				pool.updateMembership(List.of(new RingMember("a", 2), new RingMember("b", 1), new RingMember("c", 1))))
			.isTrue();
		assertThat(pool.instance("a")).isSameAs(a);
		assertThat(a.weight()).isEqualTo(2);
		// A removed instance's handle still settles on its old state.
		pool.updateMembership(List.of(new RingMember("b", 1)));
		assertThat(pool.instance("a")).isNull();
		d.finish();
		assertThat(a.prefillTokens()).isZero();
		assertThat(a.inFlight()).isZero();
		assertThat(pool.ringRebuilds()).isEqualTo(4);
	}

	@Test
	void aRemovedInstanceLeavesThePrefixDirectoryAndItsBoundShrinks() {
		PrefixDirectory directory = pool.directory();
		int perInstance = pool.instance("a").shadow().capacityBlocks();
		assertThat(directory.capacity()).isEqualTo(2 * perInstance);
		RoutingRequest onA = request(100);
		RoutingRequest onB = new RoutingRequest("r2", new PromptBlocks(new long[] { 7, 8, 9 }, 64, 200), 0, 0);
		pool.dispatch(onA, new Decision("a", Reason.AFFINITY, 0, 100, -1));
		pool.dispatch(onB, new Decision("b", Reason.AFFINITY, 0, 200, -1));
		assertThat(directory.size()).isEqualTo(5);

		pool.updateMembership(List.of(new RingMember("a", 1), new RingMember("c", 1), new RingMember("d", 1)));

		assertThat(directory.owner(onB.blocks().chain())).isNull();
		assertThat(directory.owner(onA.blocks().chain())).isEqualTo("a");
		assertThat(directory.size()).isEqualTo(2);
		assertThat(directory.capacity()).isEqualTo(3 * perInstance);
		// Draining is not leaving: its entries stay for when it accepts work again.
		pool.instance("a").draining(true);
		pool.updateMembership(List.of(new RingMember("a", 1), new RingMember("c", 1)));
		assertThat(directory.owner(onA.blocks().chain())).isEqualTo("a");
		assertThat(directory.capacity()).isEqualTo(2 * perInstance);
	}

	@Test
	void pendingTokensBlendScrapedWaitingWithLocalAccounting() {
		InstanceState a = pool.instance("a");
		send("a", 1_000);
		assertThat(pool.pendingTokens(a)).isEqualTo(1_000);
		// Ten requests waiting in the engine (other routers' traffic) outweigh our own.
		a.updateEngine(new EngineSnapshot(clock.nanos(), 10, 2, 0.5, 0, 0, 0));
		assertThat(pool.pendingTokens(a)).isGreaterThan(1_000);
		// An engine that waits for nothing does not hide local accounting.
		a.updateEngine(new EngineSnapshot(clock.nanos(), 0, 2, 0.5, 0, 0, 0));
		assertThat(pool.pendingTokens(a)).isEqualTo(1_000);
	}

	@Test
	void pendingTokensCountTheEnginesEstimatedBacklogWhereItExceedsOurOwnPrefill() {
		usePool(SchedulerSettings.custom().engineBacklog(true).build());
		InstanceState a = pool.instance("a");
		send("a", 1_000);
		a.updateEngine(new EngineSnapshot(clock.nanos(), 0, 2, 0.5, 0, 0, 0));
		assertThat(pool.pendingTokens(a)).isEqualTo(1_000);
		// Our 1,000 tokens admitted: the engine's backlog is ours.
		a.updateEngine(new EngineSnapshot(clock.nanos(), 0, 2, 0.5, 1_000, 0, 0));
		assertThat(pool.pendingTokens(a)).isEqualTo(1_000);
		// Another replica's 50,000-token prompt, nothing waiting behind it yet.
		a.updateEngine(new EngineSnapshot(clock.nanos(), 0, 2, 0.5, 51_000, 0, 0));
		assertThat(pool.pendingTokens(a)).isEqualTo(51_000);
		assertThat(pool.meanPendingTokens()).as("and in the pool mean").isEqualTo(51_000 / 2.0);
		clock.advance(Duration.ofMillis(100));
		assertThat(pool.pendingTokens(a)).as("drained at the prefill rate").isBetween(1_001L, 50_999L);
		clock.advance(Duration.ofSeconds(3));
		assertThat(pool.pendingTokens(a)).as("stale: our own accounting").isEqualTo(1_000);
	}

	@Test
	void theBacklogDrainsAtTheLowerOfAnInstancesFitAndThePoolsLinearRate() {
		usePool(SchedulerSettings.custom().engineBacklog(true).build());
		InstanceState a = pool.instance("a");
		double linear = pool.backlogNanosPerToken(a);
		assertThat(linear).isEqualTo(pool.prefillNanosPerToken(a));
		// a's fit learns 100 us per uncached token, four times the pool's linear rate.
		fit(a, 100_000);
		assertThat(pool.prefillNanosPerToken(a)).isGreaterThan(3 * linear);
		assertThat(pool.backlogNanosPerToken(a)).isEqualTo(linear);
		// Another sender's 51,000 tokens admitted, then a second: drained at the linear
		// rate.
		a.updateEngine(new EngineSnapshot(clock.nanos(), 0, 2, 0.5, 0, 0, 0));
		a.updateEngine(new EngineSnapshot(clock.nanos(), 0, 2, 0.5, 51_000, 0, 0));
		clock.advance(Duration.ofSeconds(1));
		assertThat(a.engineBacklogTokens(clock.nanos())).isEqualTo(51_000 - (long) (1e9 / linear));
		// A fit faster than the linear rate drains at the fit.
		InstanceState b = pool.instance("b");
		fit(b, 5_000);
		assertThat(pool.backlogNanosPerToken(b)).isEqualTo(pool.prefillNanosPerToken(b)).isLessThan(linear);
	}

	// Feeds s's TTFT model prompts of 1,000 to 7,000 uncached tokens, nothing cached
	// or ahead, at nanosPerToken each.
	private void fit(InstanceState s, long nanosPerToken) {
		for (int i = 0; i < 400; i++) {
			int tokens = 1_000 * (1 + i % 7);
			s.ttftModel().observe(PrefillWork.NONE, PrefillWork.of(0, tokens), nanosPerToken * tokens);
		}
	}

	@Test
	void withoutEngineBacklogTheCountersAddNothing() {
		usePool(SchedulerSettings.custom().engineBacklog(false).build());
		InstanceState a = pool.instance("a");
		send("a", 1_000);
		a.updateEngine(new EngineSnapshot(clock.nanos(), 0, 2, 0.5, 0, 0, 0));
		a.updateEngine(new EngineSnapshot(clock.nanos(), 0, 2, 0.5, 51_000, 0, 0));
		assertThat(a.engineBacklogTokens(clock.nanos())).isZero();
		assertThat(pool.pendingTokens(a)).isEqualTo(1_000);
	}

	@Test
	void staleOrFailedScrapesAreUnknownNotSaturated() {
		InstanceState a = pool.instance("a");
		a.updateEngine(new EngineSnapshot(clock.nanos(), 500, 2, 0.99, 0, 0, 0));
		assertThat(pool.pendingTokens(a)).isPositive();
		clock.advance(Duration.ofSeconds(3));
		assertThat(pool.pendingTokens(a)).isZero();

		a.updateEngine(new EngineSnapshot(clock.nanos(), 500, 2, 0.99, 0, 0, 0));
		assertThat(pool.pendingTokens(a)).isPositive();
		a.markEngineUnknown();
		assertThat(a.engineFailed()).isTrue();
		assertThat(a.engine()).isNotNull();
		assertThat(pool.pendingTokens(a)).isZero();
	}

	@Test
	void scrapedKvCapacityResizesTheShadowIndex() {
		InstanceState a = pool.instance("a");
		a.updateEngine(new EngineSnapshot(clock.nanos(), 0, 0, 0, 0, 0, 64_000));
		assertThat(a.shadow().capacityBlocks()).isEqualTo(1_000);
	}

	@Test
	void hotspotByLoadAndByWait() {
		InstanceState a = pool.instance("a");
		InstanceState b = pool.instance("b");
		send("a", 10_000);
		// Above 1.5 x the mean but under the absolute floor: not a hotspot yet.
		assertThat(pool.isHotspot(a)).isFalse();
		send("a", 30_000);
		assertThat(pool.isHotspot(a)).isTrue();
		assertThat(pool.isHotspot(b)).isFalse();
		b.oldestQueuedNanos(clock.nanos());
		// Queued 1.5 s: within the 3 s bound (the clock's own reading is no wait).
		clock.advance(Duration.ofMillis(1_500));
		assertThat(pool.isHotspot(b)).isFalse();
		clock.advance(Duration.ofMillis(2_500));
		assertThat(pool.isHotspot(b)).isTrue();
	}

	@Test
	void scrapedWaitingRequestsCountAtTheMeanSizeOfRequestsSent() {
		InstanceState a = pool.instance("a");
		for (int i = 0; i < 200; i++) {
			send("b", 100).finish();
		}
		a.updateEngine(new EngineSnapshot(clock.nanos(), 10, 0, 0, 0, 0, 0));
		// Ten waiting requests of the 100 tokens every request sent so far had.
		assertThat(pool.pendingTokens(a)).isEqualTo(1_000);
	}

	@Test
	void theShadowIndexStartsWithTheConfiguredCapacityInBlocks() {
		SchedulerSettings small = SchedulerSettings.custom().shadowCapacityTokens(640).build();
		InstancePool p = new InstancePool("small", small, clock);
		p.updateMembership(List.of(new RingMember("a", 1)));
		long[] chain = new long[20];
		for (int i = 0; i < chain.length; i++) {
			chain[i] = 900 + i;
		}
		p.instance("a").shadow().record(chain);
		// 640 tokens of 64-token blocks.
		assertThat(p.instance("a").shadow().capacityBlocks()).isEqualTo(10);
		assertThat(p.instance("a").shadow().size()).isEqualTo(10);
	}

	@Test
	void loadCoefficientOfVariation() {
		assertThat(pool.loadCv()).isZero();
		send("a", 1);
		assertThat(pool.loadCv()).isEqualTo(1.0);
		send("b", 1);
		assertThat(pool.loadCv()).isZero();
		// Queued requests count as load too: 3 on a (1 + 2 queued), 1 on b.
		pool.instance("a").queuedRequests.addAndGet(2);
		assertThat(pool.loadCv()).isEqualTo(0.5);
		pool.instance("a").queuedRequests.addAndGet(-2);
	}

	/**
	 * The scan the running totals replace: mean of pendingTokens over accepting members.
	 */
	private static double scannedMean(InstancePool p) {
		double sum = 0;
		int n = 0;
		for (InstanceState s : p.instances()) {
			if (s.acceptsNewWork()) {
				sum += p.pendingTokens(s);
				n++;
			}
		}
		return n == 0 ? 0 : sum / n;
	}

	@Property(tries = 100)
	void meanPendingTokensFromRunningTotalsEqualsTheScan(@ForAll long seed) {
		Random random = new Random(seed);
		ManualClock c = new ManualClock();
		InstancePool p = new InstancePool("llm", SchedulerSettings.ofDefaults(), c);
		List<String> ids = List.of("a", "b", "c", "d");
		p.updateMembership(ids.stream().map(id -> new RingMember(id, 1)).toList());
		List<InstancePool.InFlight> open = new ArrayList<>();
		for (int step = 0; step < 200; step++) {
			String id = ids.get(random.nextInt(ids.size()));
			switch (random.nextInt(7)) {
				case 0, 1 -> {
					if (p.instance(id) != null) {
						int uncached = random.nextInt(5000);
						open.add(p.dispatch(request(uncached), new Decision(id, Reason.AFFINITY, 0, uncached, -1)));
					}
				}
				case 2 -> {
					if (!open.isEmpty()) {
						open.get(random.nextInt(open.size())).firstToken();
					}
				}
				case 3 -> {
					if (!open.isEmpty()) {
						open.remove(random.nextInt(open.size())).finish();
					}
				}
				case 4 -> {
					InstanceState s = p.instance(id);
					if (s != null) {
						s.healthy(random.nextBoolean());
						s.draining(random.nextInt(4) == 0);
					}
				}
				case 5 -> {
					// Membership change: one instance leaves or comes back.
					List<RingMember> members = ids.stream()
						.filter(m -> !m.equals(id) || p.instance(id) == null)
						.map(m -> new RingMember(m, 1))
						.toList();
					p.updateMembership(members);
				}
				default -> {
					InstanceState s = p.instance(id);
					if (s != null) {
						s.updateEngine(new EngineSnapshot(c.nanos(), random.nextInt(3) == 0 ? 0 : random.nextInt(20),
								random.nextInt(8), 0.5, 0, 0, 0));
					}
				}
			}
			// Scraped excess is taken at the snapshot: compare right after scrapes of
			// every member, and without any snapshot in between.
			if (random.nextInt(10) == 0) {
				for (InstanceState s : p.instances()) {
					s.updateEngine(new EngineSnapshot(c.nanos(), random.nextInt(20), 1, 0.5, 0, 0, 0));
				}
				assertThat(p.meanPendingTokens()).isCloseTo(scannedMean(p), within(1e-6));
			}
			boolean scrapedSinceChange = p.instances().stream().allMatch(s -> s.engine() == null);
			if (scrapedSinceChange) {
				assertThat(p.meanPendingTokens()).isCloseTo(scannedMean(p), within(1e-6));
			}
		}
		for (InstanceState s : p.instances()) {
			s.updateEngine(new EngineSnapshot(c.nanos(), random.nextInt(20), 1, 0.5, 0, 0, 0));
		}
		assertThat(p.meanPendingTokens()).isCloseTo(scannedMean(p), within(1e-6));
		for (InstanceState s : p.instances()) {
			s.updateEngine(new EngineSnapshot(c.nanos(), 0, 1, 0.5, 0, 0, 0));
		}
		open.forEach(InstancePool.InFlight::finish);
		assertThat(p.meanPendingTokens()).isZero();
	}

}

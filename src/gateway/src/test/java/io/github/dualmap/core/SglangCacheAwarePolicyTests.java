package io.github.dualmap.core;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SglangCacheAwarePolicyTests {

	private final PeerFixture f = new PeerFixture("a", "b");

	private final SglangCacheAwarePolicy policy = new SglangCacheAwarePolicy(f.settings);

	private final PromptBlocks prompt = PeerFixture.prompt(1, 2, 3, 4);

	@Test
	void aMatchAboveTheCacheThresholdReturnsToTheSameInstance() {
		f.place(policy, f.request(prompt), "b", prompt.promptTokens());
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(d.cachedTokens()).isEqualTo(prompt.tokensFor(4));
	}

	@Test
	void aLowMatchGoesToTheLeastLoadedInstanceWhateverItsTree() {
		PeerFixture.Routed first = f.place(policy, f.request(prompt), "a", prompt.promptTokens());
		f.finish(policy, first);
		f.busy(policy, "b", 1);
		// One block of four matches: 15 / 64 tokens is below 0.3. a holds the bigger tree
		// but carries no request; b has the empty tree and one request.
		Decision d = policy.choose(f.request(PeerFixture.prompt(1, 7, 8, 9)), f.pool);
		assertThat(d.instanceId()).isEqualTo("a");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		assertThat(policy.treeBlocks("a")).isEqualTo(4);
		assertThat(policy.treeBlocks("b")).isZero();
	}

	@Test
	void imbalancedInFlightLoadOverridesTheCache() {
		f.place(policy, f.request(prompt), "a", prompt.promptTokens());
		// 60 - 0 is within the absolute threshold of 64: still cache-aware.
		f.busy(policy, "a", 59);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("a");
		// 65 - 0 > 64 and 65 > 1.5 x 0: shortest queue.
		f.busy(policy, "a", 5);
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		// 200 - 134 > 64 but 200 <= 1.5 x 134: the relative rule keeps it balanced.
		f.busy(policy, "a", 135);
		f.busy(policy, "b", 134);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("a");
	}

	@Test
	void theTreeForgetsLeastRecentlyUsedPrefixesBeyondItsMaximumSize() {
		SglangCacheAwarePolicy small = new SglangCacheAwarePolicy(PeerFixture.BLOCK, 0.3, 64, 1.5,
				4L * PeerFixture.BLOCK);
		f.place(small, f.request(prompt), "a", prompt.promptTokens());
		f.place(small, f.request(PeerFixture.prompt(5, 6, 7, 8)), "a", prompt.promptTokens());
		assertThat(small.treeBlocks("a")).isEqualTo(4);
		// The first prompt is gone from a's tree: a low match, which goes to the less
		// loaded b (a has two requests in flight).
		Decision d = small.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.cachedTokens()).isZero();
	}

	@Test
	void skipsInstancesThatDoNotAcceptWork() {
		f.place(policy, f.request(prompt), "a", prompt.promptTokens());
		f.instance("a").healthy(false);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("b");
		f.instance("b").draining(true);
		assertThat(policy.choose(f.request(prompt), f.pool)).isNull();
	}

	@Test
	void anUnparsedBodyTakesTheShortestQueue() {
		f.busy(policy, "a", 1);
		Decision d = policy.choose(f.unparsed(), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
	}

	@Test
	void aRemovedInstanceTakesItsTreeAlong() {
		f.place(policy, f.request(prompt), "a", prompt.promptTokens());
		f.members("b", "c");
		policy.onMembershipChanged(f.pool);
		assertThat(policy.treeBlocks("a")).isZero();
		f.members("a", "b", "c");
		policy.onMembershipChanged(f.pool);
		assertThat(policy.choose(f.request(prompt), f.pool).reason()).isEqualTo(Reason.LOAD);
	}

	// The SGLang Model Gateway generation.

	@Test
	void theModelGatewayKeepsAffinityWhileOnlyOtherInstancesAreImbalanced() {
		PeerFixture g = new PeerFixture("a", "b", "c");
		SglangCacheAwarePolicy smg = SglangCacheAwarePolicy.modelGateway(g.settings);
		assertThat(smg.name()).isEqualTo("smg-cache-aware");
		g.place(smg, g.request(prompt), "a", prompt.promptTokens());
		// b is 100 requests ahead of c: the router's fleet-wide check would take the
		// shortest queue; the gate looks only at a (1 in flight, the mean is 33.7).
		g.busy(smg, "b", 100);
		Decision d = smg.choose(g.request(prompt), g.pool);
		assertThat(d.instanceId()).isEqualTo("a");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		SglangCacheAwarePolicy router = new SglangCacheAwarePolicy(g.settings);
		g.place(router, g.request(prompt), "a", prompt.promptTokens());
		assertThat(router.choose(g.request(prompt), g.pool).instanceId()).isEqualTo("c");
	}

	@Test
	void theModelGatewaySpillsOnlyPastBothMarginsOverTheMean() {
		PeerFixture g = new PeerFixture("a", "b", "c");
		SglangCacheAwarePolicy smg = SglangCacheAwarePolicy.modelGateway(g.settings);
		g.place(smg, g.request(prompt), "a", prompt.promptTokens());
		// a 90, b 0, c 0: the mean is 30; 90 > 1.5 x 30 but not > 30 + 64: it stays.
		g.busy(smg, "a", 89);
		assertThat(smg.choose(g.request(prompt), g.pool).instanceId()).isEqualTo("a");
		// a 100: > 1.5 x 33.3 and > 33.3 + 64: it spills, and with no engine load
		// polled the fewer in flight decide between the idle b and c.
		g.busy(smg, "a", 10);
		Decision d = smg.choose(g.request(prompt), g.pool);
		assertThat(d.instanceId()).isIn("b", "c");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		// a 300, b 200, c 200: the mean is 233; 300 > 233 + 64 but not > 1.5 x 233.
		g.busy(smg, "a", 200);
		g.busy(smg, "b", 200);
		g.busy(smg, "c", 200);
		assertThat(smg.choose(g.request(prompt), g.pool).instanceId()).isEqualTo("a");
	}

	@Test
	void theModelGatewayPicksAmongEqualHoldersByInFlightCount() {
		PeerFixture g = new PeerFixture("a", "b", "c");
		SglangCacheAwarePolicy smg = SglangCacheAwarePolicy.modelGateway(g.settings);
		g.finish(smg, g.place(smg, g.request(prompt), "a", prompt.promptTokens()));
		g.finish(smg, g.place(smg, g.request(prompt), "b", prompt.promptTokens()));
		// a and b hold the prompt; c is idle but holds nothing and is no candidate.
		g.busy(smg, "a", 2);
		g.busy(smg, "b", 1);
		Decision d = smg.choose(g.request(prompt), g.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(d.cachedTokens()).isEqualTo(prompt.tokensFor(4));
		// Equal holders tie at random, by request: both get some.
		g.busy(smg, "b", 1);
		Set<String> picks = new HashSet<>();
		for (int i = 0; i < 16; i++) {
			picks.add(smg.choose(g.request(prompt), g.pool).instanceId());
		}
		assertThat(picks).containsExactlyInAnyOrder("a", "b");
	}

	@Test
	void theModelGatewaysMissesGoByExpectedWaitCreditedWhenChosen() {
		SglangCacheAwarePolicy smg = SglangCacheAwarePolicy.modelGateway(f.settings);
		// a scores 0.15 x 0.5 / 0.5 = 0.15 s, b 0.15 x 0.1 / 0.9 = 0.017 s.
		f.scrape("a", 0, 0.5);
		f.scrape("b", 0, 0.1);
		// Two arrivals chosen before either is dispatched (a dispatch queue holds them):
		// the first credits b with 1024 tokens (0.512 s), so the second goes to a.
		Decision first = smg.choose(f.request(PeerFixture.prompt(7)), f.pool);
		assertThat(first.instanceId()).isEqualTo("b");
		assertThat(first.reason()).isEqualTo(Reason.LOAD);
		assertThat(smg.choose(f.request(PeerFixture.prompt(8)), f.pool).instanceId()).isEqualTo("a");
	}

	@Test
	void theModelGatewaysSpillSkipsOtherInstancesPastTheGate() {
		PeerFixture g = new PeerFixture("a", "b", "c", "d");
		SglangCacheAwarePolicy smg = SglangCacheAwarePolicy.modelGateway(g.settings);
		g.place(smg, g.request(prompt), "a", prompt.promptTokens());
		// a and b 200 in flight, c and d none: the mean is 100, and a and b are above
		// both 150 and 164. b's polled engine looks idlest, but it trips the gate too.
		g.busy(smg, "a", 199);
		g.busy(smg, "b", 200);
		g.scrape("a", 0, 0);
		g.scrape("b", 0, 0);
		g.scrape("c", 3, 0);
		g.scrape("d", 3, 0);
		Decision d = smg.choose(g.request(prompt), g.pool);
		assertThat(d.instanceId()).isIn("c", "d");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
	}

	@Test
	void theModelGatewaysTreeIsBoundedOverAllInstancesAtEachEvictionPass() {
		SglangCacheAwarePolicy smg = SglangCacheAwarePolicy.modelGateway(PeerFixture.BLOCK, 0.3, 64, 1.5,
				4L * PeerFixture.BLOCK, java.time.Duration.ofSeconds(10));
		f.finish(smg, f.place(smg, f.request(prompt), "a", prompt.promptTokens()));
		PromptBlocks other = PeerFixture.prompt(5, 6, 7, 8);
		f.finish(smg, f.place(smg, f.request(other), "b", other.promptTokens()));
		// Between passes the tree grows past its bound of 4 blocks.
		assertThat(smg.treeBlocks("a")).isEqualTo(4);
		assertThat(smg.treeBlocks("b")).isEqualTo(4);
		f.now.addAndGet(10_000_000_000L);
		PromptBlocks third = PeerFixture.prompt(9, 10, 11, 12);
		f.finish(smg, f.place(smg, f.request(third), "b", third.promptTokens()));
		// The pass trimmed the least recently used 4 blocks, a's, before the insert.
		assertThat(smg.treeBlocks("a")).isZero();
		assertThat(smg.treeBlocks("b")).isEqualTo(8);
		Decision d = smg.choose(f.request(prompt), f.pool);
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		assertThat(d.cachedTokens()).isZero();
	}

	@Test
	void theModelGatewayRefusesANonPositiveEvictionInterval() {
		org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
			.isThrownBy(() -> SglangCacheAwarePolicy.modelGateway(PeerFixture.BLOCK, 0.3, 64, 1.5, 1 << 20,
					java.time.Duration.ZERO))
			.withMessageContaining("evictionInterval");
	}

}

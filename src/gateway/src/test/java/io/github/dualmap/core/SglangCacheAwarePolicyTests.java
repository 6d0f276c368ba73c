package io.github.dualmap.core;

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

}

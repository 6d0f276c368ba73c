package io.github.dualmap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DynamoCostPolicyTests {

	private final PeerFixture f = new PeerFixture("a", "b");

	private final DynamoCostPolicy policy = new DynamoCostPolicy();

	private final PromptBlocks prompt = PeerFixture.prompt(1, 2, 3, 4);

	@Test
	void cachedOverlapLowersThePrefillTerm() {
		f.finish(policy, f.place(policy, f.request(prompt), "a", prompt.promptTokens()));
		// a: 1 x (0 + 1) / 16 + 4 = 4.06; b: 1 x 64 / 16 + 4 = 8.
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("a");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(d.uncachedTokens()).isEqualTo(1);
	}

	@Test
	void activeDecodeBlocksPushTheRequestAway() {
		f.finish(policy, f.place(policy, f.request(prompt), "a", prompt.promptTokens()));
		for (long base = 10; base < 40; base += 10) {
			f.place(policy, f.request(PeerFixture.prompt(base, base + 1, base + 2, base + 3)), "a", 0);
		}
		assertThat(policy.activeBlocks("a")).isEqualTo(12);
		// a: 0.06 + 12 + 4 = 16.06; b: 4 + 4 = 8.
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		assertThat(d.cachedTokens()).isZero();
	}

	@Test
	void activePrefillTokensCountUntilTheFirstToken() {
		PeerFixture.Routed big = f.place(policy, f.unparsed(), "a", 200);
		// a: (200 + 64) / 16 = 16.5 against b's 4 + 4.
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("b");
		big.handle().firstToken();
		f.place(policy, f.unparsed(), "b", 0);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isIn("a", "b");
	}

	@Test
	void sharedPrefixBlocksOfActiveRequestsCountOnce() {
		f.place(policy, f.request(prompt), "a", 0);
		f.place(policy, f.request(PeerFixture.prompt(1, 2, 3, 9)), "a", 0);
		assertThat(policy.activeBlocks("a")).isEqualTo(5);
	}

	@Test
	void finishedRequestsReleaseTheirBlocks() {
		PeerFixture.Routed r = f.place(policy, f.request(prompt), "a", 0);
		f.finish(policy, r);
		assertThat(policy.activeBlocks("a")).isZero();
		// Finishing twice is harmless.
		policy.onFinished(r.request(), "a", f.pool);
		assertThat(policy.activeBlocks("a")).isZero();
	}

	@Test
	void anUnparsedBodyGoesToTheLowestActiveLoad() {
		f.place(policy, f.request(prompt), "a", 0);
		Decision d = policy.choose(f.unparsed(), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
	}

	@Test
	void skipsInstancesThatDoNotAcceptWorkAndForgetsRemovedOnes() {
		f.finish(policy, f.place(policy, f.request(prompt), "a", prompt.promptTokens()));
		f.place(policy, f.request(PeerFixture.prompt(7)), "a", 0);
		f.instance("a").draining(true);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("b");
		f.members("b");
		policy.onMembershipChanged(f.pool);
		assertThat(policy.activeBlocks("a")).isZero();
	}

}

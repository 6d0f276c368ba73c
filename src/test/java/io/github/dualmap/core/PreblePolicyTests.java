package io.github.dualmap.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PreblePolicyTests {

	private final PeerFixture f = new PeerFixture("a", "b");

	private final PreblePolicy policy = new PreblePolicy(Duration.ofSeconds(10), 1000);

	private final PromptBlocks prompt = PeerFixture.prompt(1, 2, 3, 4);

	@Test
	void exploitsAnInstanceHoldingMoreCachedThanNewTokensEvenWhenBusier() {
		f.place(policy, f.request(prompt), "a", prompt.promptTokens());
		f.busy(policy, "a", 3);
		f.now.addAndGet(Duration.ofSeconds(1).toNanos());
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("a");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(d.cachedTokens()).isEqualTo(prompt.tokensFor(4));
	}

	@Test
	void exploresTheLightestInstanceWhenTheMatchIsShort() {
		f.place(policy, f.request(prompt), "a", prompt.promptTokens());
		f.now.addAndGet(Duration.ofSeconds(1).toNanos());
		// One block of four shared: 16 cached < 48 new.
		Decision d = policy.choose(f.request(PeerFixture.prompt(1, 7, 8, 9)), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		assertThat(policy.loadNanos("a", f.now.get())).isEqualTo(Duration.ofSeconds(1).toNanos());
	}

	@Test
	void loadOutsideTheWindowIsForgotten() {
		f.finish(policy, f.place(policy, f.request(prompt), "a", prompt.promptTokens()));
		f.place(policy, f.unparsed(), "a", 0);
		f.now.addAndGet(Duration.ofSeconds(2).toNanos());
		assertThat(policy.loadNanos("a", f.now.get())).isPositive();
		assertThat(policy.choose(f.unparsed(), f.pool).instanceId()).isEqualTo("b");
		f.now.addAndGet(Duration.ofSeconds(11).toNanos());
		assertThat(policy.loadNanos("a", f.now.get())).isZero();
	}

	@Test
	void anUnparsedBodyGoesToTheLeastLoad() {
		f.place(policy, f.unparsed(), "b", 0);
		f.now.addAndGet(Duration.ofSeconds(1).toNanos());
		Decision d = policy.choose(f.unparsed(), f.pool);
		assertThat(d.instanceId()).isEqualTo("a");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
	}

	@Test
	void skipsInstancesThatDoNotAcceptWorkAndForgetsRemovedOnes() {
		f.place(policy, f.request(prompt), "a", prompt.promptTokens());
		f.now.addAndGet(Duration.ofSeconds(1).toNanos());
		f.instance("a").healthy(false);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("b");
		f.members("b");
		policy.onMembershipChanged(f.pool);
		assertThat(policy.loadNanos("a", f.now.get())).isZero();
	}

}

package io.github.dualmap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class BoundedLoadConsistentHashPolicyTests {

	private final PeerFixture f = new PeerFixture("a", "b", "c");

	private final BoundedLoadConsistentHashPolicy policy = new BoundedLoadConsistentHashPolicy();

	private final PromptBlocks prompt = PeerFixture.prompt(11, 12, 13);

	@Test
	void aKeyStaysOnItsHomeWhileLoadIsWithinBound() {
		PeerFixture.Routed first = f.route(policy, f.request(prompt));
		String home = first.decision().instanceId();
		// Still in flight, it would fill the home: ceil(1.25 x 2 / 3) = 1.
		f.finish(policy, first);
		PeerFixture.Routed again = f.route(policy, f.request(prompt));
		assertThat(again.decision().instanceId()).isEqualTo(home);
		assertThat(again.decision().reason()).isEqualTo(Reason.AFFINITY);
		// The pool's shadow index saw the first dispatch: reported, not used to choose.
		assertThat(again.decision().cachedTokens()).isEqualTo(prompt.tokensFor(3));
	}

	@Test
	void spillsClockwiseOnceTheHomeReachesCTimesTheMeanLoad() {
		PeerFixture two = new PeerFixture("a", "b");
		String home = policy.choose(two.request(prompt), two.pool).instanceId();
		String other = home.equals("a") ? "b" : "a";
		// One in flight: capacity ceil(1.25 x 2 / 2) = 2, the home still fits.
		two.busy(policy, home, 1);
		assertThat(policy.choose(two.request(prompt), two.pool).instanceId()).isEqualTo(home);
		// Two in flight: capacity ceil(1.25 x 3 / 2) = 2, the home is full.
		two.busy(policy, home, 1);
		Decision spilled = policy.choose(two.request(prompt), two.pool);
		assertThat(spilled.instanceId()).isEqualTo(other);
		assertThat(spilled.reason()).isEqualTo(Reason.LOAD);
	}

	@Test
	void skipsInstancesThatDoNotAcceptWork() {
		String home = policy.choose(f.request(prompt), f.pool).instanceId();
		f.instance(home).draining(true);
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isNotEqualTo(home);
		f.pool.instances().forEach(s -> s.healthy(false));
		assertThat(policy.choose(f.request(prompt), f.pool)).isNull();
	}

	@Test
	void anUnparsedBodyGoesToTheLeastLoaded() {
		f.busy(policy, "a", 2);
		f.busy(policy, "c", 1);
		Decision d = policy.choose(f.unparsed(), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
	}

	@Test
	void aRemovedHomeHandsItsKeysToTheNextInstance() {
		String home = policy.choose(f.request(prompt), f.pool).instanceId();
		f.members(f.pool.instances()
			.stream()
			.map(InstanceState::id)
			.filter(id -> !id.equals(home))
			.toArray(String[]::new));
		policy.onMembershipChanged(f.pool);
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isNotEqualTo(home);
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
	}

	@Test
	void rejectsABalanceFactorBelowOne() {
		assertThatIllegalArgumentException().isThrownBy(() -> new BoundedLoadConsistentHashPolicy(0.9))
			.withMessageContaining("0.9");
	}

}

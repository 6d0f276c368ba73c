package io.github.dualmap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SmgKvPolicyTests {

	private final PeerFixture f = new PeerFixture("a", "b", "c");

	private final KvEventIndex index = new KvEventIndex();

	private final KvEventFeed feed = new KvEventFeed(index, r -> r.blocks() == null ? null : r.blocks().chain(),
			PeerFixture.BLOCK, 64);

	private final SmgKvPolicy policy = new SmgKvPolicy();

	private final PromptBlocks prompt = PeerFixture.prompt(1, 2, 3, 4);

	SmgKvPolicyTests() {
		policy.attach(feed);
		policy.onMembershipChanged(f.pool);
	}

	private void stored(String instance, long... hashes) {
		for (long h : hashes) {
			index.stored(instance, h);
		}
	}

	@Test
	void theMostCachedBlocksWinWithNoThresholdOnTheShare() {
		stored("a", 1);
		stored("b", 1, 2);
		// Two blocks of ten: below the approximate path's 0.3 match threshold, but the
		// event path has no threshold.
		Decision d = policy.choose(f.request(PeerFixture.prompt(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(d.cachedTokens()).isEqualTo(2 * PeerFixture.BLOCK);
	}

	@Test
	void equalOverlapGoesToTheLowerInFlightCount() {
		stored("a", 1, 2);
		stored("b", 1, 2);
		f.busy(policy, "a", 2);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("b");
	}

	@Test
	void noOverlapGoesToTheLeastLoadedThenTheOneSelectedFewerTimes() {
		f.busy(policy, "a", 1);
		// b and c idle and never selected: the first of them.
		PeerFixture.Routed first = f.route(policy, f.request(PeerFixture.prompt(9)));
		assertThat(first.decision().instanceId()).isEqualTo("b");
		f.finish(policy, first);
		// a has one in flight; b and c none, b was selected once, c never.
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("c");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		assertThat(d.cachedTokens()).isZero();
	}

	@Test
	void theWinnerSpillsToTheLeastLoadedPastBothMargins() {
		stored("a", 1, 2, 3, 4);
		// a 90, b 0, c 0: above 1.5 x 30 but not above 30 + 64.
		f.busy(policy, "a", 90);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("a");
		// a 100: above both; b and c are idle and never selected, b comes first.
		f.busy(policy, "a", 10);
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		assertThat(d.cachedTokens()).isZero();
	}

	@Test
	void anUnparsedBodyAndARemovedInstance() {
		stored("a", 1, 2, 3, 4);
		f.busy(policy, "b", 1);
		Decision unparsed = policy.choose(f.unparsed(), f.pool);
		assertThat(unparsed.instanceId()).isIn("a", "c");
		assertThat(unparsed.reason()).isEqualTo(Reason.LOAD);
		f.members("b", "c");
		policy.onMembershipChanged(f.pool);
		assertThat(index.blocks("a")).isZero();
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("c");
	}

	@Test
	void refusesToRouteWithoutEventsAndBadThresholds() {
		assertThatThrownBy(() -> new SmgKvPolicy().choose(f.request(prompt), f.pool))
			.isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("KV events");
		assertThatIllegalArgumentException().isThrownBy(() -> new SmgKvPolicy(-1, 1.5));
		assertThatIllegalArgumentException().isThrownBy(() -> new SmgKvPolicy(64, 0.5));
	}

}

package io.github.dualmap.core;

import java.util.HashSet;
import java.util.Set;

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
	void noOverlapGoesToTheFewestInFlightTiesByRequestWhileNoLoadIsPolled() {
		f.busy(policy, "a", 1);
		// b and c idle: a hash of the request id picks, so requests spread over both.
		Set<String> picks = new HashSet<>();
		for (int i = 0; i < 16; i++) {
			Decision d = policy.choose(f.request(PeerFixture.prompt(9)), f.pool);
			assertThat(d.reason()).isEqualTo(Reason.LOAD);
			assertThat(d.cachedTokens()).isZero();
			picks.add(d.instanceId());
		}
		assertThat(picks).containsExactlyInAnyOrder("b", "c");
	}

	@Test
	void noOverlapGoesByExpectedWaitCreditingThePromptTokens() {
		f.scrape("a", 0, 0.5);
		f.scrape("b", 0, 0);
		f.scrape("c", 0, 0.2);
		// b scores 0; the gRPC path credits it the prompt's 16 tokens (0.008 s), still
		// below c's 0.0375 s: 1024 tokens, the HTTP path's guess, would have sent the
		// second request to c.
		assertThat(policy.choose(f.request(PeerFixture.prompt(9)), f.pool).instanceId()).isEqualTo("b");
		assertThat(policy.choose(f.request(PeerFixture.prompt(10)), f.pool).instanceId()).isEqualTo("b");
	}

	@Test
	void theWinnerSpillsPastBothMargins() {
		stored("a", 1, 2, 3, 4);
		// a 90, b 0, c 0: above 1.5 x 30 but not above 30 + 64.
		f.busy(policy, "a", 90);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("a");
		// a 100: above both; every worker is a candidate, and the idle b and c tie.
		f.busy(policy, "a", 10);
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isIn("b", "c");
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

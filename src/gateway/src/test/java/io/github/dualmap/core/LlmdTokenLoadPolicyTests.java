package io.github.dualmap.core;

import java.util.HashSet;
import java.util.Set;
import java.util.stream.LongStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class LlmdTokenLoadPolicyTests {

	private final PeerFixture f = new PeerFixture("a", "b", "c");

	private final LlmdTokenLoadPolicy policy = new LlmdTokenLoadPolicy(f.settings);

	private final PromptBlocks prompt = PeerFixture.prompt(1, 2, 3, 4);

	@Test
	void anInstanceHoldingMostOfThePromptIsTheOnlyCandidateWhileItsWaitIsWithinThePenalty() {
		f.place(policy, f.request(prompt), "b", prompt.promptTokens());
		PromptBlocks other = PeerFixture.prompt(9, 10);
		f.place(policy, f.request(other), "b", other.promptTokens());
		// b has 96 tokens in flight and holds the whole prompt (96 + 0); a would have
		// 0 + 64, but only b passes the filter.
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(d.cachedTokens()).isEqualTo(prompt.tokensFor(4));
		assertThat(d.uncachedTokens()).isEqualTo(prompt.promptTokens() - prompt.tokensFor(4));
	}

	@Test
	void belowTheAffinityThresholdTheFewestTokensInFlightWinCountingTheRequestsOwnUncachedTokens() {
		PeerFixture.Routed first = f.place(policy, f.request(prompt), "b", prompt.promptTokens());
		// 3 of 4 blocks held on b: 0.75, below 0.80. b: 64 in flight + 16 uncached;
		// a and c: 0 + 64.
		PromptBlocks partly = PeerFixture.prompt(1, 2, 3, 9);
		Decision d = policy.choose(f.request(partly), f.pool);
		assertThat(d.instanceId()).isIn("a", "c");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		assertThat(d.uncachedTokens()).isEqualTo(64);
		// Its first token releases b's 64 tokens: b now scores 0 + 16.
		first.handle().firstToken();
		Decision after = policy.choose(f.request(partly), f.pool);
		assertThat(after.instanceId()).isEqualTo("b");
		assertThat(after.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(after.uncachedTokens()).isEqualTo(16);
	}

	@Test
	void stickinessBreaksWhenTheHoldersWaitExceedsTheOthersByMoreThanEighteenSeconds() {
		f.place(policy, f.request(prompt), "b", prompt.promptTokens()).handle().firstToken();
		// 17,500 blocks of 16 tokens in prefill on b: 280,000 tokens, 17.6 s at 15,928
		// tokens/s: within the penalty, b stays the only candidate.
		PromptBlocks longPrompt = PeerFixture.prompt(LongStream.range(1_000, 18_500).toArray());
		f.place(policy, f.request(longPrompt), "b", longPrompt.promptTokens());
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("b");
		// 2,500 blocks more: 320,000 tokens, 20.1 s: every instance is a candidate and
		// the token load sends it elsewhere.
		PromptBlocks more = PeerFixture.prompt(LongStream.range(20_000, 22_500).toArray());
		f.place(policy, f.request(more), "b", more.promptTokens());
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isIn("a", "c");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
	}

	@Test
	void withReplicaSyncThePeersPublishedInFlightTokensCountToo() {
		f.place(policy, f.request(PeerFixture.prompt(7)), "a", 16);
		f.place(policy, f.request(PeerFixture.prompt(8)), "b", 16);
		// c carries nothing of this router's, but its peers published 32 tokens in
		// prefill there: a and b tie at 16 + 64, c is the busiest at 32 + 64.
		f.instance("c").peerLoad(1, 32, 0);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isIn("a", "b");
		f.instance("c").peerLoad(0, 0, 0);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("c");
	}

	@Test
	void tokenLoadsAboveTheScorersThresholdScoreAlike() {
		// a and b each above 4,194,304 tokens in flight (c is not accepting work): both
		// score 0, so the tie spreads by request although a carries more.
		f.instance("c").draining(true);
		f.pool.dispatch(f.unparsed(), new Decision("a", Reason.LOAD, 0, 5_000_000, -1));
		f.pool.dispatch(f.unparsed(), new Decision("b", Reason.LOAD, 0, 4_200_000, -1));
		Set<String> picks = new HashSet<>();
		for (int i = 0; i < 16; i++) {
			picks.add(policy.choose(f.request(PeerFixture.prompt(100 + i)), f.pool).instanceId());
		}
		assertThat(picks).containsExactlyInAnyOrder("a", "b");
	}

	@Test
	void anUnparsedBodyGoesToTheFewestTokensInFlight() {
		f.place(policy, f.request(prompt), "a", prompt.promptTokens());
		f.place(policy, f.request(PeerFixture.prompt(7)), "c", 16);
		Decision d = policy.choose(f.unparsed(), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
	}

	@Test
	void onlyTheConsideredPrefixEntersTheIndexAndARemovedInstanceTakesItsIndexAlong() {
		// 131,072 tokens are considered: 8,192 blocks of 16.
		PromptBlocks longPrompt = PeerFixture.prompt(LongStream.range(1_000, 11_000).toArray());
		f.place(policy, f.request(longPrompt), "a", longPrompt.promptTokens());
		assertThat(policy.indexBlocks("a")).isEqualTo(8_192);
		f.members("b", "c");
		policy.onMembershipChanged(f.pool);
		assertThat(policy.indexBlocks("a")).isZero();
	}

	@Test
	void skipsInstancesThatDoNotAcceptWork() {
		f.place(policy, f.request(prompt), "a", prompt.promptTokens());
		f.instance("a").healthy(false);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isIn("b", "c");
		f.instance("b").draining(true);
		f.instance("c").draining(true);
		assertThat(policy.choose(f.request(prompt), f.pool)).isNull();
	}

}

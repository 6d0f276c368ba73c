package io.github.dualmap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class LlmdScorerPolicyTests {

	private final PeerFixture f = new PeerFixture("a", "b", "c");

	private final LlmdScorerPolicy policy = new LlmdScorerPolicy(f.settings);

	private final PromptBlocks prompt = PeerFixture.prompt(1, 2, 3, 4);

	@Test
	void scorersFollowTheUpstreamFormulas() {
		EngineSnapshot busy = new EngineSnapshot(0, 10, 0, 0.75, -1, -1, 0);
		EngineSnapshot idle = new EngineSnapshot(0, 2, 0, 0.25, -1, -1, 0);
		assertThat(LlmdScorerPolicy.queueScore(busy, 2, 10)).isZero();
		assertThat(LlmdScorerPolicy.queueScore(idle, 2, 10)).isEqualTo(1.0);
		assertThat(LlmdScorerPolicy.queueScore(idle, 2, 2)).isEqualTo(1.0);
		assertThat(LlmdScorerPolicy.kvCacheScore(busy)).isEqualTo(0.25);
		assertThat(LlmdScorerPolicy.queueScore(null, 2, 10)).isEqualTo(0.5);
		assertThat(LlmdScorerPolicy.kvCacheScore(new EngineSnapshot(0, 1, 0, Double.NaN, -1, -1, 0))).isEqualTo(0.5);
	}

	@Test
	void coldRequestsGoToTheInstanceThatLeastRecentlyTookOneAndWarmOnesIgnoreTheOrder() {
		// The optimized-baseline profile: with even load, each request no index holds a
		// block of goes first to the instances that never took one, in instance order,
		// then to the one that took one least recently.
		LlmdScorerPolicy lru = LlmdScorerPolicy.optimizedBaseline(PeerFixture.BLOCK);
		scrapeAll(0, 0.2);
		java.util.List<String> cold = new java.util.ArrayList<>();
		for (int i = 0; i < 6; i++) {
			cold.add(f.route(lru, f.request(PeerFixture.prompt(100 + i))).decision().instanceId());
		}
		assertThat(cold).containsExactly("a", "b", "c", "a", "b", "c");
		// A request some index holds a block of scores 0.5 everywhere on that scorer: it
		// follows its prefix (c took block 105), not the order (a is next for a cold
		// one).
		Decision warm = lru.choose(f.request(PeerFixture.prompt(105, 7)), f.pool);
		assertThat(warm.instanceId()).isEqualTo("c");
		assertThat(warm.reason()).isEqualTo(Reason.AFFINITY);
	}

	@Test
	void theInstanceItRoutedThePrefixToWinsWhenLoadIsEven() {
		scrapeAll(0, 0.2);
		f.place(policy, f.request(prompt), "c", prompt.promptTokens());
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("c");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(d.cachedTokens()).isEqualTo(prompt.tokensFor(4));
	}

	@Test
	void aLongQueueAndFullCacheOutweighTheFullPrefixScore() {
		f.place(policy, f.request(prompt), "a", prompt.promptTokens());
		// a: 2 x 0 + 2 x 0.1 + 3 x 1 = 3.2; b: 2 x 1 + 2 x 0.9 = 3.8; c: 2 x 0.5 + 2 x
		// 0.5 = 2.
		f.scrape("a", 10, 0.9);
		f.scrape("b", 0, 0.1);
		f.scrape("c", 5, 0.5);
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		assertThat(d.cachedTokens()).isZero();
	}

	@Test
	void aSharedFirstBlockCountsAgainstTheConsideredPrefixNotTheWholePrompt() {
		// Scorer matching at most 4 blocks. Every prompt starts with block 1 (a shared
		// system prompt); a served one, b and c none. For a 32-block prompt the shared
		// block is 1 of the 4 blocks considered: a scores 2 x 1 + 2 x 0.85 + 3 x 1/4 =
		// 4.45 and wins over the idle b and c (2 + 2 = 4), though it holds 1/32 of the
		// prompt. Matching the whole prompt, a would score 3.7 + 3/32 and lose.
		long[] chain = new long[32];
		for (int i = 0; i < chain.length; i++) {
			chain[i] = i == 0 ? 1 : 1000 + i;
		}
		PromptBlocks longPrompt = PeerFixture.prompt(chain);
		LlmdScorerPolicy capped = new LlmdScorerPolicy(PeerFixture.BLOCK, 2, 2, 3, 4 * PeerFixture.BLOCK, 1 << 20);
		LlmdScorerPolicy whole = new LlmdScorerPolicy(PeerFixture.BLOCK, 2, 2, 3, 32 * PeerFixture.BLOCK, 1 << 20);
		for (LlmdScorerPolicy p : java.util.List.of(capped, whole)) {
			f.place(p, f.request(PeerFixture.prompt(1, 2)), "a", 0);
		}
		f.scrape("a", 0, 0.15);
		f.scrape("b", 0, 0.0);
		f.scrape("c", 0, 0.0);
		Decision d = capped.choose(f.request(longPrompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("a");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(whole.choose(f.request(longPrompt), f.pool).instanceId()).isIn("b", "c");
	}

	@Test
	void withoutALimitThePrefixScorerMatchesTheWholePrompt() {
		// A prompt of 300 blocks, placed on a: the default scorer indexes and matches its
		// first 256 blocks (4,096 tokens), the unlimited one all 300.
		long[] chain = new long[300];
		for (int i = 0; i < chain.length; i++) {
			chain[i] = i + 1;
		}
		PromptBlocks longPrompt = PeerFixture.prompt(chain);
		LlmdScorerPolicy whole = new LlmdScorerPolicy(PeerFixture.BLOCK, 2, 2, 3, Integer.MAX_VALUE, 1 << 20);
		scrapeAll(0, 0.2);
		for (LlmdScorerPolicy p : java.util.List.of(policy, whole)) {
			f.place(p, f.request(longPrompt), "a", longPrompt.promptTokens());
		}
		assertThat(policy.indexBlocks("a")).isEqualTo(256);
		assertThat(whole.indexBlocks("a")).isEqualTo(300);
		Decision capped = policy.choose(f.request(longPrompt), f.pool);
		Decision all = whole.choose(f.request(longPrompt), f.pool);
		assertThat(capped.instanceId()).isEqualTo("a");
		assertThat(capped.cachedTokens()).isEqualTo(longPrompt.tokensFor(256));
		assertThat(all.instanceId()).isEqualTo("a");
		assertThat(all.cachedTokens()).isEqualTo(longPrompt.tokensFor(300));
	}

	@Test
	void withPrefixWeightZeroLoadAloneDecides() {
		// a holds the whole prompt but uses more of its cache: by default a scores 2 x 1
		// +
		// 2 x 0.7 + 3 x 1 = 6.4 against b's 2 + 2 x 0.9 = 3.8; with the prefix weight 0
		// a's
		// 3.4 loses to b.
		LlmdScorerPolicy noPrefix = new LlmdScorerPolicy(PeerFixture.BLOCK, 2, 2, 0, 4096, 1 << 20);
		for (LlmdScorerPolicy p : java.util.List.of(policy, noPrefix)) {
			f.place(p, f.request(prompt), "a", prompt.promptTokens());
		}
		f.scrape("a", 0, 0.3);
		f.scrape("b", 0, 0.1);
		f.scrape("c", 0, 0.2);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("a");
		Decision d = noPrefix.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
	}

	@Test
	void staleOrFailedScrapesScoreNeutralNotSaturated() {
		f.scrape("a", 50, 1.0);
		f.now.addAndGet(f.settings.staleAfterNanos() + 1);
		f.scrape("b", 0, 1.0);
		f.scrape("c", 10, 0.1);
		// a (stale): 2 x 0.5 + 2 x 0.5 = 2; b: 2 x 1 + 2 x 0 = 2; c: 2 x 0 + 2 x 0.9 =
		// 1.8.
		// Read as saturated, a would score 0 and lose to c.
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isIn("a", "b");
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isIn("a", "b");
		// A failed scrape is unknown too, even with a young snapshot.
		f.scrape("a", 50, 1.0);
		f.instance("a").markEngineUnknown();
		f.instance("b").healthy(false);
		// With b gone c alone is fresh: queue 1 -> 2 + 1.8 = 3.8 against a's neutral 2.
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("c");
		f.scrape("c", 10, 1.0);
		// c: 2 + 0 = 2 ties the unknown a; a stays in the running.
		assertThat(java.util.stream.IntStream.range(0, 4)
			.mapToObj(i -> policy.choose(f.request(prompt), f.pool).instanceId())
			.toList()).contains("a", "c");
	}

	@Test
	void skipsInstancesThatDoNotAcceptWork() {
		scrapeAll(0, 0.2);
		f.place(policy, f.request(prompt), "a", prompt.promptTokens());
		f.instance("a").healthy(false);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isNotEqualTo("a");
	}

	@Test
	void anUnparsedBodyIsScoredOnQueueAndCacheUtilisationAlone() {
		f.scrape("a", 3, 0.5);
		f.scrape("b", 0, 0.4);
		f.scrape("c", 3, 0.1);
		Decision d = policy.choose(f.unparsed(), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
	}

	@Test
	void thePrefixIndexIsBoundedAndForgetsLeastRecentlyUsedBlocks() {
		LlmdScorerPolicy small = new LlmdScorerPolicy(PeerFixture.BLOCK, 2, 2, 3, 4096, 4L * PeerFixture.BLOCK);
		scrapeAll(0, 0.2);
		f.place(small, f.request(prompt), "a", prompt.promptTokens());
		f.place(small, f.request(PeerFixture.prompt(5, 6, 7, 8)), "a", prompt.promptTokens());
		assertThat(small.indexBlocks("a")).isEqualTo(4);
		assertThat(small.choose(f.request(prompt), f.pool).cachedTokens()).isZero();
	}

	@Test
	void theIndexFollowsTheEnginesScrapedCapacity() {
		f.instance("a").updateEngine(new EngineSnapshot(f.now.get(), 0, 0, 0.1, -1, -1, 2L * PeerFixture.BLOCK));
		f.place(policy, f.request(prompt), "a", prompt.promptTokens());
		assertThat(policy.indexBlocks("a")).isEqualTo(2);
	}

	@Test
	void aRemovedInstanceTakesItsIndexAlong() {
		f.place(policy, f.request(prompt), "a", prompt.promptTokens());
		f.members("b", "c");
		policy.onMembershipChanged(f.pool);
		assertThat(policy.indexBlocks("a")).isZero();
	}

	private void scrapeAll(int waiting, double kvUsage) {
		for (InstanceState s : f.pool.instances()) {
			f.scrape(s.id(), waiting, kvUsage);
		}
	}

}

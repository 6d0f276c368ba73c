package io.github.dualmap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class GlobalMinTtftPolicyTests {

	private final PeerFixture f = new PeerFixture("a", "b", "c");

	private final GlobalMinTtftPolicy policy = new GlobalMinTtftPolicy();

	private final PromptBlocks prompt = PeerFixture.prompt(1, 2, 3, 4);

	@Test
	void theCachedPrefixGivesTheLowestEstimate() {
		f.finish(policy, f.place(policy, f.request(prompt), "b", prompt.promptTokens()));
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(d.ttftEstimateNanos()).isEqualTo(f.pool.estimateTtft(f.instance("b"), prompt.promptTokens() - 1, 1));
	}

	@Test
	void pendingWorkOutweighsTheCache() {
		f.finish(policy, f.place(policy, f.request(prompt), "b", prompt.promptTokens()));
		f.place(policy, f.unparsed(), "b", 10_000);
		f.place(policy, f.unparsed(), "a", 100);
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("c");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		assertThat(d.ttftEstimateNanos()).isEqualTo(f.pool.estimateTtft(f.instance("c"), 0, prompt.promptTokens()));
	}

	@Test
	void aStaleScrapedQueueIsUnknownNotSaturated() {
		f.finish(policy, f.place(policy, f.request(prompt), "b", prompt.promptTokens()));
		f.scrape("b", 1_000, 0.9);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isNotEqualTo("b");
		f.now.addAndGet(f.settings.staleAfterNanos() + 1);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("b");
	}

	@Test
	void skipsInstancesThatDoNotAcceptWorkAndRoutesUnparsedBodiesByLoad() {
		f.finish(policy, f.place(policy, f.request(prompt), "b", prompt.promptTokens()));
		f.instance("b").healthy(false);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isNotEqualTo("b");
		f.place(policy, f.unparsed(), "a", 100);
		Decision d = policy.choose(f.unparsed(), f.pool);
		assertThat(d.instanceId()).isEqualTo("c");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
	}

}

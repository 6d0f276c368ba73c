package io.github.dualmap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class LlmdPrecisePolicyTests {

	private final PeerFixture f = new PeerFixture("a", "b", "c");

	private final KvEventIndex index = new KvEventIndex();

	private final LlmdPrecisePolicy policy = new LlmdPrecisePolicy();

	private final PromptBlocks prompt = PeerFixture.prompt(1, 2, 3, 4);

	LlmdPrecisePolicyTests() {
		policy
			.attach(new KvEventFeed(index, r -> r.blocks() == null ? null : r.blocks().chain(), PeerFixture.BLOCK, 64));
	}

	private void stored(String instance, long... hashes) {
		for (long h : hashes) {
			index.stored(instance, h);
		}
	}

	private void idle(String... ids) {
		for (String id : ids) {
			f.scrape(id, 0, 0.1);
		}
	}

	@Test
	void thePrefixScoreIsTheCachedShareOfThePromptsBlocks() {
		assertThat(LlmdPrecisePolicy.prefixScore(0, 4)).isZero();
		assertThat(LlmdPrecisePolicy.prefixScore(1, 4)).isEqualTo(0.25);
		assertThat(LlmdPrecisePolicy.prefixScore(4, 4)).isEqualTo(1.0);
		// Never above 1, and 0 for a prompt without a full block.
		assertThat(LlmdPrecisePolicy.prefixScore(5, 4)).isEqualTo(1.0);
		assertThat(LlmdPrecisePolicy.prefixScore(1, 0)).isZero();
	}

	@Test
	void theInstanceHoldingTheLongestCachedPrefixWinsWhenLoadIsEqual() {
		idle("a", "b", "c");
		stored("a", 1, 2);
		stored("b", 1, 2, 3, 4);
		Decision d = policy.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(d.cachedTokens()).isEqualTo(64);
	}

	@Test
	void aSharedFirstBlockAloneDoesNotOutweighFreeCache() {
		// Every prompt starts with block 1 (a shared system prompt); a and b hold only
		// that block, c never served the prompt. A min-max normalisation would give a and
		// b the full prefix score 1 (x 2) against c's 0; the share of the prompt cached
		// is 1/8: a and b score 2 x 1/8 + 1 x 1 + 1 x 0.7 = 1.95, the idle c 1 + 1 = 2.
		PromptBlocks longPrompt = sharedFirstBlockOnly();
		Decision d = policy.choose(f.request(longPrompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("c");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		assertThat(d.cachedTokens()).isZero();
	}

	@Test
	void theCachedShareIsWeighedAgainstLoad() {
		// b holds the whole prompt but has the longest queue and a full cache: prefix
		// 2 x 1 + queue 1 x 0 + kv 1 x 0 = 2, just above the idle a: 0 + 1 x 1 + 1 x 0.9
		// = 1.9 (c: 0 + 1 x 0.5 + 1 x 0.9 = 1.4). Once a holds half of the prompt, a
		// wins: 2 x 0.5 + 1.9 = 2.9.
		f.scrape("a", 0, 0.1);
		f.scrape("b", 8, 1.0);
		f.scrape("c", 4, 0.1);
		stored("b", 1, 2, 3, 4);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("b");
		stored("a", 1, 2);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("a");
	}

	@Test
	void flowControlHoldsWhileTheMeanSaturationReachesOne() {
		assertThat(policy.mustHold(f.pool)).as("no metrics yet: every instance counts as saturated").isTrue();
		// Per instance max(waiting / 5, kv / 0.8): a 0.25, b 1.2 (queue), c 1.25
		// (memory):
		// mean 0.9, below 1.
		f.scrape("a", 0, 0.2);
		f.scrape("b", 6, 0.1);
		f.scrape("c", 0, 1.0);
		assertThat(policy.saturation(f.pool.acceptingInstances(), f.pool)).isCloseTo(0.9, within(1e-9));
		assertThat(policy.mustHold(f.pool)).isFalse();
		// a at 0.8 KV usage: 1.0 + 1.2 + 1.25, mean 1.15: hold, although a's queue is
		// empty.
		f.scrape("a", 0, 0.8);
		assertThat(policy.mustHold(f.pool)).isTrue();
		// Metrics older than 200 ms count as saturated.
		f.scrape("a", 0, 0.0);
		f.scrape("b", 0, 0.0);
		f.scrape("c", 0, 0.0);
		assertThat(policy.mustHold(f.pool)).isFalse();
		f.now.addAndGet(LlmdPrecisePolicy.DEFAULT_METRICS_STALENESS_NANOS + 1);
		assertThat(policy.saturation(f.pool.acceptingInstances(), f.pool)).isEqualTo(1.0);
		assertThat(policy.mustHold(f.pool)).isTrue();
	}

	/**
	 * A prompt of eight blocks whose first block alone a and b hold (KV usage 0.3 each),
	 * with c idle and empty.
	 */
	private PromptBlocks sharedFirstBlockOnly() {
		f.scrape("a", 0, 0.3);
		f.scrape("b", 0, 0.3);
		f.scrape("c", 0, 0.0);
		stored("a", 1);
		stored("b", 1);
		return PeerFixture.prompt(1, 12, 13, 14, 15, 16, 17, 18);
	}

	@Test
	void minMaxScoresGiveEveryInstanceWithTheSharedFirstBlockTheFullPrefixWeight() {
		// The case above under min-max scores and weights 3 / 2 / 2: a and b hold the
		// only hit, 1 block each, so both score 1: 3 x 1 + 2 x 1 + 2 x 0.7 = 6.4 against
		// the idle c's 2 + 2 = 4.
		LlmdPrecisePolicy minMax = LlmdPrecisePolicy.minMax();
		minMax
			.attach(new KvEventFeed(index, r -> r.blocks() == null ? null : r.blocks().chain(), PeerFixture.BLOCK, 64));
		PromptBlocks longPrompt = sharedFirstBlockOnly();
		Decision d = minMax.choose(f.request(longPrompt), f.pool);
		assertThat(d.instanceId()).isIn("a", "b");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(policy.choose(f.request(longPrompt), f.pool).instanceId()).isEqualTo("c");
	}

	@Test
	void theMinMaxScoreSpansTheInstancesWithAHit() {
		assertThat(LlmdPrecisePolicy.minMaxPrefixScore(0, 2, 6)).isZero();
		assertThat(LlmdPrecisePolicy.minMaxPrefixScore(2, 2, 6)).isZero();
		assertThat(LlmdPrecisePolicy.minMaxPrefixScore(3, 2, 6)).isEqualTo(0.25);
		assertThat(LlmdPrecisePolicy.minMaxPrefixScore(6, 2, 6)).isEqualTo(1.0);
		// Equal hits, however small: the full score.
		assertThat(LlmdPrecisePolicy.minMaxPrefixScore(1, 1, 1)).isEqualTo(1.0);
	}

	@Test
	void withoutFlowControlNothingIsHeld() {
		LlmdPrecisePolicy open = LlmdPrecisePolicy.withoutFlowControl();
		// No metrics yet, then every instance saturated by its queue.
		assertThat(policy.mustHold(f.pool)).isTrue();
		assertThat(open.mustHold(f.pool)).isFalse();
		f.scrape("a", 10, 0.9);
		f.scrape("b", 10, 0.9);
		f.scrape("c", 10, 0.9);
		assertThat(policy.mustHold(f.pool)).isTrue();
		assertThat(open.mustHold(f.pool)).isFalse();
	}

	@Test
	void withoutAFeedItRefusesToRoute() {
		assertThatThrownBy(() -> new LlmdPrecisePolicy().choose(f.request(prompt), f.pool))
			.isInstanceOf(IllegalStateException.class);
		assertThatThrownBy(() -> new LlmdPrecisePolicy(2, 1, 1, 5, 1.5, 1))
			.hasMessageContaining("kvCacheUtilThreshold");
		assertThatThrownBy(() -> new LlmdPrecisePolicy(2, 1, 1, 0, 0.8, 1)).hasMessageContaining("queueDepthThreshold");
		assertThatThrownBy(() -> new LlmdPrecisePolicy(2, 1, 1, 5, 0.8, 1, null, true))
			.hasMessageContaining("normalisation");
	}

}

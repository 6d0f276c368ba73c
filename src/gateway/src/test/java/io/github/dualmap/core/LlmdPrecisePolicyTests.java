package io.github.dualmap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
	void thePrefixScoreIsMinMaxNormalisedOverInstancesWithAHit() {
		assertThat(LlmdPrecisePolicy.prefixScore(0, 2, 4)).isZero();
		assertThat(LlmdPrecisePolicy.prefixScore(2, 2, 4)).isZero();
		assertThat(LlmdPrecisePolicy.prefixScore(3, 2, 4)).isEqualTo(0.5);
		assertThat(LlmdPrecisePolicy.prefixScore(4, 2, 4)).isEqualTo(1.0);
		// A single instance with a hit, or all equal: 1.
		assertThat(LlmdPrecisePolicy.prefixScore(1, 1, 1)).isEqualTo(1.0);
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
	void loadScorersOutweighAHitOnALoadedInstance() {
		// b holds the prompt but has the longest queue and a full cache: prefix 3 x 1
		// against queue 2 x 0 + kv 2 x 0 = 3; a: 0 + 2 x 1 + 2 x 0.9 = 3.8.
		f.scrape("a", 0, 0.1);
		f.scrape("b", 8, 1.0);
		f.scrape("c", 4, 0.1);
		stored("b", 1, 2, 3, 4);
		assertThat(policy.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("a");
	}

	@Test
	void theSaturationDetectorQueuesWhenNoInstanceHasGoodCapacity() {
		assertThat(policy.mustHold(f.pool)).as("no metrics yet").isTrue();
		f.scrape("a", 6, 0.1);
		f.scrape("b", 0, 0.81);
		f.scrape("c", 9, 0.95);
		assertThat(policy.mustHold(f.pool)).isTrue();
		// A queue of 5 and 80 % KV usage are still good capacity.
		f.scrape("a", 5, 0.8);
		assertThat(policy.mustHold(f.pool)).isFalse();
		// Metrics older than 200 ms count as no capacity.
		f.now.addAndGet(LlmdPrecisePolicy.DEFAULT_METRICS_STALENESS_NANOS + 1);
		assertThat(policy.mustHold(f.pool)).isTrue();
	}

	@Test
	void withoutAFeedItRefusesToRoute() {
		assertThatThrownBy(() -> new LlmdPrecisePolicy().choose(f.request(prompt), f.pool))
			.isInstanceOf(IllegalStateException.class);
		assertThatThrownBy(() -> new LlmdPrecisePolicy(3, 2, 2, 5, 1.5, 1))
			.hasMessageContaining("kvCacheUtilThreshold");
	}

}

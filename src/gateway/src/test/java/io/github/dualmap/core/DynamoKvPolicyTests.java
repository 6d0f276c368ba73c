package io.github.dualmap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DynamoKvPolicyTests {

	private final PeerFixture f = new PeerFixture("a", "b");

	private final KvEventIndex index = new KvEventIndex();

	/** The router hashes a prompt into the same 16-token blocks the engines key. */
	private final KvEventFeed feed = new KvEventFeed(index, r -> r.blocks() == null ? null : r.blocks().chain(),
			PeerFixture.BLOCK, 64);

	private final PromptBlocks prompt = PeerFixture.prompt(1, 2, 3, 4);

	private DynamoKvPolicy attached(DynamoKvPolicy policy) {
		policy.attach(feed);
		policy.onMembershipChanged(f.pool);
		return policy;
	}

	private void stored(String instance, long... hashes) {
		for (long h : hashes) {
			index.stored(instance, h);
		}
	}

	@Test
	void exactOverlapFromEventsBeatsALearnedGuessAfterAnEviction() {
		DynamoKvPolicy kv = attached(new DynamoKvPolicy());
		DynamoCostPolicy learned = new DynamoCostPolicy();
		// The prompt was served on a: both routers saw it go there, and a's engine
		// stored its blocks.
		f.finish(learned, f.place(learned, f.request(prompt), "a", prompt.promptTokens()));
		stored("a", 1, 2, 3, 4);
		assertThat(kv.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("a");
		// a's engine then evicted it, and b computed the same prefix for a request
		// another router sent: only the events say so.
		for (long h = 1; h <= 4; h++) {
			index.removed("a", h);
		}
		stored("b", 1, 2, 3, 4);
		Decision exact = kv.choose(f.request(prompt), f.pool);
		assertThat(exact.instanceId()).isEqualTo("b");
		assertThat(exact.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(exact.cachedTokens()).isEqualTo(64);
		Decision guess = learned.choose(f.request(prompt), f.pool);
		assertThat(guess.instanceId()).isEqualTo("a");
		assertThat(guess.cachedTokens()).isPositive();
	}

	@Test
	void overlapStopsAtTheFirstMissingBlock() {
		DynamoKvPolicy kv = attached(new DynamoKvPolicy());
		// b holds blocks 1, 2 and 4 but not 3: the chain breaks after 2.
		stored("a", 1);
		stored("b", 1, 2, 4);
		assertThat(index.overlapBlocks("b", prompt.chain())).isEqualTo(2);
		Decision d = kv.choose(f.request(prompt), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.cachedTokens()).isEqualTo(32);
	}

	@Test
	void costIsPrefillBlocksLessTheCreditPlusDecodeBlocks() {
		DynamoKvPolicy kv = attached(new DynamoKvPolicy());
		stored("a", 1, 2, 3, 4);
		// a: max(0, 4 - 4) + 4 = 4 against b: 4 + 4 = 8 ...
		assertThat(kv.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("a");
		// ... until a carries 5 active blocks of other requests: a 0 + 5 + 4 = 9 > 8.
		for (long base = 10; base < 60; base += 10) {
			f.place(kv, f.request(PeerFixture.prompt(base)), "a", 0).handle().firstToken();
		}
		assertThat(kv.activeBlocks("a")).isEqualTo(5);
		assertThat(kv.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("b");
	}

	@Test
	void decodeBlocksCountTheSharedPrefixOfActiveRequestsOnce() {
		DynamoKvPolicy kv = attached(new DynamoKvPolicy());
		f.place(kv, f.request(prompt), "a", 0);
		f.place(kv, f.request(PeerFixture.prompt(1, 2, 5)), "a", 0);
		assertThat(kv.activeBlocks("a")).isEqualTo(5);
		assertThat(kv.missingBlocks("a", new long[] { 1, 2, 3, 9, 10 })).isEqualTo(2);
		assertThat(kv.missingBlocks("a", new long[] { 1, 2, 5 })).isZero();
		assertThat(kv.missingBlocks("a", new long[] { 7, 8 })).isEqualTo(2);
		assertThat(kv.missingBlocks("b", prompt.chain())).isEqualTo(4);
	}

	@Test
	void theRouterQueueHoldsArrivalsWhileEveryWorkerIsOverItsPrefillShare() {
		// Threshold 1.0 of 64 batched tokens: a worker with more than 64 active prefill
		// tokens is full.
		DynamoKvPolicy kv = attached(new DynamoKvPolicy(1, 1, 1.0, DynamoKvPolicy.OFF, -1));
		PeerFixture.Routed onA = f.place(kv, f.request(prompt), "a", 65);
		assertThat(kv.mustHold(f.pool)).isFalse();
		f.place(kv, f.request(PeerFixture.prompt(9, 9, 9, 9, 9)), "b", 80);
		assertThat(kv.mustHold(f.pool)).isTrue();
		// a's request produced its first token: its prefill no longer counts.
		onA.handle().firstToken();
		assertThat(kv.mustHold(f.pool)).isFalse();
		assertThat(attached(new DynamoKvPolicy(1, 1, DynamoKvPolicy.OFF, DynamoKvPolicy.OFF, -1)).mustHold(f.pool))
			.isFalse();
	}

	@Test
	void busyThresholdsTakeWorkersOutAndRejectWhenAllAreBusy() {
		DynamoKvPolicy kv = attached(new DynamoKvPolicy(1, 1, DynamoKvPolicy.OFF, 0.85, 100));
		stored("a", 1, 2, 3, 4);
		f.place(kv, f.unparsed(), "a", 101);
		// a holds the prompt but is over the prefill-token threshold.
		assertThat(kv.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("b");
		// b's engine reports 90 % of its KV cache in use: every worker is busy.
		f.scrape("b", 0, 0.9);
		assertThat(kv.choose(f.request(prompt), f.pool)).isNull();
		f.scrape("b", 0, 0.5);
		assertThat(kv.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("b");
	}

	@Test
	void withoutAFeedItRefusesToRoute() {
		DynamoKvPolicy kv = new DynamoKvPolicy();
		assertThatThrownBy(() -> kv.choose(f.request(prompt), f.pool)).isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("no event feed");
		assertThatThrownBy(() -> new DynamoKvPolicy(-1, 1, 4, DynamoKvPolicy.OFF, -1))
			.hasMessageContaining("prefillLoadScale");
		assertThatThrownBy(() -> new DynamoKvPolicy(1, 1, 4, 1.5, -1)).hasMessageContaining("decodeBlocksThreshold");
	}

	@Test
	void removedInstancesLoseTheirBlocks() {
		DynamoKvPolicy kv = attached(new DynamoKvPolicy());
		stored("a", 1, 2);
		stored("b", 1);
		f.members("b");
		kv.onMembershipChanged(f.pool);
		assertThat(index.blocks("a")).isZero();
		assertThat(index.blocks("b")).isEqualTo(1);
		assertThat(kv.choose(f.request(prompt), f.pool).instanceId()).isEqualTo("b");
	}

}

package io.github.dualmap.core;

import java.time.Duration;
import java.util.stream.LongStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PreblePolicyTests {

	private final PeerFixture f = new PeerFixture("a", "b");

	private final PreblePolicy policy = new PreblePolicy(Duration.ofSeconds(10), 1000);

	/**
	 * Decides {@code prompt} (so the policy places it in its tree) and sends it to
	 * {@code id}.
	 */
	private PeerFixture.Routed pin(PromptBlocks prompt, String id) {
		RoutingRequest request = f.request(prompt);
		policy.choose(request, f.pool);
		return f.place(policy, request, id, prompt.promptTokens());
	}

	private static PromptBlocks chain(long first, int blocks) {
		return PeerFixture.prompt(LongStream.range(first, first + blocks).toArray());
	}

	@Test
	void aConversationsNextTurnGoesToItsNodesInstanceEvenWhenBusier() {
		PromptBlocks turn1 = chain(1, 8);
		pin(turn1, "a");
		assertThat(policy.allocationOf(turn1)).containsExactly("a");
		pin(chain(100, 8), "a");
		// Two new blocks after eight seen: exploit the node's allocation, whatever the
		// load.
		PromptBlocks turn2 = chain(1, 10);
		Decision d = policy.choose(f.request(turn2), f.pool);
		assertThat(d.instanceId()).isEqualTo("a");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(d.cachedTokens()).isEqualTo(turn1.promptTokens());
		assertThat(policy.loadNanos("a", f.pool)).isGreaterThan(policy.loadNanos("b", f.pool));
	}

	@Test
	void aLaterTurnGoesBackToItsPreviousTurnsInstanceNotAnyInstanceOfItsSystemPrompt() {
		// A system prompt S (blocks 1-8) first on a; a conversation under it explores b,
		// so S is allocated to both.
		PromptBlocks system = chain(1, 8);
		pin(system, "a");
		pin(PeerFixture.prompt(1, 2, 3, 4, 5, 6, 7, 8, 30, 31, 32, 33, 34, 35, 36, 37, 38), "b");
		assertThat(policy.allocationOf(system)).containsExactlyInAnyOrder("a", "b");
		// Turn 1 of another conversation under S: an exploit of S, to the lighter a.
		PromptBlocks turn1 = PeerFixture.prompt(1, 2, 3, 4, 5, 6, 7, 8, 50, 51);
		f.busy(policy, "b", 3);
		PeerFixture.Routed first = f.route(policy, f.request(turn1));
		assertThat(first.decision().instanceId()).isEqualTo("a");
		// Now a is the busier one; turn 2 still goes back to a, which holds turn 1.
		pin(chain(200, 8), "a");
		pin(chain(300, 8), "a");
		assertThat(policy.loadNanos("a", f.pool)).isGreaterThan(policy.loadNanos("b", f.pool));
		PromptBlocks turn2 = PeerFixture.prompt(1, 2, 3, 4, 5, 6, 7, 8, 50, 51, 52);
		Decision d = policy.choose(f.request(turn2), f.pool);
		assertThat(d.instanceId()).isEqualTo("a");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(d.cachedTokens()).isEqualTo(turn1.promptTokens());
	}

	@Test
	void theNextTurnFindsItsNodeThoughThePartialLastBlockChanged() {
		// Turn 1 ends in a partial block (blocks 1-7 full, 8 partial); in turn 2 that
		// block
		// carries more tokens, so its hash differs: the node is keyed by block 7.
		PromptBlocks turn1 = new PromptBlocks(LongStream.rangeClosed(1, 8).toArray(), PeerFixture.BLOCK,
				7 * PeerFixture.BLOCK + 5);
		pin(turn1, "a");
		pin(chain(100, 8), "a");
		PromptBlocks turn2 = PeerFixture.prompt(1, 2, 3, 4, 5, 6, 7, 80, 81);
		Decision d = policy.choose(f.request(turn2), f.pool);
		assertThat(d.instanceId()).isEqualTo("a");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(policy.allocationOf(turn1)).containsExactly("a");
	}

	@Test
	void aPromptWhoseNewPartIsLongerThanWhatWasSeenExploresTheLeastLoaded() {
		pin(chain(1, 4), "a");
		// One block of four shared: 16 seen < 48 new.
		Decision d = policy.choose(f.request(PeerFixture.prompt(1, 7, 8, 9)), f.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
	}

	@Test
	void loadIsTheWindowsPrefillAndTheRunningRequestsDecode() {
		PromptBlocks prompt = chain(1, 4);
		double perToken = f.pool.estimator().nanosPerToken();
		PeerFixture.Routed first = pin(prompt, "a");
		// Miss rate 1, one request, 64 own tokens; nothing decoded yet.
		assertThat(policy.loadNanos("a", f.pool)).isCloseTo(64 * perToken, org.assertj.core.data.Offset.offset(1.0));
		f.now.addAndGet(Duration.ofSeconds(2).toNanos());
		f.finish(policy, first);
		pin(prompt, "a");
		// Second request: its 64 tokens were seen, so the node's miss rate halves over
		// two
		// requests, and one decode runs at the observed decode time (2 s, less prefill).
		double decode = policy.loadNanos("a", f.pool) - 64 * perToken;
		assertThat(decode).isPositive().isLessThan(Duration.ofSeconds(2).toNanos());
		assertThat(policy.loadNanos("b", f.pool)).isZero();
	}

	@Test
	void nodesWithoutRequestsInTheWindowAreForgotten() {
		PromptBlocks prompt = chain(1, 4);
		pin(prompt, "a");
		f.now.addAndGet(Duration.ofSeconds(11).toNanos());
		assertThat(policy.loadNanos("a", f.pool)).isZero();
		assertThat(policy.allocationOf(prompt)).isEmpty();
	}

	@Test
	void rebalancingMovesTheCheapestNodesFromTheHeaviestInstanceToTheLightest() {
		// Four prompts on "a", 25 requests each, costing 2, 3, 4 and 5 units (their own
		// blocks). The 100th request (50 x 2 instances) starts rebalancing: 14 against 0;
		// moving 2 leaves 12 / 2, moving 3 leaves 9 / 5, moving 4 would invert the two.
		PromptBlocks[] prompts = { chain(100, 2), chain(200, 3), chain(300, 4), chain(400, 5) };
		for (int i = 0; i < 99; i++) {
			pin(prompts[i % 4], "a");
		}
		for (PromptBlocks p : prompts) {
			assertThat(policy.allocationOf(p)).containsExactly("a");
		}
		pin(prompts[3], "a");
		assertThat(policy.allocationOf(prompts[0])).containsExactly("b");
		assertThat(policy.allocationOf(prompts[1])).containsExactly("b");
		assertThat(policy.allocationOf(prompts[2])).containsExactly("a");
		assertThat(policy.allocationOf(prompts[3])).containsExactly("a");
		// A next turn of a moved prompt follows its node.
		long[] longer = LongStream.concat(LongStream.of(prompts[1].chain()), LongStream.of(9_999)).toArray();
		assertThat(policy.choose(f.request(PeerFixture.prompt(longer)), f.pool).instanceId()).isEqualTo("b");
	}

	@Test
	void aSingleNodeThatMakesAnInstanceHeavyIsReplicatedToTheLightest() {
		PromptBlocks hot = chain(1, 4);
		for (int i = 0; i < 99; i++) {
			pin(hot, "a");
		}
		assertThat(policy.allocationOf(hot)).containsExactly("a");
		pin(hot, "a");
		assertThat(policy.allocationOf(hot)).containsExactlyInAnyOrder("a", "b");
	}

	@Test
	void noRebalancingBeforeFiftyRequestsPerInstance() {
		PromptBlocks[] prompts = { chain(100, 4), chain(200, 4) };
		for (int i = 0; i < 98; i++) {
			pin(prompts[i % 2], "a");
		}
		assertThat(policy.allocationOf(prompts[0])).containsExactly("a");
		assertThat(policy.allocationOf(prompts[1])).containsExactly("a");
	}

	@Test
	void theIncrementalLoadsEqualLoadsComputedAfresh() {
		java.util.Random random = new java.util.Random(7);
		PeerFixture g = new PeerFixture("a", "b", "c");
		PreblePolicy p = new PreblePolicy(Duration.ofSeconds(10), 500);
		java.util.List<PeerFixture.Routed> running = new java.util.ArrayList<>();
		for (int op = 0; op < 3000; op++) {
			int what = random.nextInt(10);
			if (what < 6) {
				// Conversations of 1-12 blocks over 40 roots: later turns extend earlier
				// ones.
				long root = 1000L * random.nextInt(40);
				int blocks = 1 + random.nextInt(12);
				PromptBlocks prompt = new PromptBlocks(LongStream.range(root, root + blocks).toArray(),
						PeerFixture.BLOCK, blocks * PeerFixture.BLOCK - random.nextInt(PeerFixture.BLOCK));
				running.add(g.route(p, g.request(prompt)));
			}
			else if (what < 9 && !running.isEmpty()) {
				g.finish(p, running.remove(random.nextInt(running.size())));
			}
			else {
				g.now.addAndGet(random.nextInt(2_000_000_000));
			}
			if (op == 1500) {
				g.members("a", "c", "d");
				p.onMembershipChanged(g.pool);
			}
			if (op % 50 == 0) {
				double[] incremental = { p.loadNanos("a", g.pool), p.loadNanos("c", g.pool), p.loadNanos("d", g.pool),
						p.rebalancingLoadNanos("a", g.pool), p.rebalancingLoadNanos("c", g.pool) };
				p.recomputeSums();
				double[] fresh = { p.loadNanos("a", g.pool), p.loadNanos("c", g.pool), p.loadNanos("d", g.pool),
						p.rebalancingLoadNanos("a", g.pool), p.rebalancingLoadNanos("c", g.pool) };
				for (int i = 0; i < fresh.length; i++) {
					assertThat(incremental[i]).as("op %d instance %d", op, i)
						.isCloseTo(fresh[i], org.assertj.core.data.Offset.offset(1e-6 * Math.max(1, fresh[i])));
				}
			}
		}
	}

	@Test
	void anUnparsedBodyGoesToTheLeastLoad() {
		pin(chain(1, 4), "b");
		Decision d = policy.choose(f.unparsed(), f.pool);
		assertThat(d.instanceId()).isEqualTo("a");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
	}

	@Test
	void skipsInstancesThatDoNotAcceptWorkAndForgetsRemovedOnes() {
		PromptBlocks prompt = chain(1, 8);
		pin(prompt, "a");
		f.instance("a").healthy(false);
		assertThat(policy.choose(f.request(chain(1, 9)), f.pool).instanceId()).isEqualTo("b");
		f.members("b");
		policy.onMembershipChanged(f.pool);
		assertThat(policy.allocationOf(prompt)).isEmpty();
		assertThat(policy.choose(f.request(chain(1, 9)), f.pool).instanceId()).isEqualTo("b");
	}

}

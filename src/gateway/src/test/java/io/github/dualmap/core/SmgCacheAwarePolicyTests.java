package io.github.dualmap.core;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SmgCacheAwarePolicyTests {

	private final PeerFixture f = new PeerFixture("a", "b");

	private final PromptBlocks prompt = PeerFixture.prompt(1, 2, 3, 4);

	@Test
	void keepsAffinityWhileOnlyOtherInstancesAreImbalanced() {
		PeerFixture g = new PeerFixture("a", "b", "c");
		SmgCacheAwarePolicy smg = new SmgCacheAwarePolicy(g.settings);
		assertThat(smg.name()).isEqualTo("smg-cache-aware");
		g.place(smg, g.request(prompt), "a", prompt.promptTokens());
		// b is 100 requests ahead of c: the router's fleet-wide check would take the
		// shortest queue; the gate looks only at a (1 in flight, the mean is 33.7).
		g.busy(smg, "b", 100);
		Decision d = smg.choose(g.request(prompt), g.pool);
		assertThat(d.instanceId()).isEqualTo("a");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		SglangCacheAwarePolicy router = new SglangCacheAwarePolicy(g.settings);
		g.place(router, g.request(prompt), "a", prompt.promptTokens());
		assertThat(router.choose(g.request(prompt), g.pool).instanceId()).isEqualTo("c");
	}

	@Test
	void spillsOnlyPastBothMarginsOverTheMean() {
		PeerFixture g = new PeerFixture("a", "b", "c");
		SmgCacheAwarePolicy smg = new SmgCacheAwarePolicy(g.settings);
		g.place(smg, g.request(prompt), "a", prompt.promptTokens());
		// a 90, b 0, c 0: the mean is 30; 90 > 1.5 x 30 but not > 30 + 64: it stays.
		g.busy(smg, "a", 89);
		assertThat(smg.choose(g.request(prompt), g.pool).instanceId()).isEqualTo("a");
		// a 100: > 1.5 x 33.3 and > 33.3 + 64: it spills, and with no engine load
		// polled the fewer in flight decide between the idle b and c.
		g.busy(smg, "a", 10);
		Decision d = smg.choose(g.request(prompt), g.pool);
		assertThat(d.instanceId()).isIn("b", "c");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		// a 300, b 200, c 200: the mean is 233; 300 > 233 + 64 but not > 1.5 x 233.
		g.busy(smg, "a", 200);
		g.busy(smg, "b", 200);
		g.busy(smg, "c", 200);
		assertThat(smg.choose(g.request(prompt), g.pool).instanceId()).isEqualTo("a");
	}

	@Test
	void picksAmongEqualHoldersByInFlightCount() {
		PeerFixture g = new PeerFixture("a", "b", "c");
		SmgCacheAwarePolicy smg = new SmgCacheAwarePolicy(g.settings);
		g.finish(smg, g.place(smg, g.request(prompt), "a", prompt.promptTokens()));
		g.finish(smg, g.place(smg, g.request(prompt), "b", prompt.promptTokens()));
		// a and b hold the prompt; c is idle but holds nothing and is no candidate.
		g.busy(smg, "a", 2);
		g.busy(smg, "b", 1);
		Decision d = smg.choose(g.request(prompt), g.pool);
		assertThat(d.instanceId()).isEqualTo("b");
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(d.cachedTokens()).isEqualTo(prompt.tokensFor(4));
		// Equal holders tie at random, by request: both get some.
		g.busy(smg, "b", 1);
		Set<String> picks = new HashSet<>();
		for (int i = 0; i < 16; i++) {
			picks.add(smg.choose(g.request(prompt), g.pool).instanceId());
		}
		assertThat(picks).containsExactlyInAnyOrder("a", "b");
	}

	@Test
	void missesGoByExpectedWaitCreditedWhenChosen() {
		SmgCacheAwarePolicy smg = new SmgCacheAwarePolicy(f.settings);
		// a scores 0.15 x 0.5 / 0.5 = 0.15 s, b 0.15 x 0.1 / 0.9 = 0.017 s.
		f.scrape("a", 0, 0.5);
		f.scrape("b", 0, 0.1);
		// Two arrivals chosen before either is dispatched (a dispatch queue holds them):
		// the first credits b with 1024 tokens (0.512 s), so the second goes to a.
		Decision first = smg.choose(f.request(PeerFixture.prompt(7)), f.pool);
		assertThat(first.instanceId()).isEqualTo("b");
		assertThat(first.reason()).isEqualTo(Reason.LOAD);
		assertThat(smg.choose(f.request(PeerFixture.prompt(8)), f.pool).instanceId()).isEqualTo("a");
	}

	@Test
	void aSpillSkipsOtherInstancesPastTheGate() {
		PeerFixture g = new PeerFixture("a", "b", "c", "d");
		SmgCacheAwarePolicy smg = new SmgCacheAwarePolicy(g.settings);
		g.place(smg, g.request(prompt), "a", prompt.promptTokens());
		// a and b 200 in flight, c and d none: the mean is 100, and a and b are above
		// both 150 and 164. b's polled engine looks idlest, but it trips the gate too.
		g.busy(smg, "a", 199);
		g.busy(smg, "b", 200);
		g.scrape("a", 0, 0);
		g.scrape("b", 0, 0);
		g.scrape("c", 3, 0);
		g.scrape("d", 3, 0);
		Decision d = smg.choose(g.request(prompt), g.pool);
		assertThat(d.instanceId()).isIn("c", "d");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
	}

	@Test
	void theTreeIsBoundedOverAllInstancesAtEachEvictionPass() {
		SmgCacheAwarePolicy smg = new SmgCacheAwarePolicy(PeerFixture.BLOCK, 0.3, 64, 1.5, 4L * PeerFixture.BLOCK,
				Duration.ofSeconds(10));
		f.finish(smg, f.place(smg, f.request(prompt), "a", prompt.promptTokens()));
		PromptBlocks other = PeerFixture.prompt(5, 6, 7, 8);
		f.finish(smg, f.place(smg, f.request(other), "b", other.promptTokens()));
		// Between passes the tree grows past its bound of 4 blocks.
		assertThat(smg.treeBlocks("a")).isEqualTo(4);
		assertThat(smg.treeBlocks("b")).isEqualTo(4);
		f.now.addAndGet(10_000_000_000L);
		PromptBlocks third = PeerFixture.prompt(9, 10, 11, 12);
		f.finish(smg, f.place(smg, f.request(third), "b", third.promptTokens()));
		// The pass trimmed the least recently used 4 blocks, a's, before the insert.
		assertThat(smg.treeBlocks("a")).isZero();
		assertThat(smg.treeBlocks("b")).isEqualTo(8);
		Decision d = smg.choose(f.request(prompt), f.pool);
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		assertThat(d.cachedTokens()).isZero();
	}

	@Test
	void refusesANonPositiveEvictionInterval() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new SmgCacheAwarePolicy(PeerFixture.BLOCK, 0.3, 64, 1.5, 1 << 20, Duration.ZERO))
			.withMessageContaining("evictionInterval");
	}

}

package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import io.github.dualmap.core.Candidates;
import io.github.dualmap.core.Decision;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.NanoClock;
import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.core.Reason;
import io.github.dualmap.core.RingMember;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where a repeated placement goes: the key's other candidate, then clockwise on ring 1,
 * never an instance already tried; by load alone without a prompt.
 */
class FallbackChoiceTests {

	private final InstancePool pool = new InstancePool("llm", SchedulerSettings.ofDefaults(), NanoClock.SYSTEM);

	private final FallbackChoice fallback = new FallbackChoice(this.pool);

	private final PromptBlocks blocks = PrefixHasher.ofDefaults().ofText("m", "a prompt to retry ".repeat(20));

	private final RoutingRequest request = new RoutingRequest("r", this.blocks, Duration.ofSeconds(5).toNanos(), 0);

	FallbackChoiceTests() {
		this.pool.updateMembership(List.of("a", "b", "c", "d", "e").stream().map(id -> new RingMember(id, 1)).toList());
	}

	private Candidates candidates() {
		return this.pool.rings().candidates(this.blocks.keyAt(this.pool.hotPrefixes().peekDepth(this.blocks)));
	}

	@Test
	void aRetryOffItsFirstCandidateGoesToItsSecond() {
		Candidates c = candidates();
		Decision d = this.fallback.choose(this.request, Set.of(c.first()));
		assertThat(d.instanceId()).isEqualTo(c.second());
		assertThat(d.reason()).isEqualTo(Reason.FALLBACK);
		// Not tried yet: its first candidate.
		assertThat(this.fallback.choose(this.request, Set.of()).instanceId()).isEqualTo(c.first());
	}

	@Test
	void offBothCandidatesItGoesClockwiseOnTheFirstRing() {
		Candidates c = candidates();
		Set<String> tried = Set.of(c.first(), c.second());
		long key = this.blocks.keyAt(this.pool.hotPrefixes().peekDepth(this.blocks));
		String next = this.pool.rings().walk(0, key, id -> !tried.contains(id));
		assertThat(this.fallback.choose(this.request, tried).instanceId()).isEqualTo(next)
			.isNotIn(c.first(), c.second());
	}

	@Test
	void aRequestWithoutAPromptGoesByLoadAndNeverWhereItWasTried() {
		RoutingRequest unparsed = new RoutingRequest("u", null, Duration.ofSeconds(5).toNanos(), 0);
		assertThat(this.fallback.choose(unparsed, Set.of("a", "b", "c", "d")).instanceId()).isEqualTo("e");
		assertThat(this.fallback.choose(unparsed, Set.of("e")).instanceId()).isNotEqualTo("e");
	}

	@Test
	void whenEveryInstanceWasTriedThereIsNoChoice() {
		Set<String> all = Set.of("a", "b", "c", "d", "e");
		assertThat(this.fallback.choose(this.request, all)).isNull();
		assertThat(this.fallback.acceptsAnyBut(all)).isFalse();
		assertThat(this.fallback.acceptsAnyBut(Set.of("a"))).isTrue();
	}

	@Test
	void aDrainingInstanceIsNoChoiceEither() {
		Candidates c = candidates();
		this.pool.instance(c.second()).draining(true);
		Decision d = this.fallback.choose(this.request, Set.of(c.first()));
		assertThat(d.instanceId()).isNotIn(c.first(), c.second());
	}

}

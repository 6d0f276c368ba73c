package io.github.dualmap.core;

import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ExpectedWaitSelectorTests {

	private static final long SECOND = 1_000_000_000L;

	private final PeerFixture f = new PeerFixture("a", "b");

	private final ExpectedWaitSelector http = new ExpectedWaitSelector(false);

	private final PromptBlocks prompt = PeerFixture.prompt(1, 2);

	private InstanceState select(ExpectedWaitSelector selector, String... candidates) {
		List<InstanceState> list = Arrays.stream(candidates).map(f::instance).toList();
		return selector.select(list, f.request(prompt), f.pool);
	}

	@Test
	void theKvBarrierAndTheQueueAddUpInSeconds() {
		// a: 1 waiting = 1024 tokens / 2000 = 0.512 s, k = 0 -> 0.512.
		// b: nothing waiting, k = 0.75 -> 0.15 x 3 = 0.45: b.
		f.scrape("a", 1, 0);
		f.scrape("b", 0, 0.75);
		assertThat(select(http, "a", "b").id()).isEqualTo("b");
	}

	@Test
	void eachChoiceIsCreditedUntilTheNextPoll() {
		f.scrape("a", 0, 0.5);
		f.scrape("b", 0, 0.1);
		// a scores 0.15; b 0.0167, then 0.0167 + 1024 / 2000 = 0.529 once credited.
		assertThat(select(http, "a", "b").id()).isEqualTo("b");
		assertThat(http.sentSincePoll("b")).isEqualTo(1024);
		assertThat(select(http, "a", "b").id()).isEqualTo("a");
		assertThat(select(http, "a", "b").id()).isEqualTo("b");
		// Scrapes between polls change nothing: the poll runs every 10 s.
		f.now.addAndGet(9 * SECOND);
		f.scrape("b", 5, 0.1);
		assertThat(http.polledWaiting("b")).isZero();
		assertThat(http.sentSincePoll("b")).isEqualTo(2048);
		// The poll takes b's 5 waiting and forgets what was sent to it before.
		f.now.addAndGet(SECOND);
		assertThat(select(http, "a", "b").id()).isEqualTo("a");
		assertThat(http.polledWaiting("b")).isEqualTo(5);
		assertThat(http.sentSincePoll("b")).isZero();
		assertThat(http.sentSincePoll("a")).isEqualTo(1024);
	}

	@Test
	void theRouterKnowsThePromptTokensOnlyOnTheGrpcPath() {
		ExpectedWaitSelector grpc = new ExpectedWaitSelector(true);
		f.scrape("a", 0, 0.5);
		f.scrape("b", 0, 0.1);
		// 32 prompt tokens add 0.016 s to b: it stays below a's 0.15.
		assertThat(select(grpc, "a", "b").id()).isEqualTo("b");
		assertThat(grpc.sentSincePoll("b")).isEqualTo(prompt.promptTokens());
		assertThat(select(grpc, "a", "b").id()).isEqualTo("b");
	}

	@Test
	void aFailedScrapeLeavesNoLoadUntilAPollSucceeds() {
		f.scrape("a", 3, 0);
		f.scrape("b", 1, 0);
		assertThat(select(http, "a", "b").id()).isEqualTo("b");
		f.instance("a").markEngineUnknown();
		f.now.addAndGet(10 * SECOND);
		// a has no load now: its in-flight count (none) x 1024 / 2000 = 0 beats b's
		// polled 1 waiting.
		assertThat(select(http, "a", "b").id()).isEqualTo("a");
		assertThat(http.polledWaiting("a")).isEqualTo(-1);
	}

	@Test
	void withoutAPolledLoadTheInFlightCountStandsIn() {
		PeerFixture g = new PeerFixture("a", "b", "c");
		ExpectedWaitSelector s = new ExpectedWaitSelector(false);
		// c was polled at 2 waiting (1.024 s); a and b never were: their in-flight count
		// x
		// 1024 / 2000, so a with 3 (1.536 s) loses to c, b with 1 (0.512 s) wins.
		g.scrape("c", 2, 0);
		g.busy(new SglangCacheAwarePolicy(g.settings), "a", 3);
		g.busy(new SglangCacheAwarePolicy(g.settings), "b", 1);
		List<InstanceState> all = List.of(g.instance("a"), g.instance("b"), g.instance("c"));
		assertThat(s.select(all, g.request(prompt), g.pool).id()).isEqualTo("b");
		assertThat(s.select(List.of(g.instance("a"), g.instance("c")), g.request(prompt), g.pool).id()).isEqualTo("c");
		// Nothing polled anywhere: the fewest in flight.
		PeerFixture dark = new PeerFixture("a", "b");
		dark.busy(new SglangCacheAwarePolicy(dark.settings), "a", 1);
		assertThat(new ExpectedWaitSelector(false)
			.select(List.of(dark.instance("a"), dark.instance("b")), dark.request(prompt), dark.pool)
			.id()).isEqualTo("b");
	}

	@Test
	void tiesSpreadByRequest() {
		f.scrape("a", 0, 0);
		f.scrape("b", 0, 0);
		Set<String> firstPicks = new HashSet<>();
		for (int i = 0; i < 16; i++) {
			ExpectedWaitSelector fresh = new ExpectedWaitSelector(false);
			firstPicks.add(select(fresh, "a", "b").id());
		}
		assertThat(firstPicks).containsExactlyInAnyOrder("a", "b");
	}

	@Test
	void aRemovedInstanceIsForgottenAndBadSettingsAreRefused() {
		f.scrape("a", 2, 0);
		select(http, "a", "b");
		http.retain(Set.of("b"));
		assertThat(http.polledWaiting("a")).isEqualTo(-1);
		assertThatIllegalArgumentException().isThrownBy(() -> http.select(List.of(), f.request(prompt), f.pool));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ExpectedWaitSelector(-1, 1024, 2000, Duration.ofSeconds(10), false));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ExpectedWaitSelector(0.15, 0, 2000, Duration.ofSeconds(10), false));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ExpectedWaitSelector(0.15, 1024, 0, Duration.ofSeconds(10), false));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ExpectedWaitSelector(0.15, 1024, 2000, Duration.ZERO, false));
	}

}

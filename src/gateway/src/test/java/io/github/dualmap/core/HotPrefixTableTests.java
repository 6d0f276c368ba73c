package io.github.dualmap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class HotPrefixTableTests {

	private static final long SHARED = 0xABCL;

	private long unique = 1_000_000;

	private PromptBlocks withFirstBlock(long first) {
		return new PromptBlocks(new long[] { first, unique++, unique++ }, 64, 192);
	}

	private PromptBlocks distinct() {
		return withFirstBlock(unique++);
	}

	@Test
	void aPrefixSharedByEveryRequestExpandsToDepthTwoAfterMinSamples() {
		SchedulerSettings settings = SchedulerSettings.ofDefaults();
		HotPrefixTable table = new HotPrefixTable(settings);
		for (int i = 0; i < settings.hotMinSamples(); i++) {
			assertThat(table.routeDepth(withFirstBlock(SHARED))).as("request %d", i).isEqualTo(1);
		}
		assertThat(table.isHot(SHARED)).isTrue();
		PromptBlocks next = withFirstBlock(SHARED);
		assertThat(table.peekDepth(next)).isEqualTo(2);
		assertThat(table.routeDepth(next)).isEqualTo(2);
		assertThat(table.hotPrefixes()).extracting(HotPrefixTable.HotPrefix::hash).containsExactly(SHARED);
	}

	@Test
	void aPrefixBelowTheRatioNeverExpands() {
		HotPrefixTable table = new HotPrefixTable(SchedulerSettings.ofDefaults());
		// One request in 20 is a 5 % share, under the 6.12 % reference ratio.
		for (int i = 0; i < 600; i++) {
			PromptBlocks b = i % 20 == 0 ? withFirstBlock(SHARED) : distinct();
			assertThat(table.routeDepth(b)).isEqualTo(1);
		}
		assertThat(table.isHot(SHARED)).isFalse();
		assertThat(table.hotPrefixes()).isEmpty();
	}

	@Test
	void anExpansionIsDroppedOnceItsShareFalls() {
		SchedulerSettings settings = SchedulerSettings.ofDefaults();
		HotPrefixTable table = new HotPrefixTable(settings);
		for (int i = 0; i < 40; i++) {
			table.routeDepth(withFirstBlock(SHARED));
		}
		assertThat(table.isHot(SHARED)).isTrue();
		// 40 of 200 is still far above the drop ratio: the expansion holds.
		for (int i = 0; i < 160; i++) {
			table.routeDepth(distinct());
		}
		assertThat(table.isHot(SHARED)).isTrue();
		// Sliding the window past most of them takes the share under 2 %: 4 of 200 is
		// still 2 %, 3 of 200 is under it (while the prefix is still in the window).
		for (int i = 0; i < 36; i++) {
			table.routeDepth(distinct());
		}
		assertThat(table.isHot(SHARED)).isTrue();
		table.routeDepth(distinct());
		assertThat(table.isHot(SHARED)).isFalse();
		assertThat(table.peekDepth(withFirstBlock(SHARED))).isEqualTo(1);
	}

	@Test
	void aShareBetweenDropAndHotRatioKeepsAnExistingExpansion() {
		HotPrefixTable table = new HotPrefixTable(SchedulerSettings.ofDefaults());
		for (int i = 0; i < 30; i++) {
			table.routeDepth(withFirstBlock(SHARED));
		}
		assertThat(table.isHot(SHARED)).isTrue();
		// Then 1 request in 25 (4 %): under the hot ratio, over the drop ratio.
		for (int i = 0; i < 1_000; i++) {
			table.routeDepth(i % 25 == 0 ? withFirstBlock(SHARED) : distinct());
		}
		assertThat(table.isHot(SHARED)).isTrue();
	}

	@Test
	void expandedPrefixesAreBounded() {
		SchedulerSettings settings = SchedulerSettings.custom().maxHotPrefixes(3).build();
		HotPrefixTable table = new HotPrefixTable(settings);
		// Ten prefixes with a 10 % share each: every one is hot, only three may expand.
		for (int i = 0; i < 1_000; i++) {
			table.routeDepth(withFirstBlock(i % 10));
		}
		assertThat(table.hotPrefixes()).hasSize(3);
	}

	@Test
	void countsAreKeptOnlyForTheRequestsInTheWindow() {
		SchedulerSettings settings = SchedulerSettings.ofDefaults();
		HotPrefixTable table = new HotPrefixTable(settings);
		// Every prompt distinct: each routes on one block, so one key per request.
		for (int i = 0; i < 50 * settings.hotWindow(); i++) {
			table.routeDepth(distinct());
		}
		assertThat(table.countedKeys()).isEqualTo(settings.hotWindow());
	}

	@Test
	void depthStopsAtTheChainAndTheMaximum() {
		SchedulerSettings settings = SchedulerSettings.custom().maxPrefixDepth(2).build();
		HotPrefixTable table = new HotPrefixTable(settings);
		long[] chain = { 1, 2, 3, 4 };
		for (int i = 0; i < 100; i++) {
			table.routeDepth(new PromptBlocks(chain, 64, 256));
		}
		assertThat(table.peekDepth(new PromptBlocks(chain, 64, 256))).isEqualTo(2);
		assertThat(table.routeDepth(new PromptBlocks(chain, 64, 256))).isEqualTo(2);
		assertThat(table.peekDepth(new PromptBlocks(new long[] { 1 }, 64, 10))).isEqualTo(1);
	}

}

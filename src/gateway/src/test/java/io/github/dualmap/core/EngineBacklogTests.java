package io.github.dualmap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link EngineBacklog}: the prefill an engine admitted and has not computed, from its
 * prefix-cache counters between snapshots, drained at its prefill rate.
 */
class EngineBacklogTests {

	private static final long MS = 1_000_000;

	// 0.1 ms per uncached token: 10,000 tokens a second.
	private static final double RATE = 100_000;

	private final EngineBacklog backlog = new EngineBacklog();

	private static EngineSnapshot counters(long atMillis, double queries, double hits) {
		return new EngineSnapshot(atMillis * MS, 0, 3, 0.4, queries, hits, 0);
	}

	@Test
	void theFirstSnapshotOnlySetsTheBaseline() {
		backlog.update(counters(0, 90_000, 40_000), RATE);
		assertThat(backlog.tokens(0, RATE)).isZero();
	}

	@Test
	void uncachedTokensAdmittedSinceTheLastSnapshotAreTheBacklogAndDrainAtThePrefillRate() {
		backlog.update(counters(0, 90_000, 40_000), RATE);
		// A 60,000-token prompt with 10,000 cached was admitted: 50,000 to compute.
		backlog.update(counters(500, 150_000, 50_000), RATE);
		assertThat(backlog.tokens(500 * MS, RATE)).isEqualTo(50_000);
		assertThat(backlog.tokens(1_500 * MS, RATE)).as("a second later").isEqualTo(40_000);
		assertThat(backlog.tokens(5_500 * MS, RATE)).as("all computed").isZero();
		assertThat(backlog.tokens(9_000 * MS, RATE)).isZero();
	}

	@Test
	void eachSnapshotAddsWhatWasAdmittedToWhatThePreviousOneLeft() {
		backlog.update(counters(0, 0, 0), RATE);
		backlog.update(counters(500, 20_000, 0), RATE);
		// 5,000 drained over the next 500 ms, 3,000 admitted (4,000 queried, 1,000 hit).
		backlog.update(counters(1_000, 24_000, 1_000), RATE);
		assertThat(backlog.tokens(1_000 * MS, RATE)).isEqualTo(18_000);
		// Nothing admitted: only drained.
		backlog.update(counters(1_500, 24_000, 1_000), RATE);
		assertThat(backlog.tokens(1_500 * MS, RATE)).isEqualTo(13_000);
	}

	@Test
	void whatTheLastSnapshotLeftBoundsEveryLaterReadingWhateverTheRate() {
		assertThat(backlog.undrainedTokens()).as("never scraped").isZero();
		backlog.update(counters(0, 0, 0), RATE);
		backlog.update(counters(500, 20_000, 0), RATE);
		assertThat(backlog.undrainedTokens()).isEqualTo(20_000);
		assertThat(backlog.tokens(500 * MS, RATE)).isEqualTo(20_000);
		assertThat(backlog.tokens(1_000 * MS, Double.MAX_VALUE)).isEqualTo(20_000);
		assertThat(backlog.tokens(1_000 * MS, RATE)).isLessThan(backlog.undrainedTokens());
		backlog.clear();
		assertThat(backlog.undrainedTokens()).isZero();
	}

	@Test
	void aSlowerEngineDrainsSlower() {
		backlog.update(counters(0, 0, 0), RATE);
		backlog.update(counters(0, 10_000, 0), RATE);
		assertThat(backlog.tokens(500 * MS, RATE)).isEqualTo(5_000);
		assertThat(backlog.tokens(500 * MS, 2 * RATE)).isEqualTo(7_500);
	}

	@Test
	void countersThatGoBackwardsAreARestartAndStartAfresh() {
		backlog.update(counters(0, 0, 0), RATE);
		backlog.update(counters(500, 30_000, 0), RATE);
		assertThat(backlog.tokens(500 * MS, RATE)).isEqualTo(30_000);
		backlog.update(counters(1_000, 2_000, 0), RATE);
		assertThat(backlog.tokens(1_000 * MS, RATE)).as("the engine restarted: unknown").isZero();
		backlog.update(counters(1_500, 7_000, 0), RATE);
		assertThat(backlog.tokens(1_500 * MS, RATE)).as("from the new baseline").isEqualTo(5_000);
	}

	@Test
	void countersTheEngineDoesNotExposeAreUnknownNeverBusy() {
		backlog.update(counters(0, 0, 0), RATE);
		backlog.update(counters(500, 30_000, 0), RATE);
		backlog.update(counters(1_000, -1, -1), RATE);
		assertThat(backlog.tokens(1_000 * MS, RATE)).isZero();
		backlog.update(counters(1_500, Double.NaN, Double.NaN), RATE);
		assertThat(backlog.tokens(1_500 * MS, RATE)).isZero();
		backlog.update(counters(2_000, 40_000, 0), RATE);
		assertThat(backlog.tokens(2_000 * MS, RATE)).as("a baseline again, not a jump").isZero();
	}

	@Test
	void aFailedScrapeClearsItAndTheNextSnapshotIsABaseline() {
		backlog.update(counters(0, 0, 0), RATE);
		backlog.update(counters(500, 30_000, 0), RATE);
		backlog.clear();
		assertThat(backlog.tokens(500 * MS, RATE)).isZero();
		backlog.update(counters(1_000, 60_000, 0), RATE);
		assertThat(backlog.tokens(1_000 * MS, RATE)).isZero();
	}

}

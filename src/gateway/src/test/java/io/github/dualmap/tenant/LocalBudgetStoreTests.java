package io.github.dualmap.tenant;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** Token buckets in memory: check-and-charge, refill, debt, shadow and eviction. */
class LocalBudgetStoreTests {

	private final AtomicLong now = new AtomicLong(1_000_000);

	private final BudgetLine minute = new BudgetLine("{a}:m", 600, BudgetLine.MINUTE_MILLIS);

	private final BudgetLine day = new BudgetLine("{a}:d", 10_000, BudgetLine.DAY_MILLIS);

	private LocalBudgetStore store(Long max) {
		return new LocalBudgetStore(max, this.now::get, key -> key.startsWith("{a}"));
	}

	@Test
	void chargesEveryLineOnlyWhenAllHoldTheCost() {
		LocalBudgetStore store = store(100L);
		BudgetStore.Levels first = store.chargeNow(List.of(this.minute, this.day), 500, BudgetStore.Charge.IF_ADMITTED);
		assertThat(first.admitted()).isTrue();
		assertThat(first.levels()).containsExactly(100, 9_500);
		BudgetStore.Levels second = store.chargeNow(List.of(this.minute, this.day), 200,
				BudgetStore.Charge.IF_ADMITTED);
		assertThat(second.admitted()).isFalse();
		// Nothing taken from either line.
		assertThat(second.levels()).containsExactly(100, 9_500);
	}

	@Test
	void refillsAtTheLimitPerWindowUpToTheLimit() {
		LocalBudgetStore store = store(100L);
		store.chargeNow(List.of(this.minute), 600, BudgetStore.Charge.IF_ADMITTED);
		this.now.addAndGet(30_000);
		assertThat(store.chargeNow(List.of(this.minute), 0, BudgetStore.Charge.ALWAYS).levels()[0]).isCloseTo(300,
				within(1e-9));
		this.now.addAndGet(600_000);
		assertThat(store.chargeNow(List.of(this.minute), 0, BudgetStore.Charge.ALWAYS).levels()[0]).isEqualTo(600);
	}

	@Test
	void aCostAboveTheLimitNeedsAFullBucketAndLeavesADebt() {
		LocalBudgetStore store = store(100L);
		BudgetStore.Levels big = store.chargeNow(List.of(this.minute), 900, BudgetStore.Charge.IF_ADMITTED);
		assertThat(big.admitted()).isTrue();
		assertThat(big.levels()[0]).isEqualTo(-300);
		// Settled lower: the difference comes back, never above the limit.
		assertThat(store.chargeNow(List.of(this.minute), -2_000, BudgetStore.Charge.ALWAYS).levels()[0]).isEqualTo(600);
	}

	@Test
	void shadowChargesWhatItWouldRefuse() {
		LocalBudgetStore store = store(100L);
		store.chargeNow(List.of(this.minute), 600, BudgetStore.Charge.SHADOW);
		BudgetStore.Levels over = store.chargeNow(List.of(this.minute), 100, BudgetStore.Charge.SHADOW);
		assertThat(over.admitted()).isFalse();
		assertThat(over.levels()[0]).isEqualTo(-100);
	}

	@Test
	void unlistedBucketsAreBoundedAndNeverEvictAConfiguredOne() {
		LocalBudgetStore store = store(10L);
		store.chargeNow(List.of(this.minute), 600, BudgetStore.Charge.IF_ADMITTED);
		for (int i = 0; i < 1_000; i++) {
			store.chargeNow(List.of(new BudgetLine("{client-" + i + "}:m", 600, BudgetLine.MINUTE_MILLIS)), 1,
					BudgetStore.Charge.IF_ADMITTED);
		}
		assertThat(store.size()).isLessThanOrEqualTo(10);
		assertThat(store.chargeNow(List.of(this.minute), 1, BudgetStore.Charge.IF_ADMITTED).admitted()).isFalse();
	}

	@Test
	void anUnlistedNameChargedSteadilyKeepsItsSpentBucketThroughABurstOfNewNames() {
		LocalBudgetStore store = store(10L);
		BudgetLine steady = new BudgetLine("{steady}:m", 600, BudgetLine.MINUTE_MILLIS);
		BudgetLine once = new BudgetLine("{once}:m", 600, BudgetLine.MINUTE_MILLIS);
		store.chargeNow(List.of(steady), 600, BudgetStore.Charge.IF_ADMITTED);
		store.chargeNow(List.of(once), 600, BudgetStore.Charge.IF_ADMITTED);
		for (int i = 0; i < 1_000; i++) {
			store.chargeNow(List.of(new BudgetLine("{new-" + i + "}:m", 600, BudgetLine.MINUTE_MILLIS)), 1,
					BudgetStore.Charge.IF_ADMITTED);
			if (i % 5 == 0) {
				assertThat(store.chargeNow(List.of(steady), 1, BudgetStore.Charge.IF_ADMITTED).admitted()).isFalse();
			}
			store.size();
		}
		// The spent name charged all along is still spent; the one charged once is
		// forgotten and starts full.
		assertThat(store.chargeNow(List.of(steady), 1, BudgetStore.Charge.IF_ADMITTED).admitted()).isFalse();
		assertThat(store.chargeNow(List.of(once), 600, BudgetStore.Charge.IF_ADMITTED).admitted()).isTrue();
	}

	@Test
	void admissionReportsTheBindingLineAndTheWait() {
		LocalBudgetStore store = store(100L);
		store.chargeNow(List.of(this.minute, this.day), 550, BudgetStore.Charge.IF_ADMITTED);
		BudgetStore.Levels levels = store.chargeNow(List.of(this.minute, this.day), 200,
				BudgetStore.Charge.IF_ADMITTED);
		Admission refused = new Admission("a", null, List.of(this.minute, this.day), 0, Admission.Outcome.REFUSED,
				levels);
		assertThat(refused.limit()).isEqualTo(600);
		assertThat(refused.remaining()).isEqualTo(50);
		// 550 tokens to refill at 10 a second.
		assertThat(refused.resetMillis()).isEqualTo(55_000);
		// 150 more tokens for a request of 200.
		assertThat(refused.retryAfterMillis(200)).isEqualTo(15_000);
	}

}

package io.github.dualmap.tenant;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Requests served unchecked while the store fails open are charged once it answers again.
 */
class TokenBudgetsUncheckedTests {

	private final AtomicLong now = new AtomicLong(1_000_000);

	private final AtomicBoolean down = new AtomicBoolean();

	private final AtomicBoolean settlementsFail = new AtomicBoolean();

	private final LocalBudgetStore local = new LocalBudgetStore(100, this.now::get, key -> true);

	/** The local store, or a failure while {@code down}. */
	private final BudgetStore store = new BudgetStore() {
		@Override
		public Mono<Levels> charge(List<BudgetLine> lines, double cost, Charge charge) {
			boolean fails = TokenBudgetsUncheckedTests.this.down.get()
					|| (charge == Charge.ALWAYS && TokenBudgetsUncheckedTests.this.settlementsFail.get());
			return fails ? Mono.error(new IllegalStateException("store down"))
					: TokenBudgetsUncheckedTests.this.local.charge(lines, cost, charge);
		}

		@Override
		public String kind() {
			return "test";
		}
	};

	private TokenBudgets budgets() {
		TenantProperties.Tenant acme = new TenantProperties.Tenant();
		acme.setTokensPerDay(1000L);
		TenantDirectory directory = new TenantDirectory(Map.of("acme", acme), new TenantProperties.Tenant(), 64);
		return new TokenBudgets(directory, this.store, TenantProperties.TenantMode.ENFORCE, Duration.ofSeconds(1),
				TenantProperties.FailureMode.OPEN, new TenantProperties.Cost(),
				new GenAiMeters(new SimpleMeterRegistry()), this.now::get);
	}

	private long remaining(TokenBudgets budgets) {
		return budgets.view().get("acme").budgets().get(0).remaining();
	}

	@Test
	void whatWasServedUncheckedIsChargedWhenTheStoreAnswersAgain() {
		TokenBudgets budgets = budgets();
		Admission first = budgets.admit("acme", null, 100).block();
		assertThat(first.outcome()).isEqualTo(Admission.Outcome.ADMITTED);
		budgets.settle(first, 100, new TokenUsage(90, 0, 10));
		assertThat(remaining(budgets)).isEqualTo(900);

		this.down.set(true);
		for (int i = 0; i < 3; i++) {
			Admission unchecked = budgets.admit("acme", null, 100).block();
			assertThat(unchecked.outcome()).isEqualTo(Admission.Outcome.UNCHECKED);
			assertThat(unchecked.served()).isTrue();
			budgets.settle(unchecked, 120, new TokenUsage(100, 0, 20));
		}
		assertThat(budgets.pendingTokens()).isEqualTo(360);

		this.down.set(false);
		Admission back = budgets.admit("acme", null, 100).block();
		assertThat(back.outcome()).isEqualTo(Admission.Outcome.ADMITTED);
		assertThat(budgets.pendingTokens()).isZero();
		// 100 and the three unchecked 120s are charged, the new admission's 100 too.
		Admission after = budgets.admit("acme", null, 1).block();
		assertThat(after.remaining()).isEqualTo(1000 - 100 - 360 - 100 - 1);
	}

	@Test
	void aFlushThatFailsKeepsWhatIsOwed() {
		TokenBudgets budgets = budgets();
		this.down.set(true);
		Admission unchecked = budgets.admit("acme", null, 50).block();
		budgets.settle(unchecked, 70, new TokenUsage(60, 0, 10));
		Admission again = budgets.admit("acme", null, 50).block();
		budgets.settle(again, 30, new TokenUsage(20, 0, 10));
		assertThat(budgets.pendingTokens()).isEqualTo(100);
		this.down.set(false);
		this.settlementsFail.set(true);
		budgets.admit("acme", null, 1).block();
		assertThat(budgets.pendingTokens()).as("the flush failed: still owed").isEqualTo(100);
		this.settlementsFail.set(false);
		budgets.admit("acme", null, 1).block();
		assertThat(budgets.pendingTokens()).isZero();
		assertThat(budgets.admit("acme", null, 1).block().remaining()).isEqualTo(1000 - 100 - 3);
	}

}

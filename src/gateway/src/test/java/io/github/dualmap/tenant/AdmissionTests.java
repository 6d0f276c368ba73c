package io.github.dualmap.tenant;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a refusal reports: the budget that refused, which need not be the one with the
 * least left.
 */
class AdmissionTests {

	private static final BudgetLine TENANT = new BudgetLine("{acme}:m", 1000, BudgetLine.MINUTE_MILLIS);

	private static final BudgetLine MODEL = new BudgetLine("{acme}:model:m1:m", 300, BudgetLine.MINUTE_MILLIS);

	private static Admission refused(String model, List<BudgetLine> lines, double... levels) {
		return new Admission("acme", model, lines, 0, Admission.Outcome.REFUSED,
				new BudgetStore.Levels(false, levels, 0));
	}

	@Test
	void theRefusingBudgetIsTheOneTheRequestWouldWaitLongestFor() {
		// The tenant's line has the smaller share left (0.90 against 0.97), but a
		// request of 295 fits in it: the model's line is the one it waits for.
		Admission a = refused("m1", List.of(TENANT, MODEL), 900, 290);
		assertThat(a.bindingLine()).isZero();
		int line = a.refusingLine(295);
		assertThat(line).isOne();
		assertThat(a.limit(line)).isEqualTo(300);
		assertThat(a.remaining(line)).isEqualTo(290);
		assertThat(a.modelLine(line)).isTrue();
		// The tenant's own budget refuses: no model in the message, whatever the request
		// names.
		Admission own = refused("m1", List.of(TENANT), 50);
		assertThat(own.refusingLine(100)).isZero();
		assertThat(own.modelLine(0)).isFalse();
	}

}

package io.github.dualmap.tenant;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A request's admission against its tenant's budgets: what it was charged on its
 * estimate, and the state of the budget that binds it, for the rate-limit headers.
 *
 * @param tenant the tenant, as resolved
 * @param model the requested model, if any
 * @param lines the budgets charged
 * @param charged tokens taken from {@code lines} at admission (the estimate; 0 when
 * nothing was taken)
 * @param outcome what admission decided
 * @param levels the levels after the charge, {@code null} when the store did not answer
 */
public record Admission(String tenant, @Nullable String model, List<BudgetLine> lines, long charged, Outcome outcome,
		BudgetStore.@Nullable Levels levels) {

	/** What admission decided. */
	public enum Outcome {

		/** Within budget (or no budget applies). */
		ADMITTED,

		/** Over budget: refused with 429. */
		REFUSED,

		/** Over budget in shadow mode: served, charged and counted. */
		OVER_IN_SHADOW,

		/** The store failed and fails open: served unchecked. */
		UNCHECKED,

		/** The store failed and fails closed: refused with 503. */
		UNAVAILABLE;

		/** The value of the {@code outcome} meter tag. */
		public String tag() {
			return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
		}

	}

	/** Whether the request goes on to an engine. */
	public boolean served() {
		return this.outcome != Outcome.REFUSED && this.outcome != Outcome.UNAVAILABLE;
	}

	/**
	 * The index of the line that binds, for the rate-limit headers: the one with the
	 * smallest share left. -1 when there is none (no budget, or the store did not
	 * answer). What refused a request is {@link #refusingLine}.
	 */
	public int bindingLine() {
		BudgetStore.Levels l = this.levels;
		if (l == null || this.lines.isEmpty()) {
			return -1;
		}
		int best = 0;
		for (int i = 1; i < this.lines.size(); i++) {
			if (share(i) < share(best)) {
				best = i;
			}
		}
		return best;
	}

	private double share(int i) {
		return this.levels.levels()[i] / this.lines.get(i).limit();
	}

	/**
	 * The index of the line that refuses a request of {@code cost}: the one it would wait
	 * longest for, each wait at most its line's window (a line with a smaller share left
	 * may still hold what the request needs); -1 when there is none.
	 */
	public int refusingLine(double cost) {
		BudgetStore.Levels l = this.levels;
		if (l == null || this.lines.isEmpty()) {
			return -1;
		}
		int worst = 0;
		long longest = -1;
		for (int i = 0; i < this.lines.size(); i++) {
			long wait = waitMillis(l, i, cost);
			if (wait > longest) {
				longest = wait;
				worst = i;
			}
		}
		return worst;
	}

	/**
	 * Milliseconds until line {@code i}, at {@code levels}, holds what {@code cost}
	 * needs, as a client is told: at most the line's window ({@link #told}).
	 */
	private long waitMillis(BudgetStore.Levels levels, int i, double cost) {
		BudgetLine line = this.lines.get(i);
		return told(line, line.millisUntil(levels.levels()[i], line.needed(cost)));
	}

	/**
	 * A wait on {@code line} as a client is told it: at most the line's window, the time
	 * an empty bucket takes to fill. A longer wait means a bucket in debt, mostly the
	 * estimate of a request still running on a {@code max_tokens} far past the budget,
	 * which its settlement on its actual usage gives back: paid off at the refill rate, a
	 * request of a billion tokens on a thousand a day would be a wait of millennia. A
	 * client that comes back after a window and still finds the debt is told again.
	 */
	private static long told(BudgetLine line, long millis) {
		return Math.min(millis, line.windowMillis());
	}

	/** Tokens line {@code i} holds when full. */
	public long limit(int i) {
		return this.lines.get(i).limit();
	}

	/**
	 * Whole tokens left in line {@code i} (never below 0); -1 when the store did not
	 * answer.
	 */
	public long remaining(int i) {
		BudgetStore.Levels l = this.levels;
		return l == null ? -1 : (long) Math.max(0, Math.floor(l.levels()[i]));
	}

	/**
	 * Whether line {@code i} is a budget of the requested model rather than the tenant's
	 * own.
	 */
	public boolean modelLine(int i) {
		return this.lines.get(i).key().contains("}:" + TenantDirectory.MODEL_KEY);
	}

	/** Tokens the binding budget holds when full; -1 for none. */
	public long limit() {
		int i = bindingLine();
		return i < 0 ? -1 : this.lines.get(i).limit();
	}

	/** Whole tokens left in the binding budget (never below 0); -1 for none. */
	public long remaining() {
		int i = bindingLine();
		return i < 0 ? -1 : remaining(i);
	}

	/**
	 * Milliseconds until the binding budget is full again, at most its window (as
	 * {@link #retryAfterMillis}); -1 for none.
	 */
	public long resetMillis() {
		int i = bindingLine();
		if (i < 0) {
			return -1;
		}
		BudgetLine line = this.lines.get(i);
		return told(line, line.millisUntilFull(this.levels.levels()[i]));
	}

	/**
	 * Milliseconds until every budget holds what a request of {@code cost} needs (for
	 * {@code Retry-After}); 0 when it would be admitted now. At most the window of the
	 * budget that refuses it: a bucket refills from empty in one window, and a wait past
	 * that is a debt that a running request's settlement mostly gives back.
	 */
	public long retryAfterMillis(double cost) {
		// The budget that refuses it is the one it waits longest for.
		int i = refusingLine(cost);
		return i < 0 ? 0 : waitMillis(this.levels, i, cost);
	}

}

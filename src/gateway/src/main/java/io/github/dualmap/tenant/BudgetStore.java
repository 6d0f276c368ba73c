package io.github.dualmap.tenant;

import java.util.List;

import reactor.core.publisher.Mono;

/**
 * Keeps the levels of token budgets and charges them atomically: all the lines of one
 * request are checked and charged together, or none is.
 */
public interface BudgetStore {

	/**
	 * Refills {@code lines} to now, then applies {@code cost} as {@code charge} says.
	 * @param cost tokens to take (negative: to give back)
	 * @return whether every line held what the cost needs ({@link BudgetLine#needed})
	 * before the charge, and the levels after it, in the order of {@code lines}
	 */
	Mono<Levels> charge(List<BudgetLine> lines, double cost, Charge charge);

	/**
	 * {@link #charge(List, double, Charge)} that {@link #revoke} can take back: for a
	 * store whose answer may come too late to wait for (a remote one), the caller that
	 * gives up on it revokes it, so that it counts once (nothing) whether or not the
	 * store applied it. A store that always answers at once ignores {@code id}.
	 * @param id names this charge (unique for a while, as a request id is)
	 */
	default Mono<Levels> charge(List<BudgetLine> lines, double cost, Charge charge, String id) {
		return charge(lines, cost, charge);
	}

	/**
	 * Gives back what the charge named {@code id} to {@code lines} took, if it was
	 * applied; one that has not arrived yet will take nothing when it does.
	 */
	default Mono<Void> revoke(List<BudgetLine> lines, String id) {
		return Mono.empty();
	}

	/** Where it keeps the budgets, as {@code dualmap.tenants.store} names it. */
	String kind();

	/** How a cost is applied. */
	enum Charge {

		/** Taken whatever the levels: an adjustment once actual usage is known. */
		ALWAYS,

		/** Taken only when every line holds what it needs (enforced budgets). */
		IF_ADMITTED,

		/** Checked, and taken whether or not it is admitted (shadow mode). */
		SHADOW

	}

	/**
	 * The outcome of a charge.
	 *
	 * @param admitted whether every line held what the cost needed before it
	 * @param levels each line's level after the charge
	 * @param atMillis the store's clock when it charged (Redis's own, for a shared store)
	 */
	record Levels(boolean admitted, double[] levels, long atMillis) {

	}

}

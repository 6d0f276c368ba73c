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

package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToDoubleFunction;

import org.jspecify.annotations.Nullable;

/**
 * Picks the lowest-cost element and, among equal costs, takes turns. The peer routers
 * break ties at random (llm-d shuffles before its max-score picker, Dynamo samples among
 * the best); rotating keeps the same spread while a simulation stays reproducible.
 * Thread-safe.
 */
final class TieBreaker {

	// Costs within this relative distance are equal: they come from sums of doubles.
	private static final double RELATIVE_TOLERANCE = 1e-9;

	private final AtomicLong turn = new AtomicLong();

	/** The element of {@code items} with the lowest cost; {@code null} when empty. */
	<T> @Nullable T lowest(Collection<T> items, ToDoubleFunction<T> cost) {
		List<T> best = new ArrayList<>(2);
		double bestCost = Double.POSITIVE_INFINITY;
		for (T item : items) {
			double c = cost.applyAsDouble(item);
			if (best.isEmpty() || c < bestCost && !same(c, bestCost)) {
				best.clear();
				best.add(item);
				bestCost = c;
			}
			else if (same(c, bestCost)) {
				best.add(item);
			}
		}
		if (best.isEmpty()) {
			return null;
		}
		return best.size() == 1 ? best.get(0) : best.get((int) Math.floorMod(turn.getAndIncrement(), best.size()));
	}

	private static boolean same(double a, double b) {
		if (a == b) {
			return true;
		}
		return Math.abs(a - b) <= RELATIVE_TOLERANCE * Math.max(Math.abs(a), Math.abs(b));
	}

}

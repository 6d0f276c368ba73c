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
		return lowest(items, cost, null);
	}

	/**
	 * The element of {@code items} with the lowest cost; among equal costs the one a hash
	 * of {@code request}'s id picks, or the next in turn when {@code request} is null.
	 * The hash stands for the real routers' random pick and, unlike turns, does not make
	 * router replicas that start alike pick the same instance in lockstep.
	 */
	<T> @Nullable T lowest(Collection<T> items, ToDoubleFunction<T> cost, @Nullable RoutingRequest request) {
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
		if (best.size() == 1) {
			return best.get(0);
		}
		long pick = request == null ? turn.getAndIncrement() : mix(request.id().hashCode());
		return best.get((int) Math.floorMod(pick, best.size()));
	}

	// SplitMix64's finaliser: neighbouring ids spread over every residue.
	private static long mix(long x) {
		long z = x + 0x9E3779B97F4A7C15L;
		z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
		z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
		return (z ^ (z >>> 31)) & Long.MAX_VALUE;
	}

	private static boolean same(double a, double b) {
		if (a == b) {
			return true;
		}
		return Math.abs(a - b) <= RELATIVE_TOLERANCE * Math.max(Math.abs(a), Math.abs(b));
	}

}

package io.github.dualmap.core;

import java.util.List;

/**
 * The SGLang Model Gateway's spill gate for a cache-aware choice (smg-project/smg
 * {@code model_gateway/src/policies/cache_aware.rs}, {@code gate_selected_candidate}, smg
 * #2161): a candidate whose in-flight count is above both {@code relThreshold} x the mean
 * over the accepting instances and the mean + {@code absThreshold} spills; when every
 * candidate does, the {@link ExpectedWaitSelector} picks among the accepting instances
 * that do not trip the gate themselves ({@code select_final_from_affinity}). Stateless.
 */
final class SpillGate {

	private final int absThreshold;

	private final double relThreshold;

	/**
	 * @param absThreshold in flight above the mean + this, >= 0
	 * @param relThreshold and above this x the mean, >= 1 and finite
	 */
	SpillGate(int absThreshold, double relThreshold) {
		checkThresholds(absThreshold, relThreshold);
		this.absThreshold = absThreshold;
		this.relThreshold = relThreshold;
	}

	/**
	 * Refuses the SGLang routers' balance thresholds out of their range: an absolute one
	 * below 0, a relative one below 1 or infinite.
	 */
	static void checkThresholds(int absThreshold, double relThreshold) {
		if (absThreshold < 0) {
			throw new IllegalArgumentException("balanceAbsThreshold must be >= 0 but was " + absThreshold);
		}
		if (!(relThreshold >= 1) || Double.isInfinite(relThreshold)) {
			throw new IllegalArgumentException("balanceRelThreshold must be >= 1 and finite but was " + relThreshold);
		}
	}

	/**
	 * The candidates the selector picks among once the cache has named {@code holders}
	 * (not empty): those not past both margins, measured against the mean over
	 * {@code accepting}; when every holder is past them, a spill to the accepting
	 * instances not past them themselves, or to all of them when every one is.
	 */
	Candidates candidates(List<InstanceState> holders, List<InstanceState> accepting) {
		long sum = 0;
		for (InstanceState s : accepting) {
			sum += s.inFlight();
		}
		double mean = (double) sum / accepting.size();
		List<InstanceState> passing = passing(holders, mean);
		if (!passing.isEmpty()) {
			return new Candidates(passing, false);
		}
		List<InstanceState> targets = passing(accepting, mean);
		return new Candidates(targets.isEmpty() ? accepting : targets, true);
	}

	private List<InstanceState> passing(List<InstanceState> instances, double mean) {
		return instances.stream()
			.filter(s -> !(s.inFlight() > mean * relThreshold && s.inFlight() > mean + absThreshold))
			.toList();
	}

	/**
	 * What {@link #candidates} leaves: {@code instances}, and whether the request spilled
	 * (its holders all past the gate).
	 */
	record Candidates(List<InstanceState> instances, boolean spilled) {

	}

}

package io.github.dualmap.core;

import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The SGLang Model Gateway's load rules for a cache-aware choice (smg-project/smg
 * {@code model_gateway/src/policies/cache_aware.rs}, {@code gate_selected_candidate} and
 * the min-load gather of {@code select_worker}): a candidate whose in-flight count is
 * above both {@code relThreshold} x the mean over the accepting instances and the mean +
 * {@code absThreshold} spills to the least loaded instance, which is the one with the
 * fewest in flight, then the fewest requests this router selected it for, then the first
 * in pool order. Thread-safe.
 */
final class SpillGate {

	private final int absThreshold;

	private final double relThreshold;

	private final PerInstance<AtomicLong> selections = new PerInstance<>(AtomicLong::new);

	/**
	 * @param absThreshold in flight above the mean + this, >= 0
	 * @param relThreshold and above this x the mean, >= 1 and finite
	 */
	SpillGate(int absThreshold, double relThreshold) {
		if (absThreshold < 0) {
			throw new IllegalArgumentException("balanceAbsThreshold must be >= 0 but was " + absThreshold);
		}
		if (!(relThreshold >= 1) || Double.isInfinite(relThreshold)) {
			throw new IllegalArgumentException("balanceRelThreshold must be >= 1 and finite but was " + relThreshold);
		}
		this.absThreshold = absThreshold;
		this.relThreshold = relThreshold;
	}

	/** Whether {@code candidate}, one of {@code accepting}, is past both margins. */
	boolean spills(InstanceState candidate, List<InstanceState> accepting) {
		long sum = 0;
		for (InstanceState s : accepting) {
			sum += s.inFlight();
		}
		double mean = (double) sum / accepting.size();
		int load = candidate.inFlight();
		return load > mean * relThreshold && load > mean + absThreshold;
	}

	/** The least loaded of {@code accepting}, which must not be empty. */
	InstanceState leastLoaded(List<InstanceState> accepting) {
		InstanceState least = accepting.get(0);
		long leastSelected = selections.get(least.id()).get();
		for (int i = 1; i < accepting.size(); i++) {
			InstanceState s = accepting.get(i);
			long n = selections.get(s.id()).get();
			if (s.inFlight() < least.inFlight() || s.inFlight() == least.inFlight() && n < leastSelected) {
				least = s;
				leastSelected = n;
			}
		}
		return least;
	}

	/** This router selected {@code instanceId} for a request. */
	void selected(String instanceId) {
		selections.get(instanceId).incrementAndGet();
	}

	/** Forgets instances no longer in {@code pool}; returns the members' ids. */
	Set<String> retainMembers(InstancePool pool) {
		return selections.retainMembers(pool);
	}

}

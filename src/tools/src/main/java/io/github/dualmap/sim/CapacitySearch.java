package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.DoubleFunction;

import org.jspecify.annotations.Nullable;

/**
 * Finds the highest arrival rate at which a policy still meets the SLO for {@code target}
 * (90 % unless asked otherwise) of measured requests: doubling (or halving) from a start
 * rate until the verdict flips, then bisecting between the last passing and the first
 * failing rate to a relative tolerance. Every evaluated rate is kept for the attainment
 * chart.
 *
 * @param startRate first rate tried, requests per second
 * @param tolerance relative width of the final bracket, e.g. 0.02
 * @param maxSteps bound on doublings and on halvings
 * @param target the share of measured requests within the SLO a rate must reach
 * @param promptTokenTarget the share of measured prompt tokens the requests within the
 * SLO must hold as well (0: none)
 */
public record CapacitySearch(double startRate, double tolerance, int maxSteps, double target,
		double promptTokenTarget) {

	/** A search at {@link Simulation#TARGET_ATTAINMENT}. */
	public CapacitySearch(double startRate, double tolerance, int maxSteps) {
		this(startRate, tolerance, maxSteps, Simulation.TARGET_ATTAINMENT);
	}

	/** A search that asks nothing of the prompt tokens. */
	public CapacitySearch(double startRate, double tolerance, int maxSteps, double target) {
		this(startRate, tolerance, maxSteps, target, 0);
	}

	public CapacitySearch {
		if (!(target > 0 && target <= 1)) {
			throw new IllegalArgumentException("target must be in (0, 1] but was " + target);
		}
		if (!(promptTokenTarget >= 0 && promptTokenTarget <= 1)) {
			throw new IllegalArgumentException("promptTokenTarget must be in [0, 1] but was " + promptTokenTarget);
		}
		if (!(startRate > 0) || Double.isInfinite(startRate)) {
			throw new IllegalArgumentException("startRate must be > 0 but was " + startRate);
		}
		if (!(tolerance > 0 && tolerance < 1)) {
			throw new IllegalArgumentException("tolerance must be in (0, 1) but was " + tolerance);
		}
		if (maxSteps <= 0) {
			throw new IllegalArgumentException("maxSteps must be > 0 but was " + maxSteps);
		}
	}

	/**
	 * Searches with {@code run} evaluating one rate.
	 * @param progress called after every evaluated rate
	 */
	public Outcome search(DoubleFunction<RunResult> run, Runnable progress) {
		List<RunResult> points = new ArrayList<>();
		RunResult first = evaluate(run, startRate, points, progress);
		RunResult best = null;
		double lo;
		double hi;
		if (passes(first)) {
			best = first;
			lo = startRate;
			hi = Double.NaN;
			for (int i = 0; i < maxSteps && Double.isNaN(hi); i++) {
				RunResult r = evaluate(run, lo * 2, points, progress);
				if (passes(r)) {
					best = r;
					lo = r.rate();
				}
				else {
					hi = r.rate();
				}
			}
			if (Double.isNaN(hi)) {
				// Never failed within the bound: report the highest rate tried.
				return new Outcome(lo, best, sorted(points));
			}
		}
		else {
			hi = startRate;
			lo = Double.NaN;
			for (int i = 0; i < maxSteps && Double.isNaN(lo); i++) {
				RunResult r = evaluate(run, hi / 2, points, progress);
				if (passes(r)) {
					best = r;
					lo = r.rate();
				}
				else {
					hi = r.rate();
				}
			}
			if (Double.isNaN(lo)) {
				return new Outcome(0, null, sorted(points));
			}
		}
		while ((hi - lo) / lo > tolerance) {
			RunResult r = evaluate(run, (lo + hi) / 2, points, progress);
			if (passes(r)) {
				best = r;
				lo = r.rate();
			}
			else {
				hi = r.rate();
			}
		}
		return new Outcome(lo, best, sorted(points));
	}

	private boolean passes(RunResult r) {
		return r.passes(target, promptTokenTarget);
	}

	/** Rates a search evaluates in the usual case, for sizing a progress bar. */
	public int expectedEvaluations() {
		return 4 + (int) Math.ceil(Math.log(1 / tolerance) / Math.log(2));
	}

	private static RunResult evaluate(DoubleFunction<RunResult> run, double rate, List<RunResult> points,
			Runnable progress) {
		RunResult r = run.apply(rate);
		points.add(r);
		progress.run();
		return r;
	}

	private static List<RunResult> sorted(List<RunResult> points) {
		return points.stream().sorted(Comparator.comparingDouble(RunResult::rate)).toList();
	}

	/**
	 * What a search found.
	 *
	 * @param capacity highest passing rate, 0 when even the lowest rate tried failed
	 * @param atCapacity the run at that rate, {@code null} when none passed
	 * @param points every evaluated rate, by rate
	 */
	public record Outcome(double capacity, @Nullable RunResult atCapacity, List<RunResult> points) {
	}

}

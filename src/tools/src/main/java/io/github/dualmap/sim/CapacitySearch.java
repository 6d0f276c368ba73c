package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.DoubleFunction;

import org.jspecify.annotations.Nullable;

/**
 * Finds the highest arrival rate at which a policy passes the headline
 * ({@link RunResult#passesHeadline}: of the feasible requests, {@code target} of the
 * requests and {@code promptTokenTarget} of their prompt tokens within the SLO, no
 * prompt-size quartile below {@code sizeFloor}, not transient): doubling (or halving)
 * from a start rate until the verdict flips, then bisecting between the last passing and
 * the first failing rate to a relative tolerance. Then the request-only capacity
 * ({@link RunResult#passesRequests}: {@code target} of all measured requests) from the
 * same evaluated rates, bisecting further only where they leave its bracket wider than
 * the tolerance. Every evaluated rate is kept for the attainment chart.
 *
 * @param startRate first rate tried, requests per second
 * @param tolerance relative width of the final bracket, e.g. 0.02
 * @param maxSteps bound on doublings (and on halvings, at most {@link #MAX_HALVINGS})
 * @param target the share of measured requests within the SLO a rate must reach
 * @param promptTokenTarget the share of the feasible requests' prompt tokens the requests
 * within the SLO must hold as well (0: none)
 * @param sizeFloor the share of each prompt-size quartile of the feasible requests that
 * must be within the SLO (0: none)
 */
public record CapacitySearch(double startRate, double tolerance, int maxSteps, double target, double promptTokenTarget,
		double sizeFloor) {

	/**
	 * Halvings below the start rate before a search gives up (capacity 0): an eighth of
	 * the start. Lower rates say nothing about capacity, and a replay at them lasts so
	 * long in virtual time that its scrape ticks dominate the cost.
	 */
	public static final int MAX_HALVINGS = 3;

	/** A search that asks nothing of the size quartiles. */
	public CapacitySearch(double startRate, double tolerance, int maxSteps, double target, double promptTokenTarget) {
		this(startRate, tolerance, maxSteps, target, promptTokenTarget, 0);
	}

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
		if (!(sizeFloor >= 0 && sizeFloor <= 1)) {
			throw new IllegalArgumentException("sizeFloor must be in [0, 1] but was " + sizeFloor);
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
				return outcome(run, lo, best, points, progress);
			}
		}
		else {
			hi = startRate;
			lo = Double.NaN;
			for (int i = 0; i < Math.min(maxSteps, MAX_HALVINGS) && Double.isNaN(lo); i++) {
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
				return outcome(run, 0, null, points, progress);
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
		return outcome(run, lo, best, points, progress);
	}

	private Outcome outcome(DoubleFunction<RunResult> run, double capacity, @Nullable RunResult best,
			List<RunResult> points, Runnable progress) {
		double requests = requestsCapacity(run, points, progress);
		// Of the runs, only the one at capacity is reported request by request.
		List<RunResult> kept = points.stream().map(p -> p == best ? p : p.withoutRequestLog()).toList();
		return new Outcome(capacity, best, sorted(kept), requests);
	}

	/**
	 * The highest rate passing on requests alone: bracketed by the rates evaluated so
	 * far, widened by doubling or halving when they all pass or all fail, and bisected to
	 * the tolerance; new runs join {@code points}.
	 */
	private double requestsCapacity(DoubleFunction<RunResult> run, List<RunResult> points, Runnable progress) {
		double lo = Double.NaN;
		for (RunResult r : points) {
			if (r.passesRequests(target) && !(r.rate() <= lo)) {
				lo = r.rate();
			}
		}
		double lowest = points.stream().mapToDouble(RunResult::rate).min().orElse(startRate);
		for (int i = 0; i < Math.min(maxSteps, MAX_HALVINGS) && Double.isNaN(lo); i++) {
			lowest /= 2;
			RunResult r = evaluate(run, lowest, points, progress);
			if (r.passesRequests(target)) {
				lo = r.rate();
			}
		}
		if (Double.isNaN(lo)) {
			return 0;
		}
		double hi = failingAbove(points, lo);
		for (int i = 0; i < maxSteps && Double.isNaN(hi); i++) {
			RunResult r = evaluate(run, lo * 2, points, progress);
			if (r.passesRequests(target)) {
				lo = r.rate();
			}
			else {
				hi = r.rate();
			}
		}
		if (Double.isNaN(hi)) {
			return lo;
		}
		while ((hi - lo) / lo > tolerance) {
			RunResult r = evaluate(run, (lo + hi) / 2, points, progress);
			if (r.passesRequests(target)) {
				lo = r.rate();
			}
			else {
				hi = r.rate();
			}
		}
		return lo;
	}

	private static double failingAbove(List<RunResult> points, double lo) {
		double hi = Double.NaN;
		for (RunResult r : points) {
			if (r.rate() > lo && !(r.rate() >= hi)) {
				hi = r.rate();
			}
		}
		return hi;
	}

	private boolean passes(RunResult r) {
		return r.passesHeadline(target, promptTokenTarget, sizeFloor);
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
	 * @param requestsCapacity highest rate passing on requests alone
	 * ({@link RunResult#passesRequests}), 0 when none did
	 */
	public record Outcome(double capacity, @Nullable RunResult atCapacity, List<RunResult> points,
			double requestsCapacity) {
	}

}

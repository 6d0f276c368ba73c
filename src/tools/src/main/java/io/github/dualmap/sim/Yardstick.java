package io.github.dualmap.sim;

import java.util.Arrays;
import java.util.List;
import java.util.function.IntToLongFunction;

import io.github.dualmap.engine.EngineProfile;
import io.github.dualmap.sim.trace.Trace;
import io.github.dualmap.sim.trace.TraceRequest;

/**
 * What a run of one workload is judged on, computed once per workload, engine profile and
 * objectives: which measured requests are <em>feasible</em>, the prompt-size quartiles of
 * the feasible ones, and each request's engine work.
 * <p>
 * A measured request is feasible when an idle engine of the profile, with every prefix an
 * earlier request computed still cached (the costing of {@link WorkBound}), gives its
 * first token within the request's own objective, the network delay both ways included.
 * No router can serve an infeasible request in time, so the headline capacity judges
 * neither side on them; they are still simulated and reported. A request's work is its
 * {@link WorkBound} engine time with that cache: the least engine time serving it takes,
 * whatever the router.
 */
public final class Yardstick {

	/** Prompt-size quartiles of the feasible measured requests. */
	public static final int QUARTILES = 4;

	private final int warmup;

	private final boolean[] feasible;

	// Quartile of each feasible measured request, -1 for the rest.
	private final byte[] quartile;

	private final int[] quartileCount;

	private final int[] quartileMin;

	private final int[] quartileMax;

	// Engine seconds of each request with every earlier prefix cached; null when unknown.
	private final double[] workSeconds;

	// Prompt tokens of each request.
	private final int[] tokens;

	private final int feasibleCount;

	private final long feasibleTokens;

	private Yardstick(Trace trace, int warmup, boolean[] feasible, double[] workSeconds) {
		this.warmup = warmup;
		this.feasible = feasible;
		this.workSeconds = workSeconds;
		List<TraceRequest> requests = trace.requests();
		this.tokens = new int[requests.size()];
		for (int i = 0; i < tokens.length; i++) {
			tokens[i] = requests.get(i).inputTokens();
		}
		Integer[] order = new Integer[requests.size() - warmup];
		int n = 0;
		long tokens = 0;
		for (int i = warmup; i < requests.size(); i++) {
			if (feasible[i]) {
				order[n++] = i;
				tokens += requests.get(i).inputTokens();
			}
		}
		this.feasibleCount = n;
		this.feasibleTokens = tokens;
		Integer[] sorted = Arrays.copyOf(order, n);
		Arrays.sort(sorted, (a, b) -> {
			int c = Integer.compare(requests.get(a).inputTokens(), requests.get(b).inputTokens());
			return c != 0 ? c : Integer.compare(a, b);
		});
		this.quartile = new byte[requests.size()];
		Arrays.fill(quartile, (byte) -1);
		this.quartileCount = new int[QUARTILES];
		this.quartileMin = new int[QUARTILES];
		this.quartileMax = new int[QUARTILES];
		Arrays.fill(quartileMin, Integer.MAX_VALUE);
		for (int rank = 0; rank < n; rank++) {
			int q = (int) ((long) rank * QUARTILES / n);
			int i = sorted[rank];
			int p = requests.get(i).inputTokens();
			quartile[i] = (byte) q;
			quartileCount[q]++;
			quartileMin[q] = Math.min(quartileMin[q], p);
			quartileMax[q] = Math.max(quartileMax[q], p);
		}
		for (int q = 0; q < QUARTILES; q++) {
			if (quartileCount[q] == 0) {
				quartileMin[q] = 0;
			}
		}
	}

	private Yardstick(Yardstick judged, double[] workSeconds) {
		this.warmup = judged.warmup;
		this.feasible = judged.feasible;
		this.tokens = judged.tokens;
		this.quartile = judged.quartile;
		this.quartileCount = judged.quartileCount;
		this.quartileMin = judged.quartileMin;
		this.quartileMax = judged.quartileMax;
		this.feasibleCount = judged.feasibleCount;
		this.feasibleTokens = judged.feasibleTokens;
		this.workSeconds = workSeconds;
	}

	/**
	 * This yardstick's judgement (which requests are feasible, their quartiles) with each
	 * request's work taken from {@code workSeconds} (indexed as the trace), e.g. costed
	 * with {@link WorkBound#pooledLruWorkSeconds a pooled LRU cache}'s reuse.
	 */
	Yardstick withWork(double[] workSeconds) {
		if (workSeconds.length != feasible.length) {
			throw new IllegalArgumentException(
					"work of " + workSeconds.length + " requests for a trace of " + feasible.length);
		}
		return new Yardstick(this, workSeconds.clone());
	}

	/**
	 * The yardstick of {@code trace} on engines of {@code profile}: request {@code i} has
	 * the objective {@code sloNanos.applyAsLong(i)}, a router reaches an engine after
	 * {@code networkDelayNanos} and sees its first token as long after; the first
	 * {@code warmup} requests fill the cache but are not judged.
	 */
	public static Yardstick of(Trace trace, EngineProfile profile, int warmup, IntToLongFunction sloNanos,
			long networkDelayNanos) {
		return of(trace, PoolProfiles.of(profile, 1), warmup, sloNanos, networkDelayNanos);
	}

	/**
	 * The yardstick of {@code trace} on a pool of {@code pool}'s profiles: a request is
	 * feasible when an idle engine of one of them serves it in time, and its work is the
	 * least engine time any of them takes; else as
	 * {@link #of(Trace, EngineProfile, int, IntToLongFunction, long)}. The profiles share
	 * their block size, so a request's cached prefix is the same on each.
	 */
	public static Yardstick of(Trace trace, PoolProfiles pool, int warmup, IntToLongFunction sloNanos,
			long networkDelayNanos) {
		check(trace, warmup);
		int[] cached = WorkBound.cachedTokens(trace, pool.first());
		List<TraceRequest> requests = trace.requests();
		boolean[] feasible = new boolean[requests.size()];
		double[] work = new double[requests.size()];
		Arrays.fill(work, Double.POSITIVE_INFINITY);
		for (EngineProfile profile : pool.profiles()) {
			for (int i = 0; i < feasible.length; i++) {
				TraceRequest r = requests.get(i);
				double ttft = profile.idleTtftSeconds(r.inputTokens(), cached[i]) + 2 * networkDelayNanos / 1e9;
				feasible[i] |= ttft * 1e9 <= sloNanos.applyAsLong(i);
				work[i] = Math.min(work[i], WorkBound.seconds(profile, r.inputTokens(), cached[i], r.outputTokens()));
			}
		}
		return new Yardstick(trace, warmup, feasible, work);
	}

	/**
	 * A yardstick without an engine profile: every measured request feasible, the work
	 * unknown (no run is judged transient).
	 */
	public static Yardstick allFeasible(Trace trace, int warmup) {
		check(trace, warmup);
		boolean[] feasible = new boolean[trace.size()];
		Arrays.fill(feasible, true);
		return new Yardstick(trace, warmup, feasible, null);
	}

	private static void check(Trace trace, int warmup) {
		if (warmup < 0 || warmup >= trace.size()) {
			throw new IllegalArgumentException(
					"warmup must be in [0, " + trace.size() + ") for this trace but was " + warmup);
		}
	}

	/** Whether request {@code i} (an index into the trace) is feasible. */
	public boolean feasible(int i) {
		return feasible[i];
	}

	/**
	 * Prompt-size quartile (0 shortest) of feasible measured request {@code i}, else -1.
	 */
	public int quartile(int i) {
		return quartile[i];
	}

	/** Feasible measured requests. */
	public int feasibleCount() {
		return feasibleCount;
	}

	/** Prompt tokens of the feasible measured requests. */
	public long feasibleTokens() {
		return feasibleTokens;
	}

	/** Feasible measured requests in quartile {@code q}. */
	public int quartileCount(int q) {
		return quartileCount[q];
	}

	/** Shortest prompt of quartile {@code q} (0 when empty). */
	public int quartileMin(int q) {
		return quartileMin[q];
	}

	/** Longest prompt of quartile {@code q} (0 when empty). */
	public int quartileMax(int q) {
		return quartileMax[q];
	}

	/** Whether the requests' work is known, so runs can be judged transient. */
	public boolean knowsWork() {
		return workSeconds != null;
	}

	/**
	 * Engine seconds request {@code i} needs at least (its {@link WorkBound} cost); 0
	 * when the work is unknown.
	 */
	public double workSeconds(int i) {
		return workSeconds == null ? 0 : workSeconds[i];
	}

	/**
	 * A lower bound on the engine seconds any router spends on the requests it serves in
	 * time at a rate that passes the headline: the least {@link #workSeconds work} of a
	 * set of feasible measured requests that holds at least {@code requestShare} of them,
	 * {@code tokenShare} of their prompt tokens and {@code sizeFloor} of each prompt-size
	 * quartile. A share of 0 or less asks nothing. Each request is costed with every
	 * earlier prefix cached, also one a request left out would have computed, so no
	 * router's set costs less.
	 * <p>
	 * The least work is the whole work less the most a router may leave out. That most is
	 * bounded from above by its linear relaxation, through a Lagrange multiplier
	 * {@code l} on the token allowance: for each {@code l >= 0}, {@code l} times the
	 * allowance plus the most work, less {@code l} times its prompt tokens, that the
	 * request and quartile allowances leave out. Those two allowances are nested
	 * cardinality limits, so taking the requests in that order of value, each as far as
	 * both allowances still permit, finds it exactly; the bound is convex in {@code l}
	 * and its least value over a ternary search is taken (every value tried is a bound).
	 * @throws IllegalStateException when the work is unknown ({@link #allFeasible})
	 */
	public double leastPassingWorkSeconds(double requestShare, double tokenShare, double sizeFloor) {
		if (workSeconds == null) {
			throw new IllegalStateException("the requests' work is unknown");
		}
		int[] members = new int[feasibleCount];
		double total = 0;
		double steepest = 0;
		int n = 0;
		for (int i = warmup; i < feasible.length; i++) {
			if (feasible[i]) {
				members[n++] = i;
				total += workSeconds[i];
				steepest = Math.max(steepest, workSeconds[i] / Math.max(1, tokens[i]));
			}
		}
		double requestAllowance = mayMiss(feasibleCount, requestShare);
		double[] quartileAllowance = new double[QUARTILES];
		for (int q = 0; q < QUARTILES; q++) {
			quartileAllowance[q] = mayMiss(quartileCount[q], sizeFloor);
		}
		double mostLeftOut;
		if (tokenShare <= 0) {
			mostLeftOut = leftOut(members, 0, requestAllowance, quartileAllowance);
		}
		else {
			double tokenAllowance = mayMiss(feasibleTokens, tokenShare);
			double lo = 0;
			double hi = steepest;
			mostLeftOut = Math.min(leftOut(members, lo, requestAllowance, quartileAllowance),
					hi * tokenAllowance + leftOut(members, hi, requestAllowance, quartileAllowance));
			for (int step = 0; step < 100; step++) {
				double a = lo + (hi - lo) / 3;
				double b = hi - (hi - lo) / 3;
				double atA = a * tokenAllowance + leftOut(members, a, requestAllowance, quartileAllowance);
				double atB = b * tokenAllowance + leftOut(members, b, requestAllowance, quartileAllowance);
				mostLeftOut = Math.min(mostLeftOut, Math.min(atA, atB));
				if (atA <= atB) {
					hi = b;
				}
				else {
					lo = a;
				}
			}
		}
		return Math.max(0, total - mostLeftOut);
	}

	/**
	 * The highest rate at which {@code instances} engines can do
	 * {@link #leastPassingWorkSeconds the least work} that passes the headline, busy all
	 * the time: no router's capacity on the headline is above it (requests per second
	 * over all measured requests, as {@link WorkBound#maxRate}).
	 */
	public double headlineCeiling(int instances, double requestShare, double tokenShare, double sizeFloor) {
		double least = leastPassingWorkSeconds(requestShare, tokenShare, sizeFloor);
		return least <= 0 ? Double.POSITIVE_INFINITY : instances * (double) (feasible.length - warmup) / least;
	}

	/**
	 * The most of {@code total} that may miss while the share within, as a run's result
	 * computes it ({@code within / total}), is still at least {@code share}: all of it
	 * when {@code share} asks nothing.
	 */
	static long mayMiss(long total, double share) {
		if (share <= 0 || total == 0) {
			return total;
		}
		long within = Math.min(total, (long) Math.ceil(share * total));
		while (within > 0 && (double) (within - 1) / total >= share) {
			within--;
		}
		while (within < total && (double) within / total < share) {
			within++;
		}
		return total - within;
	}

	/**
	 * The most of {@code work - perToken * prompt tokens} the request and quartile
	 * allowances leave out of {@code members}, each request counted as far as both still
	 * permit (fractions allowed).
	 */
	private double leftOut(int[] members, double perToken, double requestAllowance, double[] quartileAllowance) {
		double[] value = new double[members.length];
		Integer[] order = new Integer[members.length];
		int n = 0;
		for (int k = 0; k < members.length; k++) {
			int i = members[k];
			value[k] = workSeconds[i] - perToken * tokens[i];
			if (value[k] > 0) {
				order[n++] = k;
			}
		}
		Arrays.sort(order, 0, n, (a, b) -> Double.compare(value[b], value[a]));
		double[] quartileLeft = quartileAllowance.clone();
		double requestsLeft = requestAllowance;
		double sum = 0;
		for (int j = 0; j < n && requestsLeft > 0; j++) {
			int k = order[j];
			int q = quartile[members[k]];
			double share = Math.min(1, Math.min(requestsLeft, quartileLeft[q]));
			if (share <= 0) {
				continue;
			}
			sum += share * value[k];
			requestsLeft -= share;
			quartileLeft[q] -= share;
		}
		return sum;
	}

	/** Requests excluded from judging. */
	public int warmup() {
		return warmup;
	}

	/** Share of the measured requests that are feasible. */
	public double feasibleShare() {
		int measured = feasible.length - warmup;
		return measured == 0 ? 0 : (double) feasibleCount / measured;
	}

}

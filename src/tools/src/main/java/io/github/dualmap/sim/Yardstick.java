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

	private final int feasibleCount;

	private final long feasibleTokens;

	private Yardstick(Trace trace, int warmup, boolean[] feasible, double[] workSeconds) {
		this.warmup = warmup;
		this.feasible = feasible;
		this.workSeconds = workSeconds;
		List<TraceRequest> requests = trace.requests();
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

	/**
	 * The yardstick of {@code trace} on engines of {@code profile}: request {@code i} has
	 * the objective {@code sloNanos.applyAsLong(i)}, a router reaches an engine after
	 * {@code networkDelayNanos} and sees its first token as long after; the first
	 * {@code warmup} requests fill the cache but are not judged.
	 */
	public static Yardstick of(Trace trace, EngineProfile profile, int warmup, IntToLongFunction sloNanos,
			long networkDelayNanos) {
		check(trace, warmup);
		int[] cached = WorkBound.cachedTokens(trace, profile);
		List<TraceRequest> requests = trace.requests();
		boolean[] feasible = new boolean[requests.size()];
		double[] work = new double[requests.size()];
		for (int i = 0; i < feasible.length; i++) {
			TraceRequest r = requests.get(i);
			double ttft = profile.idleTtftSeconds(r.inputTokens(), cached[i]) + 2 * networkDelayNanos / 1e9;
			feasible[i] = ttft * 1e9 <= sloNanos.applyAsLong(i);
			work[i] = WorkBound.seconds(profile, r.inputTokens(), cached[i], r.outputTokens());
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

package io.github.dualmap.sim.trace;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.LongSummaryStatistics;

/**
 * A workload: requests in arrival order with prefix block ids over blocks of
 * {@code blockTokens} tokens. Replaying it at another rate keeps the relative timing:
 * every inter-arrival gap is multiplied by {@code nativeRate / rate}.
 *
 * @param name where it came from (a file name or a generator), for reports
 * @param blockTokens tokens per block of the hash ids
 * @param requests the requests, timestamps non-decreasing
 */
public record Trace(String name, int blockTokens, List<TraceRequest> requests) {

	public Trace {
		if (blockTokens <= 0) {
			throw new IllegalArgumentException("blockTokens must be > 0 but was " + blockTokens);
		}
		requests = List.copyOf(requests);
		if (requests.size() < 2) {
			throw new IllegalArgumentException(
					"trace '" + name + "' needs at least 2 requests but has " + requests.size());
		}
		for (int i = 1; i < requests.size(); i++) {
			if (requests.get(i).timestampMillis() < requests.get(i - 1).timestampMillis()) {
				throw new IllegalArgumentException("trace '" + name + "': request " + i + " arrives before request "
						+ (i - 1) + "; timestamps must not decrease");
			}
		}
		if (spanMillis(requests) <= 0) {
			throw new IllegalArgumentException(
					"trace '" + name + "': every request has the same timestamp, so it has no rate to scale");
		}
	}

	private static double spanMillis(List<TraceRequest> requests) {
		return requests.get(requests.size() - 1).timestampMillis() - requests.get(0).timestampMillis();
	}

	public int size() {
		return requests.size();
	}

	/** Requests per second of the trace as recorded: (n - 1) / span. */
	public double nativeRate() {
		return (requests.size() - 1) / (spanMillis(requests) / 1000.0);
	}

	/** The first {@code n} requests (all when the trace is shorter). */
	public Trace first(int n) {
		if (n <= 0) {
			throw new IllegalArgumentException("request count must be > 0 but was " + n);
		}
		return n >= requests.size() ? this : new Trace(name, blockTokens, requests.subList(0, n));
	}

	/**
	 * This trace replayed {@code times} times back to back, as that many independent
	 * populations of the same kind: copy {@code c} arrives after copy {@code c - 1} (one
	 * mean gap after its last request) and its hash ids are shifted past every id of the
	 * copies before, so it shares no prefix with them (and its recorded sessions are
	 * shifted past theirs, so it shares no conversation either). Each copy has the
	 * original's prefix reuse and sizes; a longer replay lets an overloaded pool's
	 * backlog build for longer, so work deferred past the end of a short trace weighs
	 * less.
	 * @throws IllegalArgumentException when {@code times} is not positive
	 */
	public Trace repeated(int times) {
		if (times <= 0) {
			throw new IllegalArgumentException("repeat count must be > 0 but was " + times);
		}
		if (times == 1) {
			return this;
		}
		LongSummaryStatistics range = requests.stream()
			.flatMapToLong(r -> Arrays.stream(r.hashIds()))
			.summaryStatistics();
		long idSpan;
		try {
			idSpan = Math.addExact(Math.subtractExact(range.getMax(), range.getMin()), 1);
			Math.addExact(range.getMax(), Math.multiplyExact(times - 1, idSpan));
		}
		catch (ArithmeticException ex) {
			throw new IllegalArgumentException("trace '" + name + "': its hash ids (" + range.getMin() + " to "
					+ range.getMax() + ") span too much to shift " + times + " copies apart");
		}
		// Each copy's conversations are its own, as its prefixes are.
		long sessionSpan = requests.stream().mapToLong(TraceRequest::session).max().orElse(0) + 1;
		double start = requests.get(0).timestampMillis();
		double period = spanMillis(requests) * requests.size() / (requests.size() - 1);
		List<TraceRequest> out = new ArrayList<>(requests.size() * times);
		for (int c = 0; c < times; c++) {
			long idShift = c * idSpan;
			double timeShift = c * period;
			for (TraceRequest r : requests) {
				long[] ids = r.hashIds().clone();
				for (int k = 0; k < ids.length; k++) {
					ids[k] += idShift;
				}
				out.add(new TraceRequest(r.timestampMillis() - start + timeShift, r.inputTokens(), r.outputTokens(),
						ids, r.session() == TraceRequest.NO_SESSION ? r.session() : r.session() + c * sessionSpan));
			}
		}
		return new Trace(name + " x" + times, blockTokens, out);
	}

	/**
	 * This trace with the requests that share a timestamp spread evenly over the time to
	 * the next timestamp: the {@code k}-th of {@code n} requests stamped {@code t}
	 * arrives at {@code t + k x (next - t) / n}, the last group's over the mean gap
	 * between distinct timestamps. A trace stamped in coarse steps (the Mooncake traces'
	 * arrivals come in steps of 3 s) otherwise replays each step's requests at the same
	 * instant, a burst no router sees in service. Order, sizes and prefixes are kept; a
	 * trace without ties is returned as is.
	 */
	public Trace spreadTies() {
		int n = requests.size();
		int distinct = 1;
		for (int i = 1; i < n; i++) {
			if (requests.get(i).timestampMillis() != requests.get(i - 1).timestampMillis()) {
				distinct++;
			}
		}
		if (distinct == n) {
			return this;
		}
		double meanGap = spanMillis(requests) / (distinct - 1);
		List<TraceRequest> out = new ArrayList<>(n);
		int i = 0;
		while (i < n) {
			double t = requests.get(i).timestampMillis();
			int j = i;
			while (j + 1 < n && requests.get(j + 1).timestampMillis() == t) {
				j++;
			}
			double next = j + 1 < n ? requests.get(j + 1).timestampMillis() : t + meanGap;
			int group = j - i + 1;
			for (int k = 0; k < group; k++) {
				TraceRequest r = requests.get(i + k);
				out.add(new TraceRequest(t + (next - t) * k / group, r.inputTokens(), r.outputTokens(), r.hashIds(),
						r.session()));
			}
			i = j + 1;
		}
		return new Trace(name + ", ties spread", blockTokens, out);
	}

	/**
	 * The longest a replay may last, in nanoseconds (about 31 years): far from where
	 * arrival times plus the simulation's durations (each at most a day) overflow a long.
	 */
	public static final double MAX_SPAN_NANOS = 1e18;

	/**
	 * Arrival times in nanoseconds from the first request when replayed at {@code rate}
	 * requests per second.
	 * @throws IllegalArgumentException when the rate is not positive and finite, or so
	 * low that the replay would last more than {@link #MAX_SPAN_NANOS}
	 */
	public long[] arrivalNanos(double rate) {
		double scale = replayScale(rate);
		double start = requests.get(0).timestampMillis();
		long[] out = new long[requests.size()];
		for (int i = 0; i < out.length; i++) {
			out[i] = Math.round((requests.get(i).timestampMillis() - start) * scale * 1_000_000.0);
		}
		return out;
	}

	/**
	 * The last of {@link #arrivalNanos}{@code (rate)}: how long the arrivals of a replay
	 * at {@code rate} span, without the array.
	 * @throws IllegalArgumentException as {@link #arrivalNanos}
	 */
	public long arrivalSpanNanos(double rate) {
		double scale = replayScale(rate);
		double start = requests.get(0).timestampMillis();
		return Math.round((requests.get(requests.size() - 1).timestampMillis() - start) * scale * 1_000_000.0);
	}

	/**
	 * The factor a replay at {@code rate} stretches the trace's time by.
	 * @throws IllegalArgumentException as {@link #arrivalNanos}
	 */
	private double replayScale(double rate) {
		if (!(rate > 0) || Double.isInfinite(rate)) {
			throw new IllegalArgumentException("rate must be > 0 requests/s but was " + rate);
		}
		double scale = nativeRate() / rate;
		double start = requests.get(0).timestampMillis();
		double spanNanos = (requests.get(requests.size() - 1).timestampMillis() - start) * scale * 1_000_000.0;
		if (!(spanNanos <= MAX_SPAN_NANOS)) {
			// Math.round would clamp at Long.MAX_VALUE and the simulation's clock
			// arithmetic (arrival + SLO) would wrap: refused instead.
			throw new IllegalArgumentException("rate " + rate + " req/s spreads the " + requests.size()
					+ " requests over more than " + (long) (MAX_SPAN_NANOS / 1e9) + " s of simulated time");
		}
		return scale;
	}

}

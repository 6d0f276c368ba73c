package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.core.EngineSnapshot;
import org.jspecify.annotations.Nullable;

/**
 * The routers' scrape of every engine's metrics, and what the run keeps of the engines
 * from it: over the measured window the spread of load between members and the engines'
 * running requests, KV usage and preemptions; with a timeline, every scrape's numbers per
 * instance.
 */
final class EngineScrapes {

	private final EngineFleet fleet;

	private final Routers routers;

	private final boolean recordTimeline;

	private double cvSum;

	private int cvSamples;

	// Engine state while measured: sums over (tick, member) samples, and the engines'
	// monotonic counters at the first measured tick.
	private double runningSum;

	private double kvSum;

	private double kvPeak;

	private long engineSamples;

	private long @Nullable [] preemptedAtStart;

	private long @Nullable [] evictedAtStart;

	private final List<Tick> ticks = new ArrayList<>();

	/**
	 * One scrape tick of the timeline, per instance slot: running + waiting (the load
	 * chart's), then running, waiting, in flight, queued; KV usage; preemptions so far.
	 */
	private record Tick(double seconds, double[] load, int[][] counts, double[] kv, long[] preempted) {
	}

	/**
	 * One scrape: each slot's load (running + waiting) and each joined engine's snapshot.
	 */
	record Scrape(double[] loads, EngineSnapshot[] snapshots) {
	}

	EngineScrapes(EngineFleet fleet, Routers routers, boolean recordTimeline) {
		this.fleet = fleet;
		this.routers = routers;
		this.recordTimeline = recordTimeline;
	}

	/**
	 * Scrapes every joined engine at {@code now} into the pools of routers
	 * {@code [0, routers)}; when {@code measuring}, samples the engines' load and state.
	 */
	Scrape scrape(long now, boolean measuring, int routers) {
		double[] loads = new double[this.fleet.slots()];
		int members = 0;
		int joined = this.fleet.joined();
		EngineSnapshot[] snapshots = new EngineSnapshot[joined];
		for (int k = 0; k < joined; k++) {
			EngineSnapshot snapshot = this.fleet.engine(k).scrape(now);
			snapshots[k] = snapshot;
			for (int r = 0; r < routers; r++) {
				this.routers.engineScraped(r, this.fleet.id(k), snapshot);
			}
			loads[k] = this.fleet.engine(k).load();
			members += this.fleet.isMember(k) ? 1 : 0;
		}
		if (measuring) {
			sampleEngines(snapshots);
			// Over current members: a slot not yet joined or already gone is no instance.
			double[] memberLoads = new double[members];
			for (int k = 0, m = 0; k < joined; k++) {
				if (this.fleet.isMember(k)) {
					memberLoads[m++] = loads[k];
				}
			}
			this.cvSum += coefficientOfVariation(memberLoads);
			this.cvSamples++;
		}
		return new Scrape(loads, snapshots);
	}

	/** Scrapes every joined engine at {@code now} into router {@code r}'s pool alone. */
	void scrapeInto(int r, long now) {
		for (int k = 0; k < this.fleet.joined(); k++) {
			this.routers.engineScraped(r, this.fleet.id(k), this.fleet.engine(k).scrape(now));
		}
	}

	/**
	 * Adds {@code scrape} to the timeline, with the requests the routers hold in flight
	 * and queued for each instance now.
	 */
	void record(long now, Scrape scrape) {
		if (!this.recordTimeline) {
			return;
		}
		int n = this.fleet.slots();
		int[][] counts = new int[4][n];
		double[] kv = new double[n];
		long[] preempted = new long[n];
		EngineSnapshot[] snapshots = scrape.snapshots();
		for (int k = 0; k < this.fleet.joined(); k++) {
			if (!this.fleet.isMember(k)) {
				continue;
			}
			counts[0][k] = snapshots[k].running();
			counts[1][k] = snapshots[k].waiting();
			kv[k] = snapshots[k].kvUsage();
			preempted[k] = this.fleet.engine(k).preemptions();
			String id = this.fleet.id(k);
			counts[2][k] += this.routers.inFlight(id);
			counts[3][k] += this.routers.queued(id);
		}
		this.ticks.add(new Tick(now / 1e9, scrape.loads(), counts, kv, preempted));
	}

	static double coefficientOfVariation(double[] values) {
		if (values.length < 2) {
			return 0;
		}
		double sum = 0;
		double sq = 0;
		for (double v : values) {
			sum += v;
			sq += v * v;
		}
		double mean = sum / values.length;
		if (mean == 0) {
			return 0;
		}
		return Math.sqrt(Math.max(0, sq / values.length - mean * mean)) / mean;
	}

	private void sampleEngines(EngineSnapshot[] snapshots) {
		if (this.preemptedAtStart == null || this.evictedAtStart == null) {
			this.preemptedAtStart = new long[this.fleet.slots()];
			this.evictedAtStart = new long[this.fleet.slots()];
			for (int k = 0; k < this.fleet.joined(); k++) {
				this.preemptedAtStart[k] = this.fleet.engine(k).preemptions();
				this.evictedAtStart[k] = this.fleet.engine(k).evictedBlocks();
			}
		}
		for (int k = 0; k < snapshots.length; k++) {
			if (this.fleet.isMember(k)) {
				this.runningSum += snapshots[k].running();
				this.kvSum += snapshots[k].kvUsage();
				this.kvPeak = Math.max(this.kvPeak, snapshots[k].kvUsage());
				this.engineSamples++;
			}
		}
	}

	/** The mean coefficient of variation of the members' load over measured scrapes. */
	double meanLoadSpread() {
		return this.cvSamples == 0 ? 0 : this.cvSum / this.cvSamples;
	}

	/** The engines' state over the measured window. */
	RunResult.EngineLoad engineLoad() {
		long preempted = 0;
		long evicted = 0;
		for (int k = 0; k < this.fleet.joined(); k++) {
			// An engine that joined after the first measured tick started from zero.
			preempted += this.fleet.engine(k).preemptions()
					- (this.preemptedAtStart == null ? 0 : this.preemptedAtStart[k]);
			evicted += this.fleet.engine(k).evictedBlocks()
					- (this.evictedAtStart == null ? 0 : this.evictedAtStart[k]);
		}
		long samples = this.engineSamples;
		return new RunResult.EngineLoad(samples == 0 ? 0 : this.runningSum / samples,
				samples == 0 ? 0 : this.kvSum / samples, this.kvPeak, preempted, evicted);
	}

	/** The recorded timeline, {@code null} without one. */
	RunResult.@Nullable Timeline timeline() {
		if (!this.recordTimeline) {
			return null;
		}
		int n = this.fleet.slots();
		int samples = this.ticks.size();
		double[] times = new double[samples];
		double[][] load = new double[n][samples];
		int[][][] counts = new int[4][n][samples];
		double[][] kv = new double[n][samples];
		long[][] preempted = new long[n][samples];
		for (int s = 0; s < samples; s++) {
			Tick t = this.ticks.get(s);
			times[s] = t.seconds();
			for (int k = 0; k < n; k++) {
				load[k][s] = t.load()[k];
				for (int f = 0; f < 4; f++) {
					counts[f][k][s] = t.counts()[f][k];
				}
				kv[k][s] = t.kv()[k];
				preempted[k][s] = t.preempted()[k];
			}
		}
		return new RunResult.Timeline(times, load, this.fleet.slotIds(), counts[0], counts[1], kv, preempted, counts[2],
				counts[3]);
	}

}

package io.github.dualmap.sim;

import java.time.Duration;
import java.util.Objects;

import io.github.dualmap.core.NanoClock;
import io.github.dualmap.core.SchedulerSettings;
import org.jspecify.annotations.Nullable;

/**
 * Everything one simulated run needs besides the workload, the policy and the rate. Build
 * one with {@link #builder}, which names every value it sets.
 *
 * @param instances engine instances
 * @param routers gateway replicas; arrivals are spread across them by
 * {@code routerSpread}
 * @param slo time-to-first-token objective
 * @param scrapeInterval engine metrics scrape interval for every policy, or {@code null}
 * for the per-policy table of {@link ScrapeIntervals}
 * @param networkDelay one-way delay between a router and an engine (request out, first
 * token and end back)
 * @param warmup leading requests excluded from the metrics
 * @param seed seeds every random choice of the run (engine jitter)
 * @param settings scheduler settings of every router
 * @param instanceModels creates the engine instances
 * @param decisionTimer real-time clock that times {@code choose()}; tests pass a constant
 * one to make the whole result reproducible
 * @param prefixShareInterval how often router replicas publish their releases to each
 * other, as the gateway's replica sync ({@code dualmap.replicas.*}) does: a release
 * enters the other replicas' shadow indexes at the next multiple of this interval plus
 * {@code networkDelay}; {@code null} when replicas share nothing and each learns only
 * from its own routing (no effect with one router)
 * @param sloClasses objectives per request class; {@link SloClasses#NONE}: every request
 * has {@code slo}
 * @param targetAttainment the share of measured requests within their objective that a
 * rate must reach to pass (capacity is the highest such rate): the benchmark's
 * definition, {@link Simulation#TARGET_ATTAINMENT} (0.9), unless asked otherwise
 * @param shareLoad with {@code prefixShareInterval}: replicas also publish their load per
 * instance (requests and uncached tokens in prefill, uncached tokens queued) with every
 * flush, as the gateway's replica sync does with {@code dualmap.replicas.share-load}
 * @param promptTokenTarget the share of the measured requests' prompt tokens that must
 * belong to requests within their objective for a rate to pass, besides
 * {@code targetAttainment}; 0 (the default) asks nothing of them. Attainment counts
 * requests alike, so a policy that turns away long prompts passes with less work served;
 * this judges the work too. Both targets are over the feasible requests
 * ({@link Yardstick})
 * @param sizeFloor the share of each prompt-size quartile of the feasible requests that
 * must be within its objective for a rate to pass; 0 asks nothing of the quartiles
 * @param routerPhases when each router scrapes the engines and flushes its replica sync
 * within their intervals (no effect with one router)
 * @param routerSpread how the load balancer spreads the requests over the routers (no
 * effect with one router)
 * @param requestLog whether each run keeps every measured request's outcome
 * ({@link RunResult#requestLog()}, {@code --request-log})
 */
public record SimulationConfig(int instances, int routers, Duration slo, @Nullable Duration scrapeInterval,
		Duration networkDelay, int warmup, long seed, SchedulerSettings settings, InstanceModel.Factory instanceModels,
		NanoClock decisionTimer, @Nullable Duration prefixShareInterval, SloClasses sloClasses, double targetAttainment,
		boolean shareLoad, double promptTokenTarget, double sizeFloor, RouterPhases routerPhases,
		RouterSpread routerSpread, boolean requestLog) {

	public SimulationConfig {
		if (instances <= 0) {
			throw new IllegalArgumentException("instances must be > 0 but was " + instances);
		}
		if (routers <= 0) {
			throw new IllegalArgumentException("routers must be > 0 but was " + routers);
		}
		if (slo.isNegative() || slo.isZero()) {
			throw new IllegalArgumentException("slo must be > 0 but was " + slo);
		}
		if (scrapeInterval != null && (scrapeInterval.isNegative() || scrapeInterval.isZero())) {
			throw new IllegalArgumentException("scrapeInterval must be > 0 but was " + scrapeInterval);
		}
		if (networkDelay.isNegative()) {
			throw new IllegalArgumentException("networkDelay must be >= 0 but was " + networkDelay);
		}
		if (warmup < 0) {
			throw new IllegalArgumentException("warmup must be >= 0 but was " + warmup);
		}
		if (prefixShareInterval != null && (prefixShareInterval.isNegative() || prefixShareInterval.isZero())) {
			throw new IllegalArgumentException("prefixShareInterval must be > 0 but was " + prefixShareInterval);
		}
		if (!(targetAttainment > 0 && targetAttainment <= 1)) {
			throw new IllegalArgumentException("targetAttainment must be in (0, 1] but was " + targetAttainment);
		}
		if (!(promptTokenTarget >= 0 && promptTokenTarget <= 1)) {
			throw new IllegalArgumentException("promptTokenTarget must be in [0, 1] but was " + promptTokenTarget);
		}
		if (!(sizeFloor >= 0 && sizeFloor <= 1)) {
			throw new IllegalArgumentException("sizeFloor must be in [0, 1] but was " + sizeFloor);
		}
		Objects.requireNonNull(routerPhases, "routerPhases");
		Objects.requireNonNull(routerSpread, "routerSpread");
	}

	/**
	 * Whether {@code run}'s rate passes the headline: of the feasible requests, the
	 * requests', the prompt tokens' and every size quartile's targets, and not transient.
	 */
	public boolean passes(RunResult run) {
		return run.passesHeadline(targetAttainment, promptTokenTarget, sizeFloor);
	}

	/**
	 * Whether {@code run}'s rate passes on requests alone: {@code targetAttainment} of
	 * all measured requests, and not transient.
	 */
	public boolean passesRequests(RunResult run) {
		return run.passesRequests(targetAttainment);
	}

	/** The scrape interval {@code policy} runs with. */
	public Duration scrapeIntervalOf(String policy) {
		return scrapeInterval != null ? scrapeInterval : ScrapeIntervals.of(policy);
	}

	/**
	 * A builder holding this configuration's values, to change some of them by name.
	 */
	public Builder toBuilder() {
		return new Builder(this);
	}

	public SimulationConfig withDecisionTimer(NanoClock timer) {
		return toBuilder().decisionTimer(timer).build();
	}

	public SimulationConfig withPrefixShareInterval(@Nullable Duration interval) {
		return toBuilder().prefixShareInterval(interval).build();
	}

	public SimulationConfig withSloClasses(SloClasses classes) {
		return toBuilder().sloClasses(classes).build();
	}

	/** The same configuration, judging capacity at {@code target} attainment. */
	public SimulationConfig withTargetAttainment(double target) {
		return toBuilder().targetAttainment(target).build();
	}

	/**
	 * The same configuration, also requiring {@code target} of the measured prompt tokens
	 * within the objective for a rate to pass.
	 */
	public SimulationConfig withPromptTokenTarget(double target) {
		return toBuilder().promptTokenTarget(target).build();
	}

	/**
	 * The same configuration; with replica sync its replicas share their load too, or
	 * only their releases.
	 */
	public SimulationConfig withLoadSharing(boolean share) {
		return toBuilder().shareLoad(share).build();
	}

	/**
	 * The same configuration, also requiring {@code floor} of every prompt-size quartile
	 * of the feasible requests within the objective for a rate to pass.
	 */
	public SimulationConfig withSizeFloor(double floor) {
		return toBuilder().sizeFloor(floor).build();
	}

	/** The same configuration with {@code leading} requests excluded from the metrics. */
	public SimulationConfig withWarmup(int leading) {
		return toBuilder().warmup(leading).build();
	}

	/**
	 * Builds a {@link SimulationConfig} value by value, each set by name; the record's
	 * parameters say what each means. {@code instances}, {@code slo}, {@code settings},
	 * {@code instanceModels} and {@code decisionTimer} must be set; the others default to
	 * one router, the per-policy scrape intervals, no network delay, no warm-up, seed 0,
	 * no replica sync (replicas that sync share their load too), one objective for every
	 * request, capacity judged at {@link Simulation#TARGET_ATTAINMENT} and nothing asked
	 * of the prompt tokens or the prompt-size quartiles.
	 */
	public static Builder builder() {
		return new Builder();
	}

	/** See {@link SimulationConfig#builder}. */
	public static final class Builder {

		private int instances;

		private int routers = 1;

		private @Nullable Duration slo;

		private @Nullable Duration scrapeInterval;

		private Duration networkDelay = Duration.ZERO;

		private int warmup;

		private long seed;

		private @Nullable SchedulerSettings settings;

		private InstanceModel.@Nullable Factory instanceModels;

		private @Nullable NanoClock decisionTimer;

		private @Nullable Duration prefixShareInterval;

		private SloClasses sloClasses = SloClasses.NONE;

		private double targetAttainment = Simulation.TARGET_ATTAINMENT;

		private boolean shareLoad = true;

		private double promptTokenTarget;

		private double sizeFloor;

		private RouterPhases routerPhases = RouterPhases.STAGGERED;

		private RouterSpread routerSpread = RouterSpread.REQUESTS;

		private boolean requestLog;

		private Builder() {
		}

		private Builder(SimulationConfig c) {
			this.instances = c.instances;
			this.routers = c.routers;
			this.slo = c.slo;
			this.scrapeInterval = c.scrapeInterval;
			this.networkDelay = c.networkDelay;
			this.warmup = c.warmup;
			this.seed = c.seed;
			this.settings = c.settings;
			this.instanceModels = c.instanceModels;
			this.decisionTimer = c.decisionTimer;
			this.prefixShareInterval = c.prefixShareInterval;
			this.sloClasses = c.sloClasses;
			this.targetAttainment = c.targetAttainment;
			this.shareLoad = c.shareLoad;
			this.promptTokenTarget = c.promptTokenTarget;
			this.sizeFloor = c.sizeFloor;
			this.routerPhases = c.routerPhases;
			this.routerSpread = c.routerSpread;
			this.requestLog = c.requestLog;
		}

		public Builder instances(int instances) {
			this.instances = instances;
			return this;
		}

		public Builder routers(int routers) {
			this.routers = routers;
			return this;
		}

		public Builder slo(Duration slo) {
			this.slo = slo;
			return this;
		}

		public Builder scrapeInterval(@Nullable Duration scrapeInterval) {
			this.scrapeInterval = scrapeInterval;
			return this;
		}

		public Builder networkDelay(Duration networkDelay) {
			this.networkDelay = networkDelay;
			return this;
		}

		public Builder warmup(int warmup) {
			this.warmup = warmup;
			return this;
		}

		public Builder seed(long seed) {
			this.seed = seed;
			return this;
		}

		public Builder settings(SchedulerSettings settings) {
			this.settings = settings;
			return this;
		}

		public Builder instanceModels(InstanceModel.Factory instanceModels) {
			this.instanceModels = instanceModels;
			return this;
		}

		public Builder decisionTimer(NanoClock decisionTimer) {
			this.decisionTimer = decisionTimer;
			return this;
		}

		public Builder prefixShareInterval(@Nullable Duration prefixShareInterval) {
			this.prefixShareInterval = prefixShareInterval;
			return this;
		}

		public Builder sloClasses(SloClasses sloClasses) {
			this.sloClasses = sloClasses;
			return this;
		}

		public Builder targetAttainment(double targetAttainment) {
			this.targetAttainment = targetAttainment;
			return this;
		}

		public Builder shareLoad(boolean shareLoad) {
			this.shareLoad = shareLoad;
			return this;
		}

		public Builder promptTokenTarget(double promptTokenTarget) {
			this.promptTokenTarget = promptTokenTarget;
			return this;
		}

		public Builder sizeFloor(double sizeFloor) {
			this.sizeFloor = sizeFloor;
			return this;
		}

		public Builder routerPhases(RouterPhases routerPhases) {
			this.routerPhases = routerPhases;
			return this;
		}

		public Builder routerSpread(RouterSpread routerSpread) {
			this.routerSpread = routerSpread;
			return this;
		}

		public Builder requestLog(boolean requestLog) {
			this.requestLog = requestLog;
			return this;
		}

		public SimulationConfig build() {
			return new SimulationConfig(this.instances, this.routers, Objects.requireNonNull(this.slo, "slo"),
					this.scrapeInterval, this.networkDelay, this.warmup, this.seed,
					Objects.requireNonNull(this.settings, "settings"),
					Objects.requireNonNull(this.instanceModels, "instanceModels"),
					Objects.requireNonNull(this.decisionTimer, "decisionTimer"), this.prefixShareInterval,
					this.sloClasses, this.targetAttainment, this.shareLoad, this.promptTokenTarget, this.sizeFloor,
					this.routerPhases, this.routerSpread, this.requestLog);
		}

	}

}

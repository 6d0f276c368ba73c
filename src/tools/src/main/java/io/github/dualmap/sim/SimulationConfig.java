package io.github.dualmap.sim;

import java.time.Duration;

import io.github.dualmap.core.NanoClock;
import io.github.dualmap.core.SchedulerSettings;
import org.jspecify.annotations.Nullable;

/**
 * Everything one simulated run needs besides the workload, the policy and the rate.
 *
 * @param instances engine instances
 * @param routers gateway replicas; arrivals are spread round-robin across them
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
 */
public record SimulationConfig(int instances, int routers, Duration slo, @Nullable Duration scrapeInterval,
		Duration networkDelay, int warmup, long seed, SchedulerSettings settings, InstanceModel.Factory instanceModels,
		NanoClock decisionTimer, @Nullable Duration prefixShareInterval, SloClasses sloClasses, double targetAttainment,
		boolean shareLoad, double promptTokenTarget, double sizeFloor) {

	/**
	 * A configuration that asks nothing of the prompt-size quartiles.
	 */
	public SimulationConfig(int instances, int routers, Duration slo, @Nullable Duration scrapeInterval,
			Duration networkDelay, int warmup, long seed, SchedulerSettings settings,
			InstanceModel.Factory instanceModels, NanoClock decisionTimer, @Nullable Duration prefixShareInterval,
			SloClasses sloClasses, double targetAttainment, boolean shareLoad, double promptTokenTarget) {
		this(instances, routers, slo, scrapeInterval, networkDelay, warmup, seed, settings, instanceModels,
				decisionTimer, prefixShareInterval, sloClasses, targetAttainment, shareLoad, promptTokenTarget, 0);
	}

	/**
	 * A configuration that asks nothing of the prompt tokens within the objective.
	 */
	public SimulationConfig(int instances, int routers, Duration slo, @Nullable Duration scrapeInterval,
			Duration networkDelay, int warmup, long seed, SchedulerSettings settings,
			InstanceModel.Factory instanceModels, NanoClock decisionTimer, @Nullable Duration prefixShareInterval,
			SloClasses sloClasses, double targetAttainment, boolean shareLoad) {
		this(instances, routers, slo, scrapeInterval, networkDelay, warmup, seed, settings, instanceModels,
				decisionTimer, prefixShareInterval, sloClasses, targetAttainment, shareLoad, 0);
	}

	/**
	 * A configuration whose replicas, when they sync, share their load too.
	 */
	public SimulationConfig(int instances, int routers, Duration slo, @Nullable Duration scrapeInterval,
			Duration networkDelay, int warmup, long seed, SchedulerSettings settings,
			InstanceModel.Factory instanceModels, NanoClock decisionTimer, @Nullable Duration prefixShareInterval,
			SloClasses sloClasses, double targetAttainment) {
		this(instances, routers, slo, scrapeInterval, networkDelay, warmup, seed, settings, instanceModels,
				decisionTimer, prefixShareInterval, sloClasses, targetAttainment, true);
	}

	/**
	 * A configuration whose capacity is judged at {@link Simulation#TARGET_ATTAINMENT}.
	 */
	public SimulationConfig(int instances, int routers, Duration slo, @Nullable Duration scrapeInterval,
			Duration networkDelay, int warmup, long seed, SchedulerSettings settings,
			InstanceModel.Factory instanceModels, NanoClock decisionTimer, @Nullable Duration prefixShareInterval,
			SloClasses sloClasses) {
		this(instances, routers, slo, scrapeInterval, networkDelay, warmup, seed, settings, instanceModels,
				decisionTimer, prefixShareInterval, sloClasses, Simulation.TARGET_ATTAINMENT);
	}

	/** A configuration in which every request has the objective {@code slo}. */
	public SimulationConfig(int instances, int routers, Duration slo, @Nullable Duration scrapeInterval,
			Duration networkDelay, int warmup, long seed, SchedulerSettings settings,
			InstanceModel.Factory instanceModels, NanoClock decisionTimer, @Nullable Duration prefixShareInterval) {
		this(instances, routers, slo, scrapeInterval, networkDelay, warmup, seed, settings, instanceModels,
				decisionTimer, prefixShareInterval, SloClasses.NONE);
	}

	/** A configuration whose replicas learn only from their own routing. */
	public SimulationConfig(int instances, int routers, Duration slo, @Nullable Duration scrapeInterval,
			Duration networkDelay, int warmup, long seed, SchedulerSettings settings,
			InstanceModel.Factory instanceModels, NanoClock decisionTimer) {
		this(instances, routers, slo, scrapeInterval, networkDelay, warmup, seed, settings, instanceModels,
				decisionTimer, null);
	}

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

	public SimulationConfig withDecisionTimer(NanoClock timer) {
		return new SimulationConfig(instances, routers, slo, scrapeInterval, networkDelay, warmup, seed, settings,
				instanceModels, timer, prefixShareInterval, sloClasses, targetAttainment, shareLoad, promptTokenTarget,
				sizeFloor);
	}

	public SimulationConfig withPrefixShareInterval(@Nullable Duration interval) {
		return new SimulationConfig(instances, routers, slo, scrapeInterval, networkDelay, warmup, seed, settings,
				instanceModels, decisionTimer, interval, sloClasses, targetAttainment, shareLoad, promptTokenTarget,
				sizeFloor);
	}

	public SimulationConfig withSloClasses(SloClasses classes) {
		return new SimulationConfig(instances, routers, slo, scrapeInterval, networkDelay, warmup, seed, settings,
				instanceModels, decisionTimer, prefixShareInterval, classes, targetAttainment, shareLoad,
				promptTokenTarget, sizeFloor);
	}

	/** The same configuration, judging capacity at {@code target} attainment. */
	public SimulationConfig withTargetAttainment(double target) {
		return new SimulationConfig(instances, routers, slo, scrapeInterval, networkDelay, warmup, seed, settings,
				instanceModels, decisionTimer, prefixShareInterval, sloClasses, target, shareLoad, promptTokenTarget,
				sizeFloor);
	}

	/**
	 * The same configuration, also requiring {@code target} of the measured prompt tokens
	 * within the objective for a rate to pass.
	 */
	public SimulationConfig withPromptTokenTarget(double target) {
		return new SimulationConfig(instances, routers, slo, scrapeInterval, networkDelay, warmup, seed, settings,
				instanceModels, decisionTimer, prefixShareInterval, sloClasses, targetAttainment, shareLoad, target,
				sizeFloor);
	}

	/**
	 * The same configuration; with replica sync its replicas share their load too, or
	 * only their releases.
	 */
	public SimulationConfig withLoadSharing(boolean share) {
		return new SimulationConfig(instances, routers, slo, scrapeInterval, networkDelay, warmup, seed, settings,
				instanceModels, decisionTimer, prefixShareInterval, sloClasses, targetAttainment, share,
				promptTokenTarget, sizeFloor);
	}

	/**
	 * The same configuration, also requiring {@code floor} of every prompt-size quartile
	 * of the feasible requests within the objective for a rate to pass.
	 */
	public SimulationConfig withSizeFloor(double floor) {
		return new SimulationConfig(instances, routers, slo, scrapeInterval, networkDelay, warmup, seed, settings,
				instanceModels, decisionTimer, prefixShareInterval, sloClasses, targetAttainment, shareLoad,
				promptTokenTarget, floor);
	}

	/** The same configuration with {@code leading} requests excluded from the metrics. */
	public SimulationConfig withWarmup(int leading) {
		return new SimulationConfig(instances, routers, slo, scrapeInterval, networkDelay, leading, seed, settings,
				instanceModels, decisionTimer, prefixShareInterval, sloClasses, targetAttainment, shareLoad,
				promptTokenTarget, sizeFloor);
	}

}

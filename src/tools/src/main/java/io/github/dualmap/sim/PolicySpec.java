package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import io.github.dualmap.core.DispatchMode;
import io.github.dualmap.core.DynamoKvPolicy;
import io.github.dualmap.core.LlmdPrecisePolicy;
import io.github.dualmap.core.LlmdScorerPolicy;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.RoutingPolicies;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.core.SmgCacheAwarePolicy;
import io.github.dualmap.core.SmgKvPolicy;
import io.github.dualmap.core.TtftModel;
import io.github.dualmap.engine.EngineProfile;
import org.jspecify.annotations.Nullable;

/**
 * A policy under test: its name, how to make a fresh instance of it (every router of
 * every run gets its own, with its own learned state) and how its requests reach the
 * engines.
 * <p>
 * With {@code queue} set, every router drives a
 * {@link io.github.dualmap.core.DispatchQueues} with those settings, as the gateway does
 * (late binding in {@link DispatchMode#QUEUE}, the same callbacks in
 * {@link DispatchMode#PASS_THROUGH}). Without it the request is dispatched the moment the
 * policy has chosen, which is what every peer's real counterpart does.
 *
 * @param name the row name in reports
 * @param factory makes a new policy object from the run's scheduler settings
 * @param queue dispatch queue settings, or {@code null} for immediate dispatch
 * @param tuning changes the run's scheduler settings for this row only (an ablation of a
 * setting rather than of the policy), or {@code null}
 */
public record PolicySpec(String name, Function<SchedulerSettings, RoutingPolicy> factory, @Nullable QueueSettings queue,
		@Nullable UnaryOperator<SchedulerSettings> tuning) {

	/** The row of the DualMap policy in pass-through mode. */
	public static final String DUALMAP_PASS_THROUGH = "dualmap-pass-through";

	/**
	 * The row of the DualMap policy with the routing key fixed at the minimum prefix
	 * depth: the adaptive depth of the hot-prefix table switched off.
	 */
	public static final String DUALMAP_FIXED_DEPTH = "dualmap-fixed-depth";

	/**
	 * The row of the DualMap policy behind the queue without idle pull: queued requests
	 * move only off hotspots, with no work stealing between the candidates.
	 */
	public static final String DUALMAP_NO_PULL = "dualmap-no-pull";

	/**
	 * The row of the DualMap policy with the {@link TtftModel#LINEAR linear} TTFT model:
	 * one per-token rate for the pool, whatever the run's {@code dualmap.ttft.model}.
	 */
	public static final String DUALMAP_LINEAR_TTFT = "dualmap-linear-ttft";

	/**
	 * The row of the DualMap policy with the {@link TtftModel#ATTENTION attention} TTFT
	 * model fitted online, whatever the run's {@code dualmap.ttft.model}.
	 */
	public static final String DUALMAP_ATTENTION_TTFT = "dualmap-attention-ttft";

	/**
	 * The row of the DualMap policy whose SLO switch ignores the candidates' KV usage
	 * ({@code dualmap.switch-max-kv-usage=1}): a switch may go into a colder candidate
	 * whose cache is full.
	 */
	public static final String DUALMAP_NO_SWITCH_KV_LIMIT = "dualmap-no-switch-kv-limit";

	/**
	 * The row of the DualMap policy whose every request chooses between its two ring
	 * candidates ({@code dualmap.cold.cached-share=0}, the default): no cold rule,
	 * whatever the run's setting.
	 */
	public static final String DUALMAP_TWO_CHOICE = "dualmap-two-choice";

	/**
	 * The row of the DualMap policy with the cold rule on whatever the run's
	 * {@code dualmap.cold.cached-share} (a share of 0.3 when the run has it off): a
	 * request none of whose first ring instances holds much of its prompt goes to the
	 * least occupied of them.
	 */
	public static final String DUALMAP_COLD_OCCUPANCY = "dualmap-cold-occupancy";

	/**
	 * A reference row, never a configuration a gateway can run: the DualMap policy with
	 * the attention TTFT model given the engine model's own prefill coefficients (its
	 * per-token and per-pair step costs) and no learning. It bounds what a better fit of
	 * the same model could add.
	 */
	public static final String DUALMAP_ORACLE_TTFT = "dualmap-oracle-ttft";

	/**
	 * The row of the DualMap policy whose dispatch queue releases against this gateway's
	 * own prefill alone ({@code dualmap.dispatch.hold-on-engine-queue=false}): the
	 * engine's scraped queue holds nothing. With several routers without replica sync
	 * each fills a prefill budget per instance.
	 */
	public static final String DUALMAP_LOCAL_RELEASE = "dualmap-local-release";

	/**
	 * The row of {@code llmd-scorer} whose prefix scorer matches the whole prompt instead
	 * of its first {@value LlmdScorerPolicy#DEFAULT_MAX_PREFIX_TOKENS} tokens: the prefix
	 * window's share in the row's result.
	 */
	public static final String LLMD_SCORER_WHOLE_PROMPT = "llmd-scorer-whole-prompt";

	/**
	 * llm-d's {@code optimized-baseline} guide (the approximate prefix path's current
	 * name): {@code llmd-scorer}'s queue, KV-cache utilisation and prefix scorers, the
	 * prefix matched over up to {@value LlmdScorerPolicy#CURRENT_MAX_PREFIX_TOKENS}
	 * tokens (the approximate prefix producer's current default), and the no-hit LRU
	 * scorer at weight 2 ({@link LlmdScorerPolicy#optimizedBaseline}).
	 */
	public static final String LLMD_OPTIMIZED_BASELINE = "llmd-optimized-baseline";

	/**
	 * The row of {@code llmd-scorer} with the prefix scorer's weight 0: the queue and
	 * KV-cache utilisation scorers alone (the index is still kept, unused).
	 */
	public static final String LLMD_SCORER_NO_PREFIX = "llmd-scorer-no-prefix";

	/**
	 * The row of {@code llmd-precise} with the precise scorer's min-max normalisation and
	 * the weights the guide gave it ({@value LlmdPrecisePolicy#MIN_MAX_PREFIX_WEIGHT} /
	 * {@value LlmdPrecisePolicy#MIN_MAX_KV_CACHE_WEIGHT} /
	 * {@value LlmdPrecisePolicy#MIN_MAX_QUEUE_WEIGHT}), as llm-d releases up to v0.8.0
	 * ran it; flow control as in {@code llmd-precise}.
	 */
	public static final String LLMD_PRECISE_MIN_MAX = "llmd-precise-min-max";

	/**
	 * The row of {@code llmd-precise} without flow control: every arrival is routed at
	 * once, saturated pool or not.
	 */
	public static final String LLMD_PRECISE_NO_FLOW_CONTROL = "llmd-precise-no-flow-control";

	/**
	 * Suffix of a peer's row behind the gateway's dispatch queue
	 * ({@code dynamo-cost+queue}), as a gateway runs it with {@code dualmap.policy} set
	 * to that peer: the peer chooses the instance, the request waits there for prefill
	 * room under the same wait bound and rescue as DualMap's, and nothing moves it
	 * ({@link RoutingPolicies#queueSettingsFor}). It measures what the queue's admission
	 * control gives a policy that is not DualMap.
	 */
	public static final String QUEUED_SUFFIX = "+queue";

	/** A policy dispatched immediately. */
	public PolicySpec(String name, Function<SchedulerSettings, RoutingPolicy> factory) {
		this(name, factory, null, null);
	}

	/** A policy with its own dispatch queue settings and the run's scheduler settings. */
	public PolicySpec(String name, Function<SchedulerSettings, RoutingPolicy> factory, @Nullable QueueSettings queue) {
		this(name, factory, queue, null);
	}

	/**
	 * The row called {@code name}: a registered policy, {@value #DUALMAP_PASS_THROUGH},
	 * {@value #DUALMAP_FIXED_DEPTH}, {@value #DUALMAP_NO_PULL},
	 * {@value #DUALMAP_LINEAR_TTFT}, {@value #DUALMAP_ATTENTION_TTFT},
	 * {@value #DUALMAP_NO_SWITCH_KV_LIMIT}, {@value #DUALMAP_LOCAL_RELEASE},
	 * {@value #DUALMAP_TWO_CHOICE}, {@value #DUALMAP_COLD_OCCUPANCY}, the reference row
	 * {@value #DUALMAP_ORACLE_TTFT} (with the default engine profile's coefficients), or
	 * one of the peers that route on engine KV events, which only the simulator can feed
	 * ({@value DynamoKvPolicy#NAME}, {@value LlmdPrecisePolicy#NAME},
	 * {@value SmgKvPolicy#NAME}), or a variant of an llm-d row
	 * ({@value #LLMD_OPTIMIZED_BASELINE}, {@value #LLMD_SCORER_WHOLE_PROMPT},
	 * {@value #LLMD_SCORER_NO_PREFIX}, {@value #LLMD_PRECISE_MIN_MAX},
	 * {@value #LLMD_PRECISE_NO_FLOW_CONTROL}). The DualMap family runs behind the
	 * dispatch queues as the gateway default ({@code dispatch: queue}); ablations that
	 * have no hotspot step run the queue without migration, so they ablate the rebalancer
	 * as a whole. Peers dispatch immediately, or behind the queue without moves when
	 * named with {@value #QUEUED_SUFFIX}.
	 */
	public static PolicySpec named(String name) {
		return named(name, QueueSettings.ofDefaults());
	}

	/**
	 * The row called {@code name}, its DualMap queue starting from {@code queue} (the
	 * gateway's {@code dualmap.dispatch.*}); each row still sets its own dispatch mode,
	 * idle pull and migration as its name says.
	 */
	public static PolicySpec named(String name, QueueSettings queue) {
		return named(name, queue, EngineProfile.named(EngineProfile.DEFAULT));
	}

	/**
	 * The row called {@code name} with {@code engine} as the simulated instances' model
	 * (the oracle row takes its coefficients).
	 */
	public static PolicySpec named(String name, QueueSettings queue, EngineProfile engine) {
		if (name.equals(DUALMAP_LINEAR_TTFT) || name.equals(DUALMAP_ATTENTION_TTFT) || name.equals(DUALMAP_ORACLE_TTFT)
				|| name.equals(DUALMAP_NO_SWITCH_KV_LIMIT) || name.equals(DUALMAP_TWO_CHOICE)
				|| name.equals(DUALMAP_COLD_OCCUPANCY)) {
			UnaryOperator<SchedulerSettings> tuning = switch (name) {
				case DUALMAP_NO_SWITCH_KV_LIMIT -> settings -> settings.toBuilder().switchMaxKvUsage(1).build();
				case DUALMAP_TWO_CHOICE -> settings -> settings.toBuilder().coldCachedShare(0).build();
				case DUALMAP_COLD_OCCUPANCY -> settings -> settings.spreadsCold() ? settings
						: settings.toBuilder().coldCachedShare(SchedulerSettings.COLD_CACHED_SHARE).build();
				case DUALMAP_LINEAR_TTFT -> settings -> settings.toBuilder().ttftModel(TtftModel.LINEAR).build();
				case DUALMAP_ATTENTION_TTFT -> settings -> settings.toBuilder().ttftModel(TtftModel.ATTENTION).build();
				default -> settings -> settings.toBuilder()
					.ttftModel(TtftModel.ATTENTION)
					.prefillNanosPerToken(engine.cLinSeconds() * 1e9)
					.attentionNanosPerPair(engine.cAttnSeconds() * 1e9)
					.calibrationAlpha(0)
					.build();
			};
			return new PolicySpec(name, settings -> RoutingPolicies.create("dualmap", settings),
					RoutingPolicies.queueSettingsFor("dualmap", queue.toBuilder().mode(DispatchMode.QUEUE).build()),
					tuning);
		}
		if (name.equals(DUALMAP_PASS_THROUGH)) {
			return new PolicySpec(name, settings -> RoutingPolicies.create("dualmap", settings),
					queue.toBuilder().mode(DispatchMode.PASS_THROUGH).build());
		}
		if (name.equals(DUALMAP_FIXED_DEPTH)) {
			return new PolicySpec(name, settings -> RoutingPolicies.create("dualmap", settings),
					queue.toBuilder().mode(DispatchMode.QUEUE).build(),
					settings -> settings.toBuilder().maxPrefixDepth(settings.minPrefixDepth()).build());
		}
		if (name.equals(DUALMAP_LOCAL_RELEASE)) {
			return new PolicySpec(name, settings -> RoutingPolicies.create("dualmap", settings),
					queue.toBuilder().mode(DispatchMode.QUEUE).holdOnEngineQueue(false).build());
		}
		if (name.equals(DUALMAP_NO_PULL)) {
			return new PolicySpec(name, settings -> RoutingPolicies.create("dualmap", settings),
					queue.toBuilder().mode(DispatchMode.QUEUE).idlePull(false).build());
		}
		if (name.equals(DynamoKvPolicy.NAME)) {
			return new PolicySpec(name, settings -> new DynamoKvPolicy());
		}
		if (name.equals(LlmdPrecisePolicy.NAME)) {
			return new PolicySpec(name, settings -> new LlmdPrecisePolicy());
		}
		if (name.equals(SmgKvPolicy.NAME)) {
			return new PolicySpec(name, settings -> new SmgKvPolicy());
		}
		if (name.equals(LLMD_SCORER_WHOLE_PROMPT) || name.equals(LLMD_SCORER_NO_PREFIX)) {
			boolean whole = name.equals(LLMD_SCORER_WHOLE_PROMPT);
			return new PolicySpec(name,
					settings -> new LlmdScorerPolicy(settings.blockTokens(), LlmdScorerPolicy.DEFAULT_QUEUE_WEIGHT,
							LlmdScorerPolicy.DEFAULT_KV_CACHE_WEIGHT,
							whole ? LlmdScorerPolicy.DEFAULT_PREFIX_WEIGHT : 0,
							whole ? Integer.MAX_VALUE : LlmdScorerPolicy.DEFAULT_MAX_PREFIX_TOKENS,
							LlmdScorerPolicy.DEFAULT_INDEX_CAPACITY_TOKENS));
		}
		if (name.equals(LLMD_OPTIMIZED_BASELINE)) {
			return new PolicySpec(name, settings -> LlmdScorerPolicy.optimizedBaseline(settings.blockTokens()));
		}
		if (name.equals(LLMD_PRECISE_MIN_MAX)) {
			return new PolicySpec(name, settings -> LlmdPrecisePolicy.minMax());
		}
		if (name.equals(LLMD_PRECISE_NO_FLOW_CONTROL)) {
			return new PolicySpec(name, settings -> LlmdPrecisePolicy.withoutFlowControl());
		}
		if (name.endsWith(QUEUED_SUFFIX)) {
			String peer = name.substring(0, name.length() - QUEUED_SUFFIX.length());
			if (!RoutingPolicies.exists(peer) || peer.startsWith("dualmap")) {
				throw new IllegalArgumentException("'" + name + "': " + QUEUED_SUFFIX
						+ " puts a peer policy behind the dispatch queue; known peers: " + String.join(", ",
								RoutingPolicies.names().stream().filter(n -> !n.startsWith("dualmap")).toList()));
			}
			return new PolicySpec(name, settings -> RoutingPolicies.create(peer, settings),
					RoutingPolicies.queueSettingsFor(peer, queue.toBuilder().mode(DispatchMode.QUEUE).build()));
		}
		if (!RoutingPolicies.exists(name)) {
			throw new IllegalArgumentException("unknown policy '" + name + "'; known: " + String.join(", ", names()));
		}
		Function<SchedulerSettings, RoutingPolicy> factory = settings -> RoutingPolicies.create(name, settings);
		if (!name.startsWith("dualmap")) {
			return new PolicySpec(name, factory);
		}
		return new PolicySpec(name, factory,
				RoutingPolicies.queueSettingsFor(name, queue.toBuilder().mode(DispatchMode.QUEUE).build()));
	}

	/**
	 * Every row name {@link #named} knows, registered policies plus the simulator's own.
	 */
	public static List<String> names() {
		List<String> names = new ArrayList<>(RoutingPolicies.names());
		names.add(names.indexOf("dualmap") + 1, DUALMAP_PASS_THROUGH);
		names.add(names.indexOf(DUALMAP_PASS_THROUGH) + 1, DUALMAP_FIXED_DEPTH);
		names.add(names.indexOf(DUALMAP_FIXED_DEPTH) + 1, DUALMAP_NO_PULL);
		names.add(names.indexOf("llmd-scorer") + 1, LlmdPrecisePolicy.NAME);
		names.add(names.indexOf("llmd-scorer") + 1, LLMD_SCORER_WHOLE_PROMPT);
		names.add(names.indexOf("llmd-scorer") + 1, LLMD_OPTIMIZED_BASELINE);
		names.add(names.indexOf(LLMD_SCORER_WHOLE_PROMPT) + 1, LLMD_SCORER_NO_PREFIX);
		names.add(names.indexOf(LlmdPrecisePolicy.NAME) + 1, LLMD_PRECISE_MIN_MAX);
		names.add(names.indexOf(LLMD_PRECISE_MIN_MAX) + 1, LLMD_PRECISE_NO_FLOW_CONTROL);
		names.add(names.indexOf("dynamo-cost") + 1, DynamoKvPolicy.NAME);
		names.add(names.indexOf(SmgCacheAwarePolicy.NAME) + 1, SmgKvPolicy.NAME);
		names.add(names.indexOf(DUALMAP_NO_PULL) + 1, DUALMAP_LINEAR_TTFT);
		names.add(names.indexOf(DUALMAP_LINEAR_TTFT) + 1, DUALMAP_ATTENTION_TTFT);
		names.add(names.indexOf(DUALMAP_ATTENTION_TTFT) + 1, DUALMAP_ORACLE_TTFT);
		names.add(names.indexOf(DUALMAP_ORACLE_TTFT) + 1, DUALMAP_NO_SWITCH_KV_LIMIT);
		names.add(names.indexOf(DUALMAP_NO_SWITCH_KV_LIMIT) + 1, DUALMAP_LOCAL_RELEASE);
		names.add(names.indexOf(DUALMAP_LOCAL_RELEASE) + 1, DUALMAP_TWO_CHOICE);
		names.add(names.indexOf(DUALMAP_TWO_CHOICE) + 1, DUALMAP_COLD_OCCUPANCY);
		return names;
	}

	public RoutingPolicy create(SchedulerSettings settings) {
		return factory.apply(settings);
	}

	/**
	 * The scheduler settings this row runs with, given the run's: its tuning, then what
	 * the run left to the dispatch mode resolved for this row's mode (a row without the
	 * gateway's queue dispatches at once).
	 */
	public SchedulerSettings settingsFor(SchedulerSettings run) {
		SchedulerSettings tuned = tuning == null ? run : tuning.apply(run);
		return tuned.forDispatchMode(queue == null ? DispatchMode.PASS_THROUGH : queue.mode());
	}

	/** How this row's requests reach the engines, for reports. */
	public String dispatchLabel() {
		if (queue == null) {
			return "immediate";
		}
		return queue.mode() == DispatchMode.PASS_THROUGH ? "pass-through"
				: queue.maxMigrations() == 0 ? "queue, no migration" : "queue";
	}

}

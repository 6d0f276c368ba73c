package io.github.dualmap.sim;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

import io.github.dualmap.core.AdmissionHold;
import io.github.dualmap.core.Decision;
import io.github.dualmap.core.DispatchListener;
import io.github.dualmap.core.DispatchQueues;
import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.core.FairnessSettings;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.KvEventFeed;
import io.github.dualmap.core.KvEventIndex;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.QueuedRequest;
import io.github.dualmap.core.Rejection;
import io.github.dualmap.core.RingMember;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.core.SglangCacheAwarePolicy;
import io.github.dualmap.engine.KvEventListener;
import io.github.dualmap.sim.trace.TraceRequest;
import org.jspecify.annotations.Nullable;

/**
 * One discrete-event run: a workload replayed at one rate into one policy (one instance
 * of it per router replica) and N engine instances, in virtual time. A single priority
 * queue orders arrivals, deliveries over the network, engine step ends and scrape ticks;
 * ties are broken by insertion order, so a run is a pure function of its inputs (the real
 * time of {@code choose()} aside, which is only measured). Not thread-safe: one run per
 * object, independent runs may go on in parallel.
 * <p>
 * A policy with {@link PolicySpec#queue()} settings runs behind one
 * {@link DispatchQueues} per router, as in the gateway: arrivals are submitted, a
 * released request travels to its engine, its first token and end are reported to the
 * queues, and {@link DispatchQueues#tick} runs at
 * {@link DispatchQueues#nextDeadlineNanos()}. A rejection counts as a miss.
 * <p>
 * A policy that routes on the engines' KV events ({@link KvEventFeed.Consumer}) gets them
 * through one {@link KvEventIndex} for all routers: each engine step's stored and evicted
 * blocks arrive one network delay plus {@link #KV_EVENT_LAG_NANOS} after the step ends. A
 * policy that holds arrivals ({@link AdmissionHold}) gets a FCFS queue per router,
 * re-checked when a first token or an end reaches the router, at every scrape and when
 * peer load arrives. With replica sync, {@code sglang-cache-aware}'s tree inserts reach
 * the other routers at the next whole mesh sync interval plus the network delay.
 */
public final class Simulation {

	/** Share of measured requests that must meet the SLO. */
	public static final double TARGET_ATTAINMENT = 0.9;

	private static final int ARRIVAL = 0;

	private static final int DELIVER = 1;

	private static final int STEP_END = 2;

	private static final int FIRST_TOKEN_SEEN = 3;

	private static final int FINISH_SEEN = 4;

	private static final int SCRAPE = 5;

	private static final int QUEUE_TICK = 6;

	private static final int MEMBERSHIP = 7;

	private static final int SHARE = 8;

	/**
	 * Replica sync flush: every router's prefill per instance, published to the others.
	 */
	private static final int LOAD_FLUSH = 9;

	/** A flush's load publication reaches the other routers. */
	private static final int LOAD_SEEN = 10;

	/** An engine step's KV events reach the routers' KV event index. */
	private static final int KV_EVENTS = 11;

	/** A router's tree insert reaches the other replicas over the SGLang mesh. */
	private static final int MESH_INSERT = 12;

	/**
	 * Delay of an engine step's KV events past the step's end, on top of the network
	 * delay: vLLM publishes them after the step over ZMQ and the router's indexer applies
	 * them asynchronously.
	 */
	static final long KV_EVENT_LAG_NANOS = 10_000_000L;

	/**
	 * Earliest revisit of a queue deadline that is already due: a request waiting past
	 * the hotspot bound keeps its deadline in the past until it leaves, and ticking at
	 * the same instant again would not change anything.
	 */
	static final long QUEUE_RETICK_NANOS = 10_000_000L;

	private final Workload workload;

	private final PolicySpec policy;

	private final SimulationConfig config;

	private final double rate;

	private final boolean recordTimeline;

	private final PriorityQueue<Event> events = new PriorityQueue<>();

	private long sequence;

	private long now;

	private final InstancePool[] pools;

	private final RoutingPolicy[] policies;

	private final @Nullable DispatchQueues[] queues;

	private final QueuedRequest[] queued;

	private final long[] tickAt;

	// The arrival whose choose() is being timed; -1 outside a submission.
	private int choosing = -1;

	private final InstanceModel[] engines;

	private final String[] instanceIds;

	private final Map<String, Integer> instanceIndex = new HashMap<>();

	private final boolean[] stepping;

	private final long[] arrival;

	private final RoutingRequest[] routed;

	private final InstancePool.@Nullable Dispatch[] dispatches;

	private final int[] routerOf;

	private final int[] instanceOf;

	private final long[] ttft;

	private final boolean[] resolved;

	private final long sloNanos;

	// Each request's SLO class when the run has classes, else null (every request has
	// sloNanos).
	private final int @Nullable [] classOf;

	// A request whose arrival is older than this without a first token has missed.
	private final long maxSloNanos;

	// The run's tenants and each request's (an index into them); null without tenants.
	private final @Nullable TenantMix tenants;

	private final int @Nullable [] tenantOf;

	private final long delayNanos;

	/** Replica sync interval; 0 when replicas share nothing. */
	private final long shareNanos;

	private final long scrapeNanos;

	private final int warmup;

	private final int measured;

	private final int missBudget;

	private final Yardstick yardstick;

	// Misses the headline allows before it can no longer be met: of the feasible
	// requests, of their prompt tokens and per size quartile.
	private final int feasibleMissBudget;

	private final double feasibleTokenMissBudget;

	private final int[] quartileMissBudget = new int[Yardstick.QUARTILES];

	private int feasibleWithin;

	private int feasibleMissed;

	private long feasibleWithinTokens;

	private long feasibleMissedTokens;

	private final int[] quartileWithin = new int[Yardstick.QUARTILES];

	private final int[] quartileMissed = new int[Yardstick.QUARTILES];

	private double inTimeWork;

	// Measured requests whose release was the rescue's placement.
	private final boolean[] rescued;

	private int withinSlo;

	private int missed;

	private int rejected;

	private long withinSloPromptTokens;

	private long rejectedPromptTokens;

	private int resolvedCount;

	private int deadlineCursor;

	private final long[] decisionNanos;

	private int decisions;

	private long cachedTokens;

	private long promptTokens;

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

	private boolean stoppedEarly;

	private final MembershipSchedule schedule;

	// A scheduled run is watched over its whole length, so it never stops early.
	private final boolean stopEarly;

	private final int[] cachedOf;

	// Engines created so far (slots beyond are for instances the schedule adds later).
	private int joined;

	private final boolean[] member;

	private final List<Long> changeNanos = new ArrayList<>();

	// With a policy that routes on KV events: the index every router reads, and each
	// engine's events of the step being run. Null otherwise.
	private @Nullable KvEventIndex kvIndex;

	private @Nullable StepEvents[] stepEvents;

	// Per router, requests held by an AdmissionHold policy's queue (FCFS); null when the
	// policy holds nothing.
	private final @Nullable ArrayDeque<Integer>[] held;

	// SGLang mesh sync interval; 0 when the routers' trees are not synchronised.
	private final long meshNanos;

	private Simulation(Workload workload, PolicySpec policy, SimulationConfig config, double rate,
			boolean recordTimeline, MembershipSchedule schedule, boolean stopEarly, @Nullable Yardstick yardstick) {
		this(workload, policy, config, rate, recordTimeline, schedule, stopEarly, yardstick, null,
				FairnessSettings.ofDefaults());
	}

	private Simulation(Workload workload, PolicySpec policy, SimulationConfig config, double rate,
			boolean recordTimeline, MembershipSchedule schedule, boolean stopEarly, @Nullable Yardstick yardstick,
			@Nullable TenantMix tenants, FairnessSettings fairness) {
		if (config.warmup() >= workload.size()) {
			throw new IllegalArgumentException("the trace has " + workload.size()
					+ " requests, not more than the warm-up of " + config.warmup() + "; nothing would be measured");
		}
		this.workload = workload;
		this.policy = policy;
		this.config = config;
		this.rate = rate;
		this.recordTimeline = recordTimeline;
		this.schedule = schedule;
		this.stopEarly = stopEarly && schedule.isEmpty();
		int n = workload.size();
		this.cachedOf = new int[n];
		Arrays.fill(cachedOf, -1);
		this.arrival = workload.trace().arrivalNanos(rate);
		this.routed = new RoutingRequest[n];
		this.dispatches = new InstancePool.Dispatch[n];
		this.routerOf = new int[n];
		this.instanceOf = new int[n];
		this.ttft = new long[n];
		Arrays.fill(ttft, -1);
		Arrays.fill(instanceOf, -1);
		this.resolved = new boolean[n];
		this.sloNanos = config.slo().toNanos();
		SloClasses classes = config.sloClasses();
		if (classes.isEmpty()) {
			this.classOf = null;
			this.maxSloNanos = sloNanos;
		}
		else {
			this.classOf = new int[n];
			long max = 0;
			for (int i = 0; i < n; i++) {
				classOf[i] = classes.classOf(i, config.seed());
				max = Math.max(max, classes.sloNanos(classOf[i], sloNanos));
			}
			this.maxSloNanos = max;
		}
		this.tenants = tenants;
		if (tenants == null) {
			this.tenantOf = null;
		}
		else {
			this.tenantOf = tenants.assign(workload.trace(), config.seed());
		}
		this.delayNanos = config.networkDelay().toNanos();
		this.shareNanos = config.prefixShareInterval() == null ? 0 : config.prefixShareInterval().toNanos();
		this.scrapeNanos = config.scrapeIntervalOf(policy.name()).toNanos();
		this.warmup = config.warmup();
		this.measured = n - warmup;
		this.missBudget = budget(measured, config.targetAttainment());
		this.yardstick = yardstick != null ? yardstick : Yardstick.allFeasible(workload.trace(), warmup);
		if (this.yardstick.warmup() != warmup) {
			throw new IllegalArgumentException(
					"yardstick warm-up " + this.yardstick.warmup() + " is not the run's " + warmup);
		}
		this.feasibleMissBudget = budget(this.yardstick.feasibleCount(), config.targetAttainment());
		this.feasibleTokenMissBudget = this.yardstick.feasibleTokens() * (1 - config.promptTokenTarget())
				+ 1e-9 * this.yardstick.feasibleTokens();
		for (int q = 0; q < Yardstick.QUARTILES; q++) {
			quartileMissBudget[q] = budget(this.yardstick.quartileCount(q), config.sizeFloor());
		}
		this.rescued = new boolean[n];
		this.decisionNanos = new long[measured];
		int slots = schedule.slots(config.instances());
		this.instanceIds = new String[slots];
		this.engines = new InstanceModel[slots];
		this.stepping = new boolean[slots];
		this.member = new boolean[slots];
		for (int i = 0; i < config.instances(); i++) {
			join();
		}
		List<RingMember> members = members();
		this.pools = new InstancePool[config.routers()];
		this.policies = new RoutingPolicy[config.routers()];
		this.queues = new DispatchQueues[config.routers()];
		this.queued = new QueuedRequest[n];
		this.tickAt = new long[config.routers()];
		Arrays.fill(tickAt, Long.MAX_VALUE);
		QueueSettings queueSettings = policy.queue();
		SchedulerSettings settings = policy.settingsFor(config.settings());
		for (int r = 0; r < pools.length; r++) {
			pools[r] = new InstancePool("router-" + r, settings, () -> this.now);
			pools[r].updateMembership(members);
			policies[r] = policy.create(settings);
			if (policies[r] instanceof KvEventFeed.Consumer consumer) {
				consumer.attach(kvEventFeed());
			}
			policies[r].onMembershipChanged(pools[r]);
			if (queueSettings != null) {
				queues[r] = new DispatchQueues(pools[r], new TimedPolicy(policies[r]), queueSettings, fairness);
			}
		}
		@SuppressWarnings("unchecked")
		ArrayDeque<Integer>[] holds = new ArrayDeque[pools.length];
		for (int r = 0; r < pools.length; r++) {
			holds[r] = queues[r] == null && policies[r] instanceof AdmissionHold ? new ArrayDeque<>() : null;
		}
		this.held = holds;
		this.meshNanos = shareNanos > 0 && pools.length > 1 && policies[0] instanceof SglangCacheAwarePolicy
				? SglangCacheAwarePolicy.DEFAULT_MESH_SYNC_INTERVAL.toNanos() : 0;
	}

	/**
	 * The KV event feed of this run, created on first use: one index for every router
	 * (each replica subscribes to the same events), fed by every engine from now on.
	 */
	private KvEventFeed kvEventFeed() {
		InstanceModel.KvEventSource source = engines[0].kvEventSource();
		if (source == null) {
			throw new IllegalArgumentException(
					"policy '" + policy.name() + "' routes on engine KV events, which this instance model has none of");
		}
		if (kvIndex == null) {
			kvIndex = new KvEventIndex();
			stepEvents = new StepEvents[engines.length];
			for (int k = 0; k < joined; k++) {
				listen(k);
			}
		}
		Map<String, long[]> recent = new HashMap<>();
		KvEventFeed.EngineBlocks blocks = request -> {
			if (request.blocks() == null) {
				return null;
			}
			// One entry: choose() and onDispatched() of the same request ask in turn.
			long[] chain = recent.get(request.id());
			if (chain == null) {
				int i = Integer.parseInt(request.id().substring(1));
				chain = source.blockHashes(workload.trace().requests().get(i));
				recent.clear();
				recent.put(request.id(), chain);
			}
			return chain;
		};
		return new KvEventFeed(kvIndex, blocks, source.blockTokens(), source.maxBatchedTokens());
	}

	/** Collects engine {@code k}'s KV events of each step. */
	private void listen(int k) {
		InstanceModel.KvEventSource source = engines[k].kvEventSource();
		if (stepEvents == null || source == null) {
			return;
		}
		StepEvents events = new StepEvents();
		stepEvents[k] = events;
		source.listen(events);
	}

	/**
	 * Runs {@code policy} on {@code workload} at {@code rate} requests per second,
	 * stopping once more than 10 % of measured requests have missed (the rest then count
	 * as misses: the rate fails either way, and a capacity search need not wait for the
	 * queues of a hopeless rate to drain).
	 */
	public static RunResult run(Workload workload, PolicySpec policy, SimulationConfig config, double rate,
			boolean recordTimeline) {
		return run(workload, policy, config, rate, recordTimeline, true);
	}

	/**
	 * Runs {@code policy} on {@code workload} at {@code rate} requests per second; with
	 * {@code stopEarly} false every measured request is run to its end however many have
	 * missed, so a failing rate reports the attainment and percentiles it really reaches.
	 */
	public static RunResult run(Workload workload, PolicySpec policy, SimulationConfig config, double rate,
			boolean recordTimeline, boolean stopEarly) {
		return run(workload, null, policy, config, rate, recordTimeline, stopEarly);
	}

	/**
	 * Runs {@code policy} on {@code workload} at {@code rate}, judged on
	 * {@code yardstick} (every measured request feasible when {@code null}); with
	 * {@code stopEarly} the run stops once neither the headline nor the request-only
	 * target can be met.
	 */
	public static RunResult run(Workload workload, @Nullable Yardstick yardstick, PolicySpec policy,
			SimulationConfig config, double rate, boolean recordTimeline, boolean stopEarly) {
		return new Simulation(workload, policy, config, rate, recordTimeline, MembershipSchedule.NONE, stopEarly,
				yardstick)
			.run();
	}

	/**
	 * Runs {@code policy} on {@code workload} at {@code rate} with the requests of
	 * {@code tenants}' tenants, the dispatch queues sharing the pool between them as
	 * {@code fairness} says; judged as
	 * {@link #run(Workload, Yardstick, PolicySpec, SimulationConfig, double, boolean, boolean)}
	 * and reported per tenant too.
	 */
	public static TenantRun run(Workload workload, @Nullable Yardstick yardstick, PolicySpec policy,
			SimulationConfig config, double rate, TenantMix tenants, FairnessSettings fairness, boolean stopEarly) {
		Simulation sim = new Simulation(workload, policy, config, rate, false, MembershipSchedule.NONE, stopEarly,
				yardstick, tenants, fairness);
		RunResult result = sim.run();
		return new TenantRun(result, sim.tenantResults());
	}

	/**
	 * Per tenant, of the measured requests: how many, how many made their objective, how
	 * many were rejected, the tokens (prompt and output) they asked for and those of the
	 * ones served (that got a first token).
	 */
	private List<TenantRun.TenantResult> tenantResults() {
		TenantMix mix = tenants;
		int[] of = tenantOf;
		if (mix == null || of == null) {
			return List.of();
		}
		List<TenantRun.TenantResult> out = new ArrayList<>();
		for (int t = 0; t < mix.count(); t++) {
			int count = 0;
			int within = 0;
			long demand = 0;
			long served = 0;
			for (int j = 0; j < measured; j++) {
				int i = warmup + j;
				if (of[i] != t) {
					continue;
				}
				TraceRequest r = workload.trace().requests().get(i);
				count++;
				demand += r.inputTokens() + r.outputTokens();
				if (ttft[i] >= 0) {
					served += r.inputTokens() + r.outputTokens();
					within += ttft[i] <= sloOf(i) ? 1 : 0;
				}
			}
			out.add(new TenantRun.TenantResult(mix.tenant(t).name(), count, within, demand, served));
		}
		return out;
	}

	/**
	 * Misses {@code count} requests allow while at least {@code target} of them stay
	 * within the objective.
	 */
	static int budget(int count, double target) {
		return count - (int) Math.ceil(target * count - 1e-9);
	}

	/**
	 * Runs {@code policy} at {@code rate} while instances join and leave as
	 * {@code schedule} says, to the end of the trace (no early stop), and keeps every
	 * request's outcome for a timeline.
	 */
	public static ScheduledRun run(Workload workload, PolicySpec policy, SimulationConfig config, double rate,
			MembershipSchedule schedule) {
		Simulation sim = new Simulation(workload, policy, config, rate, true, schedule, false, null);
		RunResult result = sim.run();
		return new ScheduledRun(result, sim.arrival.clone(), sim.ttft.clone(), sim.cachedOf.clone(),
				sim.instanceOf.clone(), List.of(Arrays.copyOf(sim.instanceIds, sim.joined)), config.instances(),
				sim.changeNanos.stream().mapToLong(Long::longValue).toArray(), config.warmup());
	}

	/** Creates the engine of the next slot and marks it a member. */
	private void join() {
		int k = joined++;
		instanceIds[k] = String.format("engine-%03d", k);
		instanceIndex.put(instanceIds[k], k);
		engines[k] = config.instanceModels().create(k, config.seed() * 1_000_003L + k);
		member[k] = true;
		listen(k);
	}

	private List<RingMember> members() {
		List<RingMember> members = new ArrayList<>();
		for (int k = 0; k < joined; k++) {
			if (member[k]) {
				members.add(new RingMember(instanceIds[k], 1.0));
			}
		}
		return members;
	}

	/**
	 * Applies step {@code s} of the schedule. A removed instance (the newest member
	 * first) leaves every router's rings at once and gets nothing new; requests the
	 * routers still queue for it are re-routed, and its engine keeps stepping through the
	 * requests it already holds, which finish as they would.
	 */
	private void changeMembership(int s) {
		int delta = schedule.steps().get(s).delta();
		for (int d = 0; d < delta; d++) {
			join();
		}
		for (int d = 0, k = joined - 1; d < -delta && k >= 0; k--) {
			if (member[k]) {
				member[k] = false;
				d++;
			}
		}
		List<RingMember> members = members();
		for (int r = 0; r < pools.length; r++) {
			pools[r].updateMembership(members);
			policies[r].onMembershipChanged(pools[r]);
			DispatchQueues q = queues[r];
			if (q != null) {
				// Requests still queued for a removed instance are re-routed at once.
				q.onMembershipChanged();
				scheduleTick(r);
			}
			release(r);
		}
		changeNanos.add(now);
	}

	private RunResult run() {
		for (int i = 0; i < arrival.length; i++) {
			schedule(arrival[i], ARRIVAL, i, null);
		}
		schedule(0, SCRAPE, 0, null);
		if (config.shareLoad() && shareNanos > 0 && pools.length > 1) {
			schedule(shareNanos, LOAD_FLUSH, 0, null);
		}
		long span = arrival[arrival.length - 1] - arrival[0];
		for (int s = 0; s < schedule.steps().size(); s++) {
			schedule(arrival[0] + schedule.steps().get(s).nanos(span), MEMBERSHIP, s, null);
		}
		while (resolvedCount < measured && !stoppedEarly && !events.isEmpty()) {
			Event e = events.poll();
			now = e.time;
			switch (e.kind) {
				case ARRIVAL -> arrive(e.index);
				case DELIVER -> deliver(e.index);
				case STEP_END -> stepEnded(e.index, (InstanceModel.StepOutcome) e.payload);
				case FIRST_TOKEN_SEEN -> firstTokenSeen(e.index);
				case FINISH_SEEN -> finishSeen(e.index);
				case SCRAPE -> scrape();
				case QUEUE_TICK -> queueTick(e.index);
				case MEMBERSHIP -> changeMembership(e.index);
				case SHARE -> shared(e.index, (String) e.payload);
				case LOAD_FLUSH -> flushLoad();
				case LOAD_SEEN -> loadSeen((long[][]) e.payload);
				case KV_EVENTS -> kvEventsSeen(e.index, (StepEvents.Batch) e.payload);
				case MESH_INSERT -> meshInsertSeen(e.index, (String) e.payload);
				default -> throw new IllegalStateException("unknown event kind " + e.kind);
			}
		}
		return result();
	}

	private long sloOf(int i) {
		return classOf == null ? sloNanos : config.sloClasses().sloNanos(classOf[i], sloNanos);
	}

	private void schedule(long time, int kind, int index, @Nullable Object payload) {
		events.add(new Event(time, sequence++, kind, index, payload));
	}

	private void arrive(int i) {
		int r = i % pools.length;
		routerOf[i] = r;
		RoutingRequest request = new RoutingRequest("r" + i, workload.blocks(i), sloOf(i), now);
		if (classOf != null) {
			request = request.withClassPriority(config.sloClasses().priority(classOf[i]));
		}
		if (tenants != null && tenantOf != null) {
			request = request.withTenant(tenants.tenant(tenantOf[i]), 0);
		}
		routed[i] = request;
		DispatchQueues q = queues[r];
		if (q != null) {
			choosing = i;
			queued[i] = q.submit(request, true, new Listener(i));
			choosing = -1;
			scheduleTick(r);
			return;
		}
		ArrayDeque<Integer> waiting = held[r];
		if (waiting != null && (!waiting.isEmpty() || ((AdmissionHold) policies[r]).mustHold(pools[r]))) {
			waiting.addLast(i);
			return;
		}
		route(i, false);
	}

	/**
	 * Releases router {@code r}'s held requests, oldest first, while its policy admits
	 * them.
	 */
	private void release(int r) {
		ArrayDeque<Integer> waiting = held[r];
		if (waiting == null) {
			return;
		}
		while (!waiting.isEmpty() && !((AdmissionHold) policies[r]).mustHold(pools[r])) {
			route(waiting.pollFirst(), true);
		}
	}

	/**
	 * Chooses request {@code i}'s instance and sends it there (immediate dispatch);
	 * {@code later}: through the event queue even without a network delay, since a
	 * release runs inside the handling of another event, which may be about to start the
	 * same engine's next step.
	 */
	private void route(int i, boolean later) {
		int r = routerOf[i];
		RoutingRequest request = routed[i];
		long start = config.decisionTimer().nanos();
		Decision d = policies[r].choose(request, pools[r]);
		long took = config.decisionTimer().nanos() - start;
		if (i >= warmup) {
			decisionNanos[decisions++] = took;
		}
		Integer target = d == null ? null : instanceIndex.get(d.instanceId());
		if (d == null || target == null) {
			reject(i);
			return;
		}
		instanceOf[i] = target;
		dispatches[i] = pools[r].dispatch(request, d);
		shareRelease(i, d.instanceId());
		policies[r].onDispatched(request, d, pools[r]);
		if (meshNanos > 0 && request.blocks() != null) {
			schedule((now / meshNanos + 1) * meshNanos + delayNanos, MESH_INSERT, i, d.instanceId());
		}
		if (delayNanos == 0 && !later) {
			deliver(i);
		}
		else {
			schedule(now + delayNanos, DELIVER, i, null);
		}
	}

	/**
	 * With replica sync, request {@code i}'s blocks, just released to {@code instanceId}
	 * by its router, reach the other routers with the router's next flush: at the next
	 * multiple of the sync interval, plus the network delay.
	 */
	private void shareRelease(int i, String instanceId) {
		if (shareNanos == 0 || pools.length < 2 || routed[i].blocks() == null) {
			return;
		}
		schedule((now / shareNanos + 1) * shareNanos + delayNanos, SHARE, i, instanceId);
	}

	/**
	 * Request {@code i}'s release to {@code instanceId} enters the other replicas' view.
	 */
	private void shared(int i, String instanceId) {
		long[] chain = routed[i].blocks().chain();
		for (int r = 0; r < pools.length; r++) {
			InstanceState state = r == routerOf[i] ? null : pools[r].instance(instanceId);
			if (state != null) {
				pools[r].recordElsewhere(state, chain);
			}
		}
	}

	/**
	 * Request {@code i}'s insert into its router's tree of {@code instanceId} reaches the
	 * other replicas (SGLang Model Gateway mesh).
	 */
	private void meshInsertSeen(int i, String instanceId) {
		for (int r = 0; r < pools.length; r++) {
			if (r != routerOf[i] && policies[r] instanceof SglangCacheAwarePolicy sglang) {
				sglang.peerInserted(instanceId, routed[i].blocks(), pools[r]);
			}
		}
	}

	/** Engine {@code k}'s KV events of one step reach the routers' index. */
	private void kvEventsSeen(int k, StepEvents.Batch batch) {
		KvEventIndex index = kvIndex;
		if (index == null) {
			return;
		}
		for (int j = 0; j < batch.hashes().length; j++) {
			if (batch.stored()[j]) {
				index.stored(instanceIds[k], batch.hashes()[j]);
			}
			else {
				index.removed(instanceIds[k], batch.hashes()[j]);
			}
		}
	}

	/**
	 * With replica sync and load sharing, every router publishes its load on each
	 * instance with its flush (requests and uncached tokens in prefill, uncached tokens
	 * queued); the others see it after the network delay, replacing what they knew.
	 */
	private void flushLoad() {
		long[][] load = new long[pools.length][3 * joined];
		for (int r = 0; r < pools.length; r++) {
			for (int k = 0; k < joined; k++) {
				InstanceState state = pools[r].instance(instanceIds[k]);
				if (state != null) {
					load[r][3 * k] = state.prefillRequests();
					load[r][3 * k + 1] = state.prefillTokens();
					load[r][3 * k + 2] = state.queuedTokens();
				}
			}
		}
		schedule(now + delayNanos, LOAD_SEEN, 0, load);
		schedule(now + shareNanos, LOAD_FLUSH, 0, null);
	}

	/**
	 * Each router's view of its peers' load becomes {@code load}'s; queues may release.
	 */

	private void loadSeen(long[][] load) {
		for (int r = 0; r < pools.length; r++) {
			for (int k = 0; k < load[r].length / 3; k++) {
				InstanceState state = pools[r].instance(instanceIds[k]);
				if (state == null) {
					continue;
				}
				long requests = 0;
				long tokens = 0;
				long queuedTokens = 0;
				for (int o = 0; o < pools.length; o++) {
					if (o != r) {
						requests += load[o][3 * k];
						tokens += load[o][3 * k + 1];
						queuedTokens += load[o][3 * k + 2];
					}
				}
				state.peerLoad((int) requests, tokens, queuedTokens);
			}
			release(r);
			DispatchQueues q = queues[r];
			if (q != null) {
				q.tick(now);
				scheduleTick(r);
			}
		}
	}

	private void deliver(int i) {
		int k = instanceOf[i];
		if (!engines[k].submit(i, workload.trace().requests().get(i), now)) {
			DispatchQueues q = queues[routerOf[i]];
			if (q != null) {
				q.finish(queued[i]);
				scheduleTick(routerOf[i]);
				reject(i);
				return;
			}
			InstancePool.Dispatch d = dispatches[i];
			if (d != null) {
				d.finish();
			}
			policies[routerOf[i]].onFinished(routed[i], instanceIds[k], pools[routerOf[i]]);
			reject(i);
			return;
		}
		if (!stepping[k]) {
			startStep(k);
		}
	}

	private void reject(int i) {
		if (i >= warmup) {
			rejected++;
			rejectedPromptTokens += workload.trace().requests().get(i).inputTokens();
			miss(i);
		}
	}

	private void startStep(int k) {
		InstanceModel.StepOutcome outcome = engines[k].step(now);
		stepping[k] = true;
		schedule(outcome.endNanos(), STEP_END, k, outcome);
		StepEvents events = stepEvents == null ? null : stepEvents[k];
		if (events != null && events.size() > 0) {
			schedule(outcome.endNanos() + delayNanos + KV_EVENT_LAG_NANOS, KV_EVENTS, k, events.drain());
		}
	}

	private void stepEnded(int k, InstanceModel.StepOutcome outcome) {
		stepping[k] = false;
		for (int j = 0; j < outcome.firstTokens().length; j++) {
			int i = outcome.firstTokens()[j];
			if (cachedOf[i] < 0) {
				cachedOf[i] = outcome.cachedTokens()[j];
			}
			if (i >= warmup && ttft[i] < 0) {
				cachedTokens += outcome.cachedTokens()[j];
				promptTokens += workload.trace().requests().get(i).inputTokens();
			}
			at(now + delayNanos, FIRST_TOKEN_SEEN, i);
		}
		for (int i : outcome.finished()) {
			at(now + delayNanos, FINISH_SEEN, i);
		}
		if (engines[k].hasWork()) {
			startStep(k);
		}
	}

	private void at(long time, int kind, int i) {
		if (time == now) {
			if (kind == FIRST_TOKEN_SEEN) {
				firstTokenSeen(i);
			}
			else {
				finishSeen(i);
			}
		}
		else {
			schedule(time, kind, i, null);
		}
	}

	private void firstTokenSeen(int i) {
		if (ttft[i] >= 0) {
			return;
		}
		ttft[i] = now - arrival[i];
		DispatchQueues q = queues[routerOf[i]];
		if (q != null) {
			q.firstToken(queued[i]);
			scheduleTick(routerOf[i]);
		}
		else {
			InstancePool.Dispatch d = dispatches[i];
			if (d != null) {
				d.firstToken();
			}
			release(routerOf[i]);
		}
		if (i >= warmup && !resolved[i]) {
			if (ttft[i] <= sloOf(i)) {
				resolved[i] = true;
				resolvedCount++;
				withinSlo++;
				int prompt = workload.trace().requests().get(i).inputTokens();
				withinSloPromptTokens += prompt;
				inTimeWork += yardstick.workSeconds(i);
				if (yardstick.feasible(i)) {
					feasibleWithin++;
					feasibleWithinTokens += prompt;
					int quartile = yardstick.quartile(i);
					if (quartile >= 0) {
						quartileWithin[quartile]++;
					}
				}
			}
			else {
				miss(i);
			}
		}
	}

	private void finishSeen(int i) {
		DispatchQueues q = queues[routerOf[i]];
		if (q != null) {
			// The engine generated the trace's output: the tenant's estimate is
			// corrected.
			q.reportOutput(queued[i], workload.trace().requests().get(i).outputTokens());
			q.finish(queued[i]);
			scheduleTick(routerOf[i]);
			return;
		}
		InstancePool.Dispatch d = dispatches[i];
		if (d != null && !d.isFinished()) {
			d.finish();
			policies[routerOf[i]].onFinished(routed[i], instanceIds[instanceOf[i]], pools[routerOf[i]]);
		}
		release(routerOf[i]);
	}

	private void miss(int i) {
		if (resolved[i]) {
			return;
		}
		resolved[i] = true;
		resolvedCount++;
		missed++;
		if (yardstick.feasible(i)) {
			feasibleMissed++;
			feasibleMissedTokens += workload.trace().requests().get(i).inputTokens();
			int q = yardstick.quartile(i);
			if (q >= 0) {
				quartileMissed[q]++;
			}
		}
		if (stopEarly && !stoppedEarly && missed > missBudget && headlineLost()) {
			// Neither the headline nor the request-only target can be reached: the rest
			// of the run would not change either verdict, only cost time.
			stoppedEarly = resolvedCount < measured;
		}
	}

	/** Whether one of the headline's criteria can no longer be met. */
	private boolean headlineLost() {
		if (feasibleMissed > feasibleMissBudget || feasibleMissedTokens > feasibleTokenMissBudget) {
			return true;
		}
		for (int q = 0; q < Yardstick.QUARTILES; q++) {
			if (quartileMissed[q] > quartileMissBudget[q]) {
				return true;
			}
		}
		return false;
	}

	private void scrape() {
		double[] loads = new double[engines.length];
		int members = 0;
		EngineSnapshot[] snapshots = new EngineSnapshot[joined];
		for (int k = 0; k < joined; k++) {
			EngineSnapshot snapshot = engines[k].scrape(now);
			snapshots[k] = snapshot;
			for (InstancePool pool : pools) {
				var state = pool.instance(instanceIds[k]);
				if (state != null) {
					state.updateEngine(snapshot);
				}
			}
			loads[k] = engines[k].load();
			members += member[k] ? 1 : 0;
		}
		if (now >= arrival[warmup]) {
			sampleEngines(snapshots);
			// Over current members: a slot not yet joined or already gone is no instance.
			double[] memberLoads = new double[members];
			for (int k = 0, m = 0; k < joined; k++) {
				if (member[k]) {
					memberLoads[m++] = loads[k];
				}
			}
			cvSum += coefficientOfVariation(memberLoads);
			cvSamples++;
		}
		for (int r = 0; r < pools.length; r++) {
			release(r);
		}
		if (recordTimeline) {
			ticks.add(tick(loads, snapshots));
		}
		// Requests whose deadline passed without a first token have missed: resolve them
		// now so a saturated run stops without waiting for its queues to drain.
		while (deadlineCursor < measured && arrival[warmup + deadlineCursor] + maxSloNanos < now) {
			int i = warmup + deadlineCursor++;
			if (ttft[i] < 0) {
				miss(i);
			}
		}
		schedule(now + scrapeNanos, SCRAPE, 0, null);
	}

	private Tick tick(double[] loads, EngineSnapshot[] snapshots) {
		int n = engines.length;
		int[][] counts = new int[4][n];
		double[] kv = new double[n];
		long[] preempted = new long[n];
		for (int k = 0; k < joined; k++) {
			if (!member[k]) {
				continue;
			}
			counts[0][k] = snapshots[k].running();
			counts[1][k] = snapshots[k].waiting();
			kv[k] = snapshots[k].kvUsage();
			preempted[k] = engines[k].preemptions();
			for (int r = 0; r < pools.length; r++) {
				InstanceState state = pools[r].instance(instanceIds[k]);
				counts[2][k] += state == null ? 0 : state.inFlight();
				DispatchQueues q = queues[r];
				counts[3][k] += q == null ? 0 : q.queued(instanceIds[k]);
			}
		}
		return new Tick(now / 1e9, loads, counts, kv, preempted);
	}

	/** Makes sure router {@code r}'s queues are ticked at their next deadline. */
	private void scheduleTick(int r) {
		DispatchQueues q = queues[r];
		if (q == null) {
			return;
		}
		long next = q.nextDeadlineNanos();
		if (next == Long.MAX_VALUE) {
			return;
		}
		next = Math.max(next, now + (next <= now ? QUEUE_RETICK_NANOS : 0));
		if (next < tickAt[r]) {
			tickAt[r] = next;
			schedule(next, QUEUE_TICK, r, null);
		}
	}

	private void queueTick(int r) {
		if (now != tickAt[r]) {
			// Superseded by an earlier tick, which rescheduled what is still due.
			return;
		}
		tickAt[r] = Long.MAX_VALUE;
		DispatchQueues q = queues[r];
		if (q != null) {
			q.tick(now);
			scheduleTick(r);
		}
	}

	private long migrations() {
		long sum = 0;
		for (DispatchQueues q : queues) {
			if (q != null) {
				sum += q.migrations();
			}
		}
		return sum;
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
		if (preemptedAtStart == null || evictedAtStart == null) {
			preemptedAtStart = new long[engines.length];
			evictedAtStart = new long[engines.length];
			for (int k = 0; k < joined; k++) {
				preemptedAtStart[k] = engines[k].preemptions();
				evictedAtStart[k] = engines[k].evictedBlocks();
			}
		}
		for (int k = 0; k < snapshots.length; k++) {
			if (member[k]) {
				runningSum += snapshots[k].running();
				kvSum += snapshots[k].kvUsage();
				kvPeak = Math.max(kvPeak, snapshots[k].kvUsage());
				engineSamples++;
			}
		}
	}

	private RunResult.EngineLoad engineLoad() {
		long preempted = 0;
		long evicted = 0;
		for (int k = 0; k < joined; k++) {
			// An engine that joined after the first measured tick started from zero.
			preempted += engines[k].preemptions() - (preemptedAtStart == null ? 0 : preemptedAtStart[k]);
			evicted += engines[k].evictedBlocks() - (evictedAtStart == null ? 0 : evictedAtStart[k]);
		}
		return new RunResult.EngineLoad(engineSamples == 0 ? 0 : runningSum / engineSamples,
				engineSamples == 0 ? 0 : kvSum / engineSamples, kvPeak, preempted, evicted);
	}

	private RunResult result() {
		double[] seconds = new double[measured];
		double[] served = new double[measured];
		int servedCount = 0;
		long measuredPromptTokens = 0;
		for (int j = 0; j < measured; j++) {
			int i = warmup + j;
			measuredPromptTokens += workload.trace().requests().get(i).inputTokens();
			long t = ttft[i] >= 0 ? ttft[i] : Math.max(0, now - arrival[i]);
			seconds[j] = t / 1e9;
			if (ttft[i] >= 0) {
				served[servedCount++] = seconds[j];
			}
		}
		Arrays.sort(seconds);
		served = Arrays.copyOf(served, servedCount);
		Arrays.sort(served);
		long[] took = Arrays.copyOf(decisionNanos, decisions);
		Arrays.sort(took);
		RunResult.Timeline timeline = null;
		if (recordTimeline) {
			int n = engines.length;
			int samples = ticks.size();
			double[] times = new double[samples];
			double[][] load = new double[n][samples];
			int[][][] counts = new int[4][n][samples];
			double[][] kv = new double[n][samples];
			long[][] preempted = new long[n][samples];
			for (int s = 0; s < samples; s++) {
				Tick t = ticks.get(s);
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
			timeline = new RunResult.Timeline(times, load, instanceIds.clone(), counts[0], counts[1], kv, preempted,
					counts[2], counts[3]);
		}
		List<RunResult.SizeQuartile> quartiles = new ArrayList<>();
		for (int q = 0; q < Yardstick.QUARTILES; q++) {
			if (yardstick.quartileCount(q) > 0) {
				quartiles.add(new RunResult.SizeQuartile(yardstick.quartileMin(q), yardstick.quartileMax(q),
						yardstick.quartileCount(q), quartileWithin[q]));
			}
		}
		int rescuedCount = 0;
		for (int i = warmup; i < rescued.length; i++) {
			rescuedCount += rescued[i] ? 1 : 0;
		}
		double engineSeconds = yardstick.knowsWork() ? config.instances() * Math.max(0, now - arrival[warmup]) / 1e9
				: Double.POSITIVE_INFINITY;
		RunResult.Judged judged = new RunResult.Judged(yardstick.feasibleCount(), feasibleWithin,
				yardstick.feasibleTokens(), feasibleWithinTokens, quartiles, rescuedCount, inTimeWork, engineSeconds);
		return new RunResult(policy.name(), rate, measured, withinSlo, rejected, stoppedEarly,
				percentile(seconds, 0.50), percentile(seconds, 0.90), percentile(seconds, 0.99),
				promptTokens == 0 ? 0 : (double) cachedTokens / promptTokens, cvSamples == 0 ? 0 : cvSum / cvSamples,
				migrations(), took.length == 0 ? 0 : percentile(took, 0.99), seconds, timeline, engineLoad(),
				classResults(),
				new RunResult.PromptTokens(measuredPromptTokens, withinSloPromptTokens, rejectedPromptTokens),
				servedCount == 0 ? RunResult.Served.NONE
						: new RunResult.Served(servedCount, percentile(served, 0.90), percentile(served, 0.99)),
				judged);
	}

	/**
	 * Attainment and TTFT per SLO class of the measured requests; none without classes.
	 */
	private List<RunResult.ClassResult> classResults() {
		if (classOf == null) {
			return List.of();
		}
		SloClasses classes = config.sloClasses();
		List<RunResult.ClassResult> out = new ArrayList<>();
		for (int c = 0; c < classes.count(); c++) {
			List<Double> seconds = new ArrayList<>();
			int within = 0;
			for (int j = 0; j < measured; j++) {
				int i = warmup + j;
				if (classOf[i] != c) {
					continue;
				}
				long t = ttft[i] >= 0 ? ttft[i] : Math.max(0, now - arrival[i]);
				seconds.add(t / 1e9);
				within += ttft[i] >= 0 && ttft[i] <= sloOf(i) ? 1 : 0;
			}
			double[] sorted = seconds.stream().mapToDouble(Double::doubleValue).sorted().toArray();
			out.add(new RunResult.ClassResult(classes.name(c), classes.sloNanos(c, sloNanos) / 1e9, sorted.length,
					within, percentile(sorted, 0.90), percentile(sorted, 0.99)));
		}
		return out;
	}

	/** Nearest-rank percentile of sorted values. */
	static double percentile(double[] sorted, double q) {
		if (sorted.length == 0) {
			return 0;
		}
		int rank = (int) Math.ceil(q * sorted.length);
		return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
	}

	static long percentile(long[] sorted, double q) {
		int rank = (int) Math.ceil(q * sorted.length);
		return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
	}

	/** Hands a released request to the network, or records its rejection as a miss. */
	private final class Listener implements DispatchListener {

		private final int index;

		Listener(int index) {
			this.index = index;
		}

		@Override
		public void released(QueuedRequest request, Decision decision, InstancePool.Dispatch dispatch) {
			Integer target = instanceIndex.get(decision.instanceId());
			if (target == null) {
				throw new IllegalStateException("released to unknown instance " + decision.instanceId());
			}
			instanceOf[index] = target;
			dispatches[index] = dispatch;
			rescued[index] = request.placedByRescue();
			shareRelease(index, decision.instanceId());
			// Always through the event queue: the engine may start a step, and this runs
			// inside a call into the queues.
			schedule(now + delayNanos, DELIVER, index, null);
		}

		@Override
		public void rejected(QueuedRequest request, Rejection rejection) {
			reject(index);
		}

	}

	/** Times {@code choose()} of the arrival being submitted, as the direct path does. */
	private final class TimedPolicy implements RoutingPolicy {

		private final RoutingPolicy delegate;

		TimedPolicy(RoutingPolicy delegate) {
			this.delegate = delegate;
		}

		@Override
		public String name() {
			return delegate.name();
		}

		@Override
		public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
			long start = config.decisionTimer().nanos();
			Decision d = delegate.choose(request, pool);
			long took = config.decisionTimer().nanos() - start;
			if (choosing >= warmup) {
				decisionNanos[decisions++] = took;
			}
			return d;
		}

		@Override
		public void onDispatched(RoutingRequest request, Decision decision, InstancePool pool) {
			delegate.onDispatched(request, decision, pool);
		}

		@Override
		public void onFinished(RoutingRequest request, String instanceId, InstancePool pool) {
			delegate.onFinished(request, instanceId, pool);
		}

		@Override
		public void onMembershipChanged(InstancePool pool) {
			delegate.onMembershipChanged(pool);
		}

	}

	/** One engine's KV events of the step being run, in order. */
	private static final class StepEvents implements KvEventListener {

		private long[] hashes = new long[256];

		private boolean[] stored = new boolean[256];

		private int size;

		@Override
		public void stored(long blockHash) {
			add(blockHash, true);
		}

		@Override
		public void removed(long blockHash) {
			add(blockHash, false);
		}

		private void add(long hash, boolean isStored) {
			if (size == hashes.length) {
				hashes = Arrays.copyOf(hashes, size * 2);
				stored = Arrays.copyOf(stored, size * 2);
			}
			hashes[size] = hash;
			stored[size++] = isStored;
		}

		int size() {
			return size;
		}

		Batch drain() {
			Batch batch = new Batch(Arrays.copyOf(hashes, size), Arrays.copyOf(stored, size));
			size = 0;
			return batch;
		}

		record Batch(long[] hashes, boolean[] stored) {
		}

	}

	private static final class Event implements Comparable<Event> {

		final long time;

		final long seq;

		final int kind;

		final int index;

		final @Nullable Object payload;

		Event(long time, long seq, int kind, int index, @Nullable Object payload) {
			this.time = time;
			this.seq = seq;
			this.kind = kind;
			this.index = index;
			this.payload = payload;
		}

		@Override
		public int compareTo(Event o) {
			int c = Long.compare(time, o.time);
			return c != 0 ? c : Long.compare(seq, o.seq);
		}

	}

}

package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.core.AdmissionHold;
import io.github.dualmap.core.Decision;
import io.github.dualmap.core.DispatchQueues;
import io.github.dualmap.core.FairnessSettings;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.KvEventFeed;
import io.github.dualmap.core.KvEventIndex;
import io.github.dualmap.core.RoutingRequest;
import org.jspecify.annotations.Nullable;

/**
 * One discrete-event run: a workload replayed at one rate into one policy (one instance
 * of it per router replica) and N engine instances, in virtual time. One
 * {@link EventQueue} orders the run's {@link SimEvent}s (arrivals, deliveries over the
 * network, engine step ends, scrapes, ...); ties are broken by insertion order, so a run
 * is a pure function of its inputs (the real time of {@code choose()} aside, which is
 * only measured). Not thread-safe: one run per object, independent runs may go on in
 * parallel.
 * <p>
 * This class coordinates: it acts on each event by calling the part that holds the job,
 * in the order the gateway and the engines would. The parts, package-private:
 * <ul>
 * <li>{@link Routers}: the gateway replicas, each with its pool view and policy, behind
 * one {@link DispatchQueues} per router for a policy with {@link PolicySpec#queue()}
 * settings (as in the gateway: arrivals are submitted, first tokens and ends reported,
 * {@link DispatchQueues#tick} runs at {@link DispatchQueues#nextDeadlineNanos()}), a FCFS
 * hold for an {@link AdmissionHold} policy (re-checked when a first token or an end
 * reaches the router, at every scrape and when peer load arrives), else routing on
 * arrival;</li>
 * <li>{@link EngineFleet}: the engine instances, their steps, membership, and the KV
 * events a policy that routes on them ({@link KvEventFeed.Consumer}) reads through one
 * {@link KvEventIndex} for all routers, one network delay plus
 * {@link EngineFleet#KV_EVENT_LAG_NANOS} after each step ends;</li>
 * <li>{@link PeerUpdates}: what replicas learn of each other's releases and load, and
 * {@code sglang-cache-aware}'s tree inserts over its mesh, each router flushing on its
 * own phase;</li>
 * <li>{@link EngineScrapes}: the scrape of engine metrics into the routers' pools (each
 * router on its own phase, {@link SimulationConfig#routerPhases()}), and the engine-side
 * statistics and timeline;</li>
 * <li>{@link Measurement}: each request's TTFT judged against its objective
 * ({@link RequestObjectives}), the result, and when the run may stop.</li>
 * </ul>
 * A rejection counts as a miss.
 */
public final class Simulation {

	/** Share of measured requests that must meet the SLO. */
	public static final double TARGET_ATTAINMENT = 0.9;

	private final Workload workload;

	private final PolicySpec policy;

	private final SimulationConfig config;

	private final double rate;

	private final MembershipSchedule schedule;

	private final long[] arrival;

	private final long delayNanos;

	private final long scrapeNanos;

	// The run's tenants and each request's (an index into them); null without tenants.
	private final @Nullable TenantMix tenants;

	private final int @Nullable [] tenantOf;

	private final EventQueue events = new EventQueue();

	private final RequestObjectives objectives;

	private final Measurement measurement;

	private final EngineFleet fleet;

	private final Routers routers;

	private final PeerUpdates peers;

	private final EngineScrapes scrapes;

	// When each membership change happened.
	private final List<Long> changeNanos = new ArrayList<>();

	// A scheduled run's samples, at each scrape tick, of router 0's estimate of a cold
	// reference prompt on each instance slot (-1 where it is none or fits no model).
	private final List<Long> estimateSampleNanos = new ArrayList<>();

	private final List<long[]> coldTtftEstimates = new ArrayList<>();

	private final SimEvent.Handler coordinator = new Coordinator();

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
		this.schedule = schedule;
		int n = workload.size();
		this.arrival = workload.trace().arrivalNanos(rate);
		this.objectives = new RequestObjectives(config, n);
		this.tenants = tenants;
		this.tenantOf = tenants == null ? null : tenants.assign(workload.trace(), config.seed());
		this.delayNanos = config.networkDelay().toNanos();
		this.scrapeNanos = config.scrapeIntervalOf(policy.name()).toNanos();
		// A scheduled run is watched over its whole length, so it never stops early.
		int[] routerOf = config.routerSpread().assign(workload, config.routers());
		this.measurement = new Measurement(workload, config, this.objectives, this.arrival, routerOf, yardstick,
				stopEarly && schedule.isEmpty());
		this.fleet = new EngineFleet(config, workload, this.events, schedule.slots(config.instances()));
		for (int i = 0; i < config.instances(); i++) {
			this.fleet.join();
		}
		this.routers = new Routers(policy, config, fairness, routerOf, this.events, this.fleet, new RoutedOutcomes());
		this.peers = new PeerUpdates(config, this.events, this.routers, this.fleet);
		this.scrapes = new EngineScrapes(this.fleet, this.routers, recordTimeline);
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
		TenantMix mix = sim.tenants;
		int[] of = sim.tenantOf;
		return new TenantRun(result, mix == null || of == null ? List.of() : sim.measurement.tenantResults(mix, of));
	}

	/**
	 * Runs {@code policy} at {@code rate} while instances join and leave as
	 * {@code schedule} says, to the end of the trace (no early stop), and keeps every
	 * request's outcome for a timeline.
	 */
	public static ScheduledRun run(Workload workload, PolicySpec policy, SimulationConfig config, double rate,
			MembershipSchedule schedule) {
		return run(workload, null, policy, config, rate, schedule);
	}

	/**
	 * As
	 * {@link #run(Workload, PolicySpec, SimulationConfig, double, MembershipSchedule)},
	 * the summary and request log judged on {@code yardstick} (every measured request
	 * feasible when {@code null}).
	 */
	public static ScheduledRun run(Workload workload, @Nullable Yardstick yardstick, PolicySpec policy,
			SimulationConfig config, double rate, MembershipSchedule schedule) {
		Simulation sim = new Simulation(workload, policy, config, rate, true, schedule, false, yardstick);
		RunResult result = sim.run();
		return new ScheduledRun(result, sim.arrival.clone(), sim.measurement.ttfts(), sim.measurement.cachedTokensOf(),
				sim.routers.instances(), List.of(sim.fleet.joinedIds()), config.instances(),
				sim.changeNanos.stream().mapToLong(Long::longValue).toArray(), config.warmup(),
				sim.estimateSampleNanos.stream().mapToLong(Long::longValue).toArray(),
				sim.coldTtftEstimates.toArray(long[][]::new));
	}

	/**
	 * How many routers, from router 0, scrape at the run's scrape ticks: all of them when
	 * their phases are {@link RouterPhases#ALIGNED}, else router 0 alone (the others
	 * scrape on phases of their own, {@link SimEvent.RouterScrape}).
	 */
	private int tickRouters() {
		return this.config.routerPhases() == RouterPhases.ALIGNED ? this.routers.count() : 1;
	}

	private RunResult run() {
		for (int i = 0; i < this.arrival.length; i++) {
			this.events.schedule(this.arrival[i], new SimEvent.Arrival(i));
		}
		this.events.schedule(0, new SimEvent.Scrape());
		for (int r = tickRouters(); r < this.routers.count(); r++) {
			this.events.schedule(this.config.routerPhases().offsetNanos(r, this.routers.count(), this.scrapeNanos),
					new SimEvent.RouterScrape(r));
		}
		this.peers.start();
		long span = this.arrival[this.arrival.length - 1] - this.arrival[0];
		for (int s = 0; s < this.schedule.steps().size(); s++) {
			this.events.schedule(this.arrival[0] + this.schedule.steps().get(s).nanos(span),
					new SimEvent.MembershipChange(s));
		}
		while (!this.measurement.done() && !this.events.isEmpty()) {
			this.events.next().handle(this.coordinator);
		}
		return this.measurement.result(this.policy.name(), this.rate, this.events.now(), this.config.instances(),
				this.fleet.joined(), this.fleet.slotIds(), this.scrapes, this.routers.migrations());
	}

	/**
	 * Acts on {@code event} now if it is due now (as the network does without delay),
	 * else schedules it.
	 */
	private void at(long time, SimEvent event) {
		if (time == this.events.now()) {
			event.handle(this.coordinator);
		}
		else {
			this.events.schedule(time, event);
		}
	}

	/**
	 * Records router 0's estimate of a cold reference prompt
	 * ({@link InstanceState#coldTtftEstimateNanos()}) on every instance slot at
	 * {@code now}: what the gateway's {@code dualmap.instance.ttft.estimate} gauge would
	 * read.
	 */
	private void sampleEstimates(long now) {
		String[] ids = this.fleet.slotIds();
		long[] estimates = new long[ids.length];
		InstancePool pool = this.routers.pool(0);
		for (int k = 0; k < ids.length; k++) {
			InstanceState s = ids[k] == null || !this.fleet.isMember(k) ? null : pool.instance(ids[k]);
			estimates[k] = s == null ? -1 : s.coldTtftEstimateNanos();
		}
		this.estimateSampleNanos.add(now);
		this.coldTtftEstimates.add(estimates);
	}

	/**
	 * Acts on each event by calling the parts that hold its job, in the order the gateway
	 * and the engines would.
	 */
	private final class Coordinator implements SimEvent.Handler {

		@Override
		public void arrival(int i) {
			RoutingRequest request = new RoutingRequest("r" + i, workload.blocks(i), objectives.sloOf(i), events.now());
			if (objectives.hasClasses()) {
				request = request.withClassPriority(objectives.priorityOf(i));
			}
			if (tenants != null && tenantOf != null) {
				request = request.withTenant(tenants.tenant(tenantOf[i]), 0);
			}
			routers.arrive(i, request);
		}

		@Override
		public void delivery(int i) {
			if (!fleet.submit(routers.instanceOf(i), i)) {
				routers.refusedByEngine(i);
				measurement.rejected(i, "refused by its engine", fleet.id(routers.instanceOf(i)));
			}
		}

		@Override
		public void stepEnd(int k, InstanceModel.StepOutcome outcome) {
			fleet.stepEnded(k);
			long seen = events.now() + delayNanos;
			for (int j = 0; j < outcome.firstTokens().length; j++) {
				int i = outcome.firstTokens()[j];
				measurement.firstTokenComputed(i, outcome.cachedTokens()[j]);
				at(seen, new SimEvent.FirstTokenSeen(i));
			}
			for (int i : outcome.finished()) {
				at(seen, new SimEvent.FinishSeen(i));
			}
			fleet.continueStepping(k);
		}

		@Override
		public void firstTokenSeen(int i) {
			if (!measurement.firstTokenSeen(i, events.now())) {
				return;
			}
			routers.firstToken(i);
			measurement.judgeFirstToken(i);
		}

		@Override
		public void finishSeen(int i) {
			routers.finished(i, workload.trace().requests().get(i).outputTokens());
		}

		@Override
		public void scrape() {
			long now = events.now();
			// The run's scrape ticks: what the timeline and the engine statistics sample,
			// and the routers that scrape at them.
			EngineScrapes.Scrape scrape = scrapes.scrape(now, measurement.measuring(now), tickRouters());
			for (int r = 0; r < tickRouters(); r++) {
				routers.release(r);
			}
			scrapes.record(now, scrape);
			if (!schedule.isEmpty()) {
				sampleEstimates(now);
			}
			measurement.expireDeadlines(now);
			events.schedule(now + scrapeNanos, new SimEvent.Scrape());
		}

		@Override
		public void routerScrape(int r) {
			long now = events.now();
			scrapes.scrapeInto(r, now);
			routers.release(r);
			events.schedule(now + scrapeNanos, new SimEvent.RouterScrape(r));
		}

		@Override
		public void queueTick(int r) {
			routers.queueTick(r);
		}

		/**
		 * Applies step {@code s} of the schedule. A removed instance (the newest member
		 * first) leaves every router's rings at once and gets nothing new; requests the
		 * routers still queue for it are re-routed, and its engine keeps stepping through
		 * the requests it already holds, which finish as they would.
		 */
		@Override
		public void membershipChange(int s) {
			MembershipSchedule.Step step = schedule.steps().get(s);
			if (step.slowDown()) {
				// The engine's later steps take longer; the routers learn it only from
				// what they observe.
				fleet.engine(step.instance()).setStepTimeFactor(step.factor());
				changeNanos.add(events.now());
				return;
			}
			int delta = step.delta();
			for (int d = 0; d < delta; d++) {
				fleet.join();
			}
			fleet.leave(-delta);
			routers.membershipChanged(fleet.members());
			changeNanos.add(events.now());
		}

		@Override
		public void releaseShared(int i, String instanceId) {
			peers.releaseShared(i, instanceId);
		}

		@Override
		public void loadFlush(int from, int to) {
			peers.flushLoad(from, to);
		}

		/**
		 * Every other router's view of its peers' load takes in the load routers
		 * {@code [from, to)} published; its queues may release.
		 */
		@Override
		public void loadSeen(int from, int to, long[][] load) {
			peers.loadPublished(from, to, load);
			for (int r = 0; r < routers.count(); r++) {
				if (to - from > 1 || r != from) {
					peers.peerLoadSeen(r);
					routers.release(r);
					routers.tickQueues(r);
				}
			}
		}

		@Override
		public void kvEventsSeen(int k, KvStepEvents.Batch batch) {
			fleet.kvEventsSeen(k, batch);
		}

		@Override
		public void meshInsertSeen(int i, String instanceId) {
			peers.meshInsertSeen(i, instanceId);
		}

	}

	/** What becomes of a request its router has routed, released or rejected. */
	private final class RoutedOutcomes implements Routers.Outcomes {

		@Override
		public void decided(int i, long nanos) {
			measurement.decided(i, nanos);
		}

		@Override
		public void released(int i, Decision decision, boolean byRescue, int moves) {
			Integer slot = fleet.slotOf(decision.instanceId());
			measurement.placed(i, slot == null ? -1 : slot, byRescue, events.now(), decision.reason().value(), moves);
			peers.released(i, decision.instanceId());
		}

		@Override
		public void dispatched(int i, String instanceId) {
			peers.dispatched(i, instanceId);
		}

		@Override
		public void deliverNow(int i) {
			coordinator.delivery(i);
		}

		@Override
		public void rejected(int i, String reason, @Nullable String instance) {
			measurement.rejected(i, reason, instance);
		}

	}

}

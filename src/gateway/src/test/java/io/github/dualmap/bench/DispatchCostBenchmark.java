package io.github.dualmap.bench;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dualmap.core.DispatchListener;
import io.github.dualmap.core.DispatchQueues;
import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.RequestTicket;
import io.github.dualmap.core.RingMember;
import io.github.dualmap.core.RoutingPolicies;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.core.Tenant;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The whole dispatch path's cost per request, not the choice alone: one operation is a
 * request's arrival through {@link DispatchQueues#submit} (the policy's choice,
 * admission, the release pass, and the hotspot moves and idle pull when they are due)
 * plus one earlier request's first token and one's end (each frees prefill room:
 * releases), and every 50 ms of the pool's clock a {@link DispatchQueues#tick} (expiry
 * with rescue). With a move interval the operations that run the moves pay for the whole
 * pool's pass, once per interval of the pool's clock. The pool is kept past its prefill
 * capacity: arrivals come a tenth faster than first tokens, so queues hold requests,
 * hotspots shed them, requests reach their wait bound and are rescued or turned away. The
 * clock moves 20 ms / N per arrival, so each instance sees the same traffic whatever N.
 * Sample mode, for percentiles. Not run by the test suite; the command is in
 * {@code docs/benchmarks.md}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class DispatchCostBenchmark {

	private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	@Param({ "8", "64", "512" })
	int instances;

	@Param({ "dualmap" })
	String policy;

	/**
	 * Arrivals that get no first token, in percent: 0 keeps the queues at the length they
	 * reach while the pool fills; 10 holds the pool past its capacity, so the queues fill
	 * to their bounds, expire, rescue and turn requests away.
	 */
	@Param({ "0", "10" })
	int overloadPercent;

	/**
	 * Whether the pool's engines are scraped: every tick a tenth of the instances, so
	 * each every 500 ms of the pool's clock, nothing waiting in the engine and its
	 * prefix-cache counters grown by 8,000 uncached tokens (under one prefill budget, so
	 * the release gate holds nothing). With
	 * {@code -p scraped=true -p engineBacklog=false,true} one run gives the cost of
	 * {@code dualmap.scrape.engine-backlog} on the whole path as a ratio.
	 */
	@Param({ "false" })
	boolean scraped;

	/** {@code dualmap.scrape.engine-backlog}. */
	@Param({ "true" })
	boolean engineBacklog;

	/**
	 * {@code dualmap.dispatch.move-interval} in milliseconds (the default 0: after every
	 * event): with {@code -p moveIntervalMillis=0,50} one run gives the cost of running
	 * the hotspot moves and the idle pull once per 50 ms of the pool's clock, as a ratio.
	 */
	@Param({ "0" })
	int moveIntervalMillis;

	/**
	 * {@code dualmap.dispatch.max-move-checks-per-event} (the default 0: no bound): with
	 * {@code -p moveChecks=0,16} one run gives the cost of the hotspot moves considering
	 * at most 16 requests per pass, as a ratio.
	 */
	@Param({ "0" })
	int moveChecks;

	/**
	 * {@code dualmap.dispatch.max-pull-checks-per-event} (the default 16): with
	 * {@code -p pullChecks=0,16} one run gives the cost of the idle pull looking at every
	 * request its rule reaches against at most 16 per pass, as a ratio.
	 */
	@Param({ "16" })
	int pullChecks;

	/**
	 * {@code dualmap.dispatch.max-migrations} (the default 2): with
	 * {@code -p maxMigrations=0,2} one run gives the cost of the hotspot moves and the
	 * idle pull (both off at 0), as a ratio.
	 */
	@Param({ "2" })
	int maxMigrations;

	/**
	 * Tenants the requests belong to, in turn (1: every request the default tenant): with
	 * {@code -p tenants=1,1000} one run gives what many tenants add to the path (their
	 * accounts, each queue's waiting tenants kept in order of service, the search of a
	 * full queue for a request to shed).
	 */
	@Param({ "1" })
	int tenants;

	private List<InstanceState> states;

	private int scrapes;

	private final AtomicLong clock = new AtomicLong(1_000_000_000L);

	private DispatchQueues queues;

	private RoutingRequest[] requests;

	private long stepNanos;

	private long nextTick;

	private int next;

	private long ops;

	/** Released requests whose first token has not come yet, oldest first. */
	private final ArrayDeque<RequestTicket> inPrefill = new ArrayDeque<>();

	/** Requests past their first token, oldest first. */
	private final ArrayDeque<RequestTicket> decoding = new ArrayDeque<>();

	private final DispatchListener listener = new DispatchListener() {
		@Override
		public void released(RequestTicket request, io.github.dualmap.core.Decision decision,
				InstancePool.InFlight dispatch) {
			inPrefill.add(request);
		}

		@Override
		public void rejected(RequestTicket request, io.github.dualmap.core.Rejection rejection) {
		}
	};

	@Setup(Level.Trial)
	public void setUp() {
		SchedulerSettings settings = SchedulerSettings.custom().blockTokens(512).engineBacklog(engineBacklog).build();
		InstancePool pool = new InstancePool("bench", settings, clock::get);
		List<RingMember> members = new ArrayList<>();
		for (int i = 0; i < instances; i++) {
			members.add(new RingMember(String.format("engine-%03d", i), 1.0));
		}
		pool.updateMembership(members);
		states = pool.instances();
		RoutingPolicy routing = RoutingPolicies.create(policy, settings);
		routing.onMembershipChanged(pool);
		queues = new DispatchQueues(pool, routing,
				RoutingPolicies.queueSettingsFor(policy,
						QueueSettings.custom()
							.moveInterval(Duration.ofMillis(moveIntervalMillis))
							.maxMoveChecksPerTrigger(moveChecks)
							.maxPullChecksPerTrigger(pullChecks)
							.maxMigrations(maxMigrations)
							.build()));
		// 64 tenants' system prompts, each followed by a conversation of its own, some
		// turns continuing an earlier one: the shape of the Mooncake trace.
		SplittableRandom random = new SplittableRandom(1);
		PrefixHasher hasher = PrefixHasher.ofDefaults();
		requests = new RoutingRequest[1 << 14];
		long fresh = 1_000_000;
		long[][] chains = new long[requests.length][];
		for (int i = 0; i < requests.length; i++) {
			long[] ids;
			if (i > 64 && random.nextInt(3) == 0) {
				long[] earlier = chains[random.nextInt(i - 64, i)];
				ids = java.util.Arrays.copyOf(earlier, earlier.length + random.nextInt(1, 4));
				for (int k = earlier.length; k < ids.length; k++) {
					ids[k] = fresh++;
				}
			}
			else {
				ids = new long[random.nextInt(2, 24)];
				ids[0] = random.nextInt(64);
				for (int k = 1; k < ids.length; k++) {
					ids[k] = fresh++;
				}
			}
			chains[i] = ids;
			PromptBlocks blocks = hasher.ofHashIds("bench", ids, 512, ids.length * 512 - 100);
			RoutingRequest r = new RoutingRequest("r" + i, blocks, settings.defaultSloNanos(), 0);
			requests[i] = tenants > 1 ? r.withTenant(new Tenant("t" + (i % tenants), 1, 0), 0) : r;
		}
		stepNanos = TimeUnit.MILLISECONDS.toNanos(20) / instances;
		nextTick = clock.get() + TICK_NANOS;
		// Steady state before measuring: about 40 arrivals per instance.
		for (int i = 0; i < 40 * instances; i++) {
			request();
		}
		if (Boolean.getBoolean("bench.debug")) {
			System.out
				.println("queued=" + queues.queued() + " inPrefill=" + inPrefill.size() + " decoding=" + decoding.size()
						+ " releases=" + queues.releases() + " rejections=" + queues.rejections() + " migrations="
						+ queues.migrations() + " rescues=" + queues.rescues() + " pulls=" + queues.pulls());
		}
	}

	@Benchmark
	public int request() {
		long now = clock.addAndGet(stepNanos);
		RoutingRequest r = requests[next];
		next = (next + 1) & (requests.length - 1);
		queues.submit(r, true, listener);
		ops++;
		// First tokens come overloadPercent slower than arrivals, while some are in
		// prefill.
		if (ops % 100 >= overloadPercent && !inPrefill.isEmpty()) {
			RequestTicket first = inPrefill.poll();
			queues.firstToken(first);
			decoding.add(first);
		}
		// Each instance decodes about eight requests at once.
		if (decoding.size() > 8 * instances) {
			queues.finish(decoding.poll());
		}
		if (now >= nextTick) {
			nextTick += TICK_NANOS;
			if (scraped) {
				scrape(now);
			}
			queues.tick(now);
		}
		return inPrefill.size();
	}

	private void scrape(long now) {
		int n = states.size();
		int from = scrapes % 10 * n / 10;
		int to = (scrapes % 10 + 1) * n / 10;
		long round = scrapes / 10 + 1;
		for (int i = from; i < to; i++) {
			InstanceState s = states.get(i);
			s.updateEngine(new EngineSnapshot(now, 0, s.inFlight(), 0.5, 10_000.0 * round, 2_000.0 * round, 0));
		}
		scrapes++;
	}

}

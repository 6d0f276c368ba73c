package io.github.dualmap.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.core.RingMember;
import io.github.dualmap.core.RoutingPolicies;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
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
 * The routing decision's own cost: one {@code choose()} on a pool of N instances whose
 * policy has already routed a few thousand shared-prefix prompts, for DualMap (with and
 * without the prefix directory) and the peers that look at every instance per request
 * (the global minimum, both SGLang generations and llm-d's router profile). DualMap's
 * cost should stay flat as N grows (two ring lookups); a global scan grows with N. Not
 * run by the test suite; see {@code docs/simulator.md} for the command.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class DecisionCostBenchmark {

	@Param({ "8", "64", "512" })
	int instances;

	@Param({ "dualmap", "dualmap-directory", "global-min-ttft", "sglang-cache-aware", "smg-cache-aware",
			"llmd-token-load" })
	String policy;

	/**
	 * {@code dualmap.cold.cached-share}: 0 (the default) leaves the cold rule off; 0.3
	 * times DualMap with it ({@code -p coldCachedShare=0,0.3}).
	 */
	@Param({ "0" })
	double coldCachedShare;

	/**
	 * Whether every instance has a fresh engine scrape (a few requests waiting, its
	 * prefix-cache counters grown by a long prompt since the scrape before), so the
	 * pending tokens read the scraped state; {@code false}: never scraped, as in the
	 * tables. With {@code -p scraped=true -p engineBacklog=false,true} one run gives the
	 * cost of {@code dualmap.scrape.engine-backlog} as a ratio.
	 */
	@Param({ "false" })
	boolean scraped;

	/** {@code dualmap.scrape.engine-backlog}. */
	@Param({ "true" })
	boolean engineBacklog;

	private InstancePool pool;

	private RoutingPolicy routing;

	private RoutingRequest[] requests;

	private int next;

	@Setup(Level.Trial)
	public void setUp() {
		SchedulerSettings settings = SchedulerSettings.custom()
			.blockTokens(512)
			.coldCachedShare(coldCachedShare)
			.engineBacklog(engineBacklog)
			// The scrapes below stay fresh for the whole trial.
			.staleAfter(Duration.ofHours(1))
			.build();
		pool = new InstancePool("bench", settings, System::nanoTime);
		List<RingMember> members = new ArrayList<>();
		for (int i = 0; i < instances; i++) {
			members.add(new RingMember(String.format("engine-%03d", i), 1.0));
		}
		pool.updateMembership(members);
		routing = RoutingPolicies.create(policy, settings);
		routing.onMembershipChanged(pool);
		// 64 tenants' system prompts, each followed by a conversation of its own: the
		// shape of the Mooncake trace.
		SplittableRandom random = new SplittableRandom(1);
		PrefixHasher hasher = PrefixHasher.ofDefaults();
		requests = new RoutingRequest[4096];
		long fresh = 1_000_000;
		for (int i = 0; i < requests.length; i++) {
			int depth = random.nextInt(4, 24);
			long[] ids = new long[depth];
			ids[0] = random.nextInt(64);
			for (int k = 1; k < depth; k++) {
				ids[k] = fresh++;
			}
			PromptBlocks blocks = hasher.ofHashIds("bench", ids, 512, depth * 512 - 100);
			requests[i] = new RoutingRequest("r" + i, blocks, settings.defaultSloNanos(), 0);
		}
		if (scraped) {
			for (InstanceState s : pool.instances()) {
				long now = System.nanoTime();
				s.updateEngine(new EngineSnapshot(now, 0, 4, 0.5, 10_000, 2_000, 0));
				s.updateEngine(new EngineSnapshot(now, 3, 4, 0.6, 60_000, 4_000, 0));
			}
		}
		// Learned state: route and finish half the prompts once, keep some in flight.
		for (int i = 0; i < requests.length / 2; i++) {
			Decision d = routing.choose(requests[i], pool);
			InstancePool.InFlight handle = pool.dispatch(requests[i], d);
			routing.onDispatched(requests[i], d, pool);
			if (i % 4 != 0) {
				handle.firstToken();
				handle.finish();
				routing.onFinished(requests[i], d.instanceId(), pool);
			}
		}
	}

	@Benchmark
	public Decision choose() {
		RoutingRequest r = requests[next];
		next = (next + 1) & (requests.length - 1);
		return routing.choose(r, pool);
	}

}

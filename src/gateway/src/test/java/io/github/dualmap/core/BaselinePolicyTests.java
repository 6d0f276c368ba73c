package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class BaselinePolicyTests {

	private final ManualClock clock = new ManualClock();

	private final SchedulerSettings settings = SchedulerSettings.custom().hotWindow(1_000).hotMinSamples(1_000).build();

	private InstancePool pool(int instances) {
		InstancePool pool = new InstancePool("llm", settings, clock);
		List<RingMember> members = new ArrayList<>();
		for (int i = 0; i < instances; i++) {
			members.add(new RingMember("i" + i, 1));
		}
		pool.updateMembership(members);
		return pool;
	}

	private static RoutingRequest request(long... chain) {
		return new RoutingRequest("r", new PromptBlocks(chain, 64, chain.length * 64), 1_000_000_000L, 0);
	}

	private static void load(InstancePool pool, String id, int tokens) {
		pool.dispatch(request(-tokens), new Decision(id, Reason.LOAD, 0, tokens, -1));
	}

	private static List<String> choices(RoutingPolicy policy, InstancePool pool, int n) {
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < n; i++) {
			ids.add(policy.choose(request(i), pool).instanceId());
		}
		return ids;
	}

	@Test
	void roundRobinCyclesOverAcceptingInstances() {
		InstancePool pool = pool(3);
		RoundRobinPolicy policy = new RoundRobinPolicy();
		assertThat(choices(policy, pool, 6)).containsExactly("i0", "i1", "i2", "i0", "i1", "i2");
		pool.instance("i1").draining(true);
		List<String> two = choices(policy, pool, 4);
		assertThat(two).doesNotContain("i1");
		assertThat(two.stream().filter("i0"::equals).count()).isEqualTo(2);
		Decision d = policy.choose(request(5, 6), pool);
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		assertThat(d.ttftEstimateNanos()).isEqualTo(-1);
		pool.instances().forEach(s -> s.healthy(false));
		assertThat(policy.choose(request(1), pool)).isNull();
	}

	@Test
	void leastLoadedTakesFewestPendingTokensThenFewestInFlightThenRingOrder() {
		InstancePool pool = pool(3);
		LeastLoadedPolicy policy = new LeastLoadedPolicy();
		assertThat(policy.choose(request(1), pool).instanceId()).isEqualTo("i0");
		// A request past its prefill: no pending tokens, but in flight.
		pool.dispatch(request(9), new Decision("i0", Reason.LOAD, 0, 0, -1));
		assertThat(policy.choose(request(1), pool).instanceId()).isEqualTo("i1");
		load(pool, "i1", 10);
		load(pool, "i2", 5);
		Decision d = policy.choose(request(1), pool);
		assertThat(d.instanceId()).isEqualTo("i0");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		pool.instance("i0").healthy(false);
		assertThat(policy.choose(request(1), pool).instanceId()).isEqualTo("i2");
		// Even for an unparsed body.
		assertThat(policy.choose(new RoutingRequest("r", null, 1, 0), pool).instanceId()).isEqualTo("i2");
	}

	@Test
	void consistentHashSendsAKeyHomeAndWalksPastUnavailableInstances() {
		InstancePool pool = pool(5);
		ConsistentHashPolicy policy = new ConsistentHashPolicy();
		RoutingRequest r = request(42, 43);
		String home = pool.rings().candidates(42).first();
		Decision d = policy.choose(r, pool);
		assertThat(d.instanceId()).isEqualTo(home);
		assertThat(d.reason()).isEqualTo(Reason.AFFINITY);
		// Load does not move it.
		load(pool, home, 1_000_000);
		assertThat(policy.choose(r, pool).instanceId()).isEqualTo(home);
		pool.instance(home).draining(true);
		Decision fallback = policy.choose(r, pool);
		assertThat(fallback.instanceId()).isEqualTo(pool.rings().walk(0, 42, id -> pool.instance(id).acceptsNewWork()))
			.isNotEqualTo(home);
		assertThat(fallback.reason()).isEqualTo(Reason.FALLBACK);
		pool.instances().forEach(s -> s.healthy(false));
		assertThat(policy.choose(r, pool)).isNull();
	}

	@Test
	void consistentHashRoutesAnUnparsedBodyByLoad() {
		InstancePool pool = pool(3);
		load(pool, "i0", 10);
		load(pool, "i1", 10);
		Decision d = new ConsistentHashPolicy().choose(new RoutingRequest("r", null, 1, 0), pool);
		assertThat(d.instanceId()).isEqualTo("i2");
		assertThat(d.reason()).isEqualTo(Reason.LOAD);
		assertThat(new ConsistentHashPolicy().choose(request(1), new InstancePool("empty", settings, clock))).isNull();
	}

	@Test
	void baselinesReportTheShadowCacheForAccounting() {
		InstancePool pool = pool(1);
		RoutingRequest r = request(7, 8, 9);
		pool.instance("i0").shadow().record(r.blocks().chain());
		for (RoutingPolicy p : List.of(new RoundRobinPolicy(), new LeastLoadedPolicy(), new ConsistentHashPolicy())) {
			Decision d = p.choose(r, pool);
			assertThat(d.cachedTokens()).as(p.name()).isEqualTo(191);
			assertThat(d.uncachedTokens()).isEqualTo(1);
		}
	}

	@Test
	void baselinesAreRegistered() {
		assertThat(RoutingPolicies.create("round-robin", settings)).isInstanceOf(RoundRobinPolicy.class);
		assertThat(RoutingPolicies.create("least-loaded", settings)).isInstanceOf(LeastLoadedPolicy.class);
		assertThat(RoutingPolicies.create("consistent-hash", settings)).isInstanceOf(ConsistentHashPolicy.class);
		// Each call is a new policy with its own state.
		assertThat(RoutingPolicies.create("round-robin", settings))
			.isNotSameAs(RoutingPolicies.create("round-robin", settings));
		assertThat(RoutingPolicies.exists("consistent-hash")).isTrue();
		assertThatIllegalArgumentException().isThrownBy(() -> RoutingPolicies.create("nope", settings))
			.withMessageContaining("'nope'");
	}

}

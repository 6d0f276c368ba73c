package io.github.dualmap.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.NanoClock;
import io.github.dualmap.core.RingMember;
import io.github.dualmap.core.SchedulerSettings;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The membership diff against {@link InstanceMembership} alone: which lists change the
 * core pool's members (instances added, removed, re-weighted, moved, their metadata
 * edited), which are the same membership and cost nothing, what the state of instances
 * that stay keeps (their drain among it), and when the hooks are called.
 */
class InstanceMembershipTests {

	private final InstancePool pool = new InstancePool("llm", SchedulerSettings.ofDefaults(), NanoClock.SYSTEM);

	/** The ids each call of the retain hook got. */
	private final List<Set<String>> retained = new ArrayList<>();

	/** The lists each call of the tell hook got, as ids. */
	private final List<List<String>> told = new ArrayList<>();

	private RuntimeException failNextTell;

	private Runnable onRetain = () -> {
	};

	private final InstanceMembership membership = new InstanceMembership("llm", this.pool, "dualmap.weight", ids -> {
		this.onRetain.run();
		this.retained.add(Set.copyOf(ids));
	}, current -> {
		RuntimeException failure = this.failNextTell;
		this.failNextTell = null;
		if (failure != null) {
			throw failure;
		}
		this.told.add(current.stream().map(ServicePool::instanceId).toList());
	});

	@Test
	void addedInstancesJoinThePoolAndAreKeptForForwardingInDiscoveryOrder() {
		ServiceInstance b = instance("b", 2);
		ServiceInstance a = instance("a", 1);
		assertThat(this.membership.update(List.of(b, a))).isTrue();
		assertThat(this.pool.size()).isEqualTo(2);
		assertThat(this.membership.size()).isEqualTo(2);
		assertThat(this.membership.serviceInstance("a")).isSameAs(a);
		assertThat(this.membership.serviceInstances()).containsExactly(b, a);
		assertThat(this.retained).containsExactly(Set.of("a", "b"));
		assertThat(this.told).containsExactly(List.of("b", "a"));
		assertThat(this.membership.update(List.of(b, a, instance("c", 3)))).isTrue();
		assertThat(this.pool.size()).isEqualTo(3);
		assertThat(this.told).containsExactly(List.of("b", "a"), List.of("b", "a", "c"));
	}

	@Test
	void aRemovedInstanceLeavesThePoolAndIsNoLongerForwardedTo() {
		this.membership.update(List.of(instance("a", 1), instance("b", 2)));
		assertThat(this.membership.update(List.of(instance("a", 1)))).isTrue();
		assertThat(this.pool.size()).isEqualTo(1);
		assertThat(this.pool.instance("b")).isNull();
		assertThat(this.membership.serviceInstance("b")).isNull();
		assertThat(this.retained).last().isEqualTo(Set.of("a"));
		assertThat(this.told).last().isEqualTo(List.of("a"));
		assertThat(this.membership.update(List.of())).isTrue();
		assertThat(this.pool.size()).isZero();
		assertThat(this.membership.lastListEmpty()).isTrue();
		assertThat(this.retained).last().isEqualTo(Set.of());
	}

	@Test
	void theSameListAgainInTheSameNewOrEqualObjectsChangesNothingAndTellsNoOne() {
		List<ServiceInstance> first = List.of(instance("a", 1), instance("b", 2));
		assertThat(this.membership.update(first)).isTrue();
		long rebuilds = this.pool.ringRebuilds();
		assertThat(this.membership.update(first)).isFalse();
		assertThat(this.membership.update(new ArrayList<>(first))).isFalse();
		assertThat(this.membership.update(List.of(instance("a", 1), instance("b", 2)))).isFalse();
		assertThat(this.pool.ringRebuilds()).isEqualTo(rebuilds);
		assertThat(this.told).hasSize(1);
		assertThat(this.retained).hasSize(1);
		// The objects kept for forwarding stay the first, equal ones.
		assertThat(this.membership.serviceInstance("a")).isSameAs(first.get(0));
	}

	@Test
	void anInstanceThatStaysKeepsItsStateAndItsDrainAcrossAChange() {
		this.membership.update(List.of(instance("a", 1), instance("b", 2)));
		InstanceState a = this.pool.instance("a");
		a.draining(true);
		assertThat(this.membership.update(List.of(instance("a", 1), instance("b", 2), instance("c", 3)))).isTrue();
		assertThat(this.pool.instance("a")).isSameAs(a);
		assertThat(a.draining()).isTrue();
		assertThat(a.acceptsNewWork()).isFalse();
	}

	@Test
	void aDrainedInstanceThatLeavesAndComesBackStartsAfresh() {
		this.membership.update(List.of(instance("a", 1), instance("b", 2)));
		this.pool.instance("a").draining(true);
		this.membership.update(List.of(instance("b", 2)));
		this.membership.update(List.of(instance("a", 1), instance("b", 2)));
		assertThat(this.pool.instance("a").draining()).isFalse();
		assertThat(this.pool.instance("a").acceptsNewWork()).isTrue();
	}

	@Test
	void anEditOfTheMetadataAloneIsAChangeThatKeepsTheInstanceState() {
		this.membership.update(List.of(instance("a", 1, Map.of("dualmap.weight", "2"))));
		InstanceState before = this.pool.instance("a");
		ServiceInstance edited = instance("a", 1, Map.of("dualmap.weight", "2", "dualmap.metrics-path", "/m"));
		assertThat(this.membership.update(List.of(edited))).isTrue();
		assertThat(this.pool.instance("a")).isSameAs(before);
		assertThat(before.weight()).isEqualTo(2.0);
		assertThat(this.membership.serviceInstance("a")).isSameAs(edited);
		assertThat(this.told).hasSize(2);
	}

	@Test
	void aNewAddressOrWeightIsAChange() {
		this.membership.update(List.of(instance("a", 1)));
		ServiceInstance moved = new DefaultServiceInstance("a", "llm", "10.0.9.9", 8000, false, Map.of());
		assertThat(this.membership.update(List.of(moved))).isTrue();
		assertThat(this.membership.serviceInstance("a").getHost()).isEqualTo("10.0.9.9");
		ServiceInstance heavier = new DefaultServiceInstance("a", "llm", "10.0.9.9", 8000, false,
				Map.of("dualmap.weight", "3"));
		assertThat(this.membership.update(List.of(heavier))).isTrue();
		assertThat(this.pool.instance("a").weight()).isEqualTo(3.0);
	}

	@Test
	void weightsThatAreNoPositiveNumberCountAsOneAndTooLargeOnesAsTheMaximum() {
		this.membership.update(List.of(instance("a", 1, Map.of("dualmap.weight", "heavy")),
				instance("b", 2, Map.of("dualmap.weight", "-2")), instance("c", 3, Map.of("dualmap.weight", " 2.5 ")),
				instance("d", 4, Map.of("dualmap.weight", "1e9"))));
		assertThat(this.pool.instance("a").weight()).isEqualTo(1.0);
		assertThat(this.pool.instance("b").weight()).isEqualTo(1.0);
		assertThat(this.pool.instance("c").weight()).isEqualTo(2.5);
		assertThat(this.pool.instance("d").weight()).isEqualTo(RingMember.MAX_WEIGHT);
	}

	@Test
	void anIdListedTwiceIsOneMemberForwardedToItsFirstEntryAndAnInstanceWithoutIdIsNamedByItsAddress() {
		ServiceInstance first = instance("a", 1);
		ServiceInstance unnamed = new DefaultServiceInstance(null, "llm", "10.0.0.7", 8001, false, Map.of());
		assertThat(this.membership.update(List.of(first, instance("a", 2), unnamed))).isTrue();
		assertThat(this.pool.size()).isEqualTo(2);
		assertThat(this.membership.serviceInstance("a")).isSameAs(first);
		assertThat(this.membership.serviceInstance("10.0.0.7:8001")).isSameAs(unnamed);
		assertThat(this.retained).containsExactly(Set.of("a", "10.0.0.7:8001"));
	}

	@Test
	void theRetainHookRunsUnderTheMembershipLockBeforeTheNewMembershipIsVisible() {
		this.membership.update(List.of(instance("a", 1)));
		List<Object> seenInRetain = new ArrayList<>();
		this.onRetain = () -> {
			seenInRetain.add(Thread.holdsLock(this.membership));
			seenInRetain.add(this.membership.serviceInstance("b"));
			seenInRetain.add(this.membership.size());
		};
		this.membership.update(List.of(instance("a", 1), instance("b", 2)));
		assertThat(seenInRetain).containsExactly(true, null, 1);
		assertThat(this.membership.serviceInstance("b")).isNotNull();
	}

	@Test
	void aMembershipWhoseTellFailedIsToldAgainByTheNextEqualListWithoutRebuildingThePool() {
		List<ServiceInstance> ab = List.of(instance("a", 1), instance("b", 2));
		this.failNextTell = new IllegalStateException("a listener failed once");
		assertThat(this.membership.update(ab)).isTrue();
		assertThat(this.pool.size()).isEqualTo(2);
		assertThat(this.told).isEmpty();
		long rebuilds = this.pool.ringRebuilds();

		// The same objects: not the fast path while unsettled.
		assertThat(this.membership.update(ab)).isTrue();
		assertThat(this.told).containsExactly(List.of("a", "b"));
		assertThat(this.pool.ringRebuilds()).isEqualTo(rebuilds);
		assertThat(this.retained).hasSize(1);

		// Settled: the fast path again.
		assertThat(this.membership.update(ab)).isFalse();
		assertThat(this.told).hasSize(1);
	}

	private static ServiceInstance instance(String id, int host) {
		return instance(id, host, Map.of());
	}

	private static ServiceInstance instance(String id, int host, Map<String, String> metadata) {
		return new DefaultServiceInstance(id, "llm", "10.0.0." + host, 8000, false, metadata);
	}

}

package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.SchedulerSettings;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The discovery grace over the membership it decorates, on a clock the test moves: which
 * empty lists it holds back, and what it reports meanwhile.
 */
class EmptyListGraceTests {

	private final AtomicLong now = new AtomicLong(1_000_000_000L);

	private final InstancePool pool = new InstancePool("llm", SchedulerSettings.ofDefaults(), this.now::get);

	private final List<List<ServiceInstance>> told = new ArrayList<>();

	private RuntimeException failNextTell;

	private final InstanceMembership membership = new InstanceMembership("llm", this.pool, "dualmap.weight", ids -> {
	}, current -> {
		RuntimeException failure = this.failNextTell;
		this.failNextTell = null;
		if (failure != null) {
			throw failure;
		}
		this.told.add(current);
	});

	private final EmptyListGrace grace = new EmptyListGrace("llm", this.pool.clock(), this.membership);

	@Test
	void anEmptyListWithinTheGraceIsNotHandedOnAndTheKeptTimeIsReported() {
		this.grace.grace(Duration.ofSeconds(30));
		assertThat(this.grace.update(instances("a", "b"))).isTrue();
		assertThat(this.grace.keptThroughEmptyLists()).isNull();

		assertThat(this.grace.update(List.of())).isFalse();
		this.now.addAndGet(Duration.ofSeconds(10).toNanos());
		assertThat(this.grace.update(List.of())).isFalse();
		assertThat(this.grace.keptThroughEmptyLists()).isEqualTo(Duration.ofSeconds(10));
		assertThat(this.pool.size()).isEqualTo(2);
		assertThat(this.told).hasSize(1);

		this.now.addAndGet(Duration.ofSeconds(20).toNanos());
		assertThat(this.grace.update(List.of())).isTrue();
		assertThat(this.pool.size()).isZero();
		assertThat(this.grace.keptThroughEmptyLists()).isNull();
		assertThat(this.told).hasSize(2);
		assertThat(this.told.get(1)).isEmpty();
	}

	@Test
	void aListBetweenEmptyOnesEndsTheGraceAndTheNextEmptyListStartsItAgain() {
		this.grace.grace(Duration.ofSeconds(30));
		List<ServiceInstance> ab = instances("a", "b");
		this.grace.update(ab);
		this.grace.update(List.of());
		this.now.addAndGet(Duration.ofSeconds(25).toNanos());
		assertThat(this.grace.update(ab)).isFalse();
		assertThat(this.grace.keptThroughEmptyLists()).isNull();

		this.now.addAndGet(Duration.ofSeconds(25).toNanos());
		assertThat(this.grace.update(List.of())).isFalse();
		assertThat(this.grace.keptThroughEmptyLists()).isEqualTo(Duration.ZERO);
		assertThat(this.pool.size()).isEqualTo(2);
	}

	@Test
	void anEmptyListIsComparedWithTheLastListTakenBeforeTheGraceIsAsked() {
		// The first membership failed to settle, so the last list taken is still the
		// empty one: an empty list is the same list, not the start of a grace.
		this.grace.grace(Duration.ofSeconds(30));
		this.failNextTell = new IllegalStateException("listener failed once");
		assertThat(this.grace.update(instances("a"))).isTrue();
		assertThat(this.pool.size()).isEqualTo(1);
		assertThat(this.membership.lastListEmpty()).isTrue();

		assertThat(this.grace.update(List.of())).isFalse();
		assertThat(this.grace.keptThroughEmptyLists()).isNull();
		assertThat(this.pool.size()).isEqualTo(1);
	}

	@Test
	void withoutAGraceOrWithoutMembersAnEmptyListIsHandedOnAtOnce() {
		assertThat(this.grace.update(List.of())).isFalse();
		assertThat(this.grace.keptThroughEmptyLists()).isNull();
		this.grace.update(instances("a"));
		assertThat(this.grace.update(List.of())).isTrue();
		assertThat(this.pool.size()).isZero();
	}

	@Test
	void aNegativeGraceIsRejected() {
		assertThatThrownBy(() -> this.grace.grace(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
			.hasMessage("empty list grace must be >= 0 but was PT-1S");
	}

	private static List<ServiceInstance> instances(String... ids) {
		List<ServiceInstance> list = new ArrayList<>();
		for (int i = 0; i < ids.length; i++) {
			list.add(new DefaultServiceInstance(ids[i], "llm", "10.0.0." + (i + 1), 8000, false));
		}
		return list;
	}

}

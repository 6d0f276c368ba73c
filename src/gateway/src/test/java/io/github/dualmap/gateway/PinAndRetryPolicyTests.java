package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.NanoClock;
import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.Reason;
import io.github.dualmap.core.RingMember;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The overrides a {@link RoutingRequest} carries (its pin, the instances it avoids,
 * whether it was placed before) decide over the configured policy; the request alone says
 * which apply, so nothing is kept between calls.
 */
class PinAndRetryPolicyTests {

	private final InstancePool pool = new InstancePool("llm", SchedulerSettings.ofDefaults(), NanoClock.SYSTEM);

	private final AtomicInteger policyCalls = new AtomicInteger();

	private final RoutingPolicy policy = new RoutingPolicy() {
		@Override
		public String name() {
			return "first";
		}

		@Override
		public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
			PinAndRetryPolicyTests.this.policyCalls.incrementAndGet();
			return Decision.of("a", Reason.LOAD, request);
		}
	};

	private final PinAndRetryPolicy overrides = new PinAndRetryPolicy(this.policy,
			(request, refused) -> Decision.of(refused.contains("b") ? "c" : "b", Reason.FALLBACK, request));

	PinAndRetryPolicyTests() {
		this.pool.updateMembership(List.of(new RingMember("a", 1), new RingMember("b", 1), new RingMember("c", 1)));
	}

	private static RoutingRequest request() {
		return new RoutingRequest("r", PrefixHasher.ofDefaults().ofText("m", "hello"), Duration.ofSeconds(5).toNanos(),
				0);
	}

	@Test
	void aFirstPlacementIsThePolicys() {
		assertThat(this.overrides.choose(request(), this.pool).instanceId()).isEqualTo("a");
		assertThat(this.policyCalls).hasValue(1);
	}

	@Test
	void aPinnedRequestGoesToItsInstanceUnlessItMustAvoidIt() {
		Decision pinned = this.overrides.choose(request().placed(Set.of(), "c", false), this.pool);
		assertThat(pinned.instanceId()).isEqualTo("c");
		assertThat(pinned.reason()).isEqualTo(Reason.PINNED);
		// It failed there: placed as a retry that avoids it.
		Decision avoided = this.overrides.choose(request().placed(Set.of("c"), "c", true), this.pool);
		assertThat(avoided.reason()).isEqualTo(Reason.FALLBACK);
		assertThat(avoided.instanceId()).isEqualTo("b");
		assertThat(this.policyCalls).hasValue(0);
	}

	@Test
	void aRetryTakesTheAlternativeAndTheSameRequestPlacedFreshTakesThePolicyAgain() {
		RoutingRequest retry = request().placed(Set.of("b"), null, true);
		assertThat(this.overrides.choose(retry, this.pool).instanceId()).isEqualTo("c");
		assertThat(this.overrides.choose(request().placed(Set.of(), null, true), this.pool).instanceId())
			.isEqualTo("b");
		assertThat(this.policyCalls).hasValue(0);
		assertThat(this.overrides.choose(request(), this.pool).instanceId()).isEqualTo("a");
		assertThat(this.policyCalls).hasValue(1);
	}

}

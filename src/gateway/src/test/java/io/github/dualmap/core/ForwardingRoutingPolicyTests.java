package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

/**
 * {@link ForwardingRoutingPolicy}: every call a decorator does not override reaches the
 * policy it wraps, with the same arguments, and what that policy answers comes back.
 */
class ForwardingRoutingPolicyTests {

	private final PeerFixture f = new PeerFixture("a", "b");

	@Test
	void everyCallNotOverriddenReachesTheWrappedPolicy() {
		Recording wrapped = new Recording();
		RoutingPolicy forwarding = new ForwardingRoutingPolicy(wrapped) {
		};
		RoutingRequest request = this.f.request(PeerFixture.prompt(1, 2));
		assertThat(forwarding.name()).isEqualTo("recording");
		Decision d = forwarding.choose(request, this.f.pool);
		assertThat(d).isSameAs(wrapped.answer);
		forwarding.onDispatched(request, d, this.f.pool);
		forwarding.onFinished(request, "b", this.f.pool);
		forwarding.onMembershipChanged(this.f.pool);
		assertThat(wrapped.calls).containsExactly("choose " + request.id(), "dispatched " + request.id() + " b",
				"finished " + request.id() + " b", "membership 2");
	}

	@Test
	void aDecoratorOverridesOnlyWhatItChanges() {
		Recording wrapped = new Recording();
		RoutingPolicy toA = new ForwardingRoutingPolicy(wrapped) {
			@Override
			public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
				return Decision.of("a", Reason.PINNED, request);
			}
		};
		RoutingRequest request = this.f.request(PeerFixture.prompt(3));
		Decision d = toA.choose(request, this.f.pool);
		assertThat(d.instanceId()).isEqualTo("a");
		toA.onDispatched(request, d, this.f.pool);
		assertThat(wrapped.calls).containsExactly("dispatched " + request.id() + " a");
	}

	@Test
	void aDecoratorNeedsAPolicyToWrap() {
		assertThatNullPointerException().isThrownBy(() -> new ForwardingRoutingPolicy(null) {
		}).withMessage("delegate");
	}

	private static final class Recording implements RoutingPolicy {

		final List<String> calls = new ArrayList<>();

		@Nullable Decision answer;

		@Override
		public String name() {
			return "recording";
		}

		@Override
		public @Nullable Decision choose(RoutingRequest request, InstancePool pool) {
			this.calls.add("choose " + request.id());
			this.answer = Decision.of("b", Reason.LOAD, request);
			return this.answer;
		}

		@Override
		public void onDispatched(RoutingRequest request, Decision decision, InstancePool pool) {
			this.calls.add("dispatched " + request.id() + " " + decision.instanceId());
		}

		@Override
		public void onFinished(RoutingRequest request, String instanceId, InstancePool pool) {
			this.calls.add("finished " + request.id() + " " + instanceId);
		}

		@Override
		public void onMembershipChanged(InstancePool pool) {
			this.calls.add("membership " + pool.size());
		}

	}

}

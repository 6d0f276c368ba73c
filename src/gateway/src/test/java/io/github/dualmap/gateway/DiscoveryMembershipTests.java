package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.github.dualmap.core.InstanceState;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Flux;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The background refresher of the membership, driven by a supplier whose list the test
 * changes, with no request ever arriving.
 */
class DiscoveryMembershipTests {

	private static final Duration REFRESH = Duration.ofMillis(10);

	static List<Supplier<Throwable>> failures() {
		return List.of(() -> new IllegalStateException("listener failed"), () -> new AssertionError("bad list"),
				StackOverflowError::new);
	}

	/**
	 * One application that throws, whatever it throws, does not end the refresher: the
	 * next change is applied without any request (an Error ended its subscription for
	 * good, and the membership then changed only when a request came).
	 */
	@ParameterizedTest
	@MethodSource("failures")
	void aFailedApplicationDoesNotStopTheRefresher(Supplier<Throwable> failure) {
		DualMapRegistry registry = DualMapRegistry.builder().services("llm").build();
		AtomicInteger changes = new AtomicInteger();
		registry.addListener(new DualMapListener() {
			@Override
			public void onMembershipChanged(String service, List<ServiceInstance> instances) {
				if (changes.incrementAndGet() == 2) {
					throwUnchecked(failure.get());
				}
			}
		});
		AtomicReference<List<ServiceInstance>> discovered = new AtomicReference<>(List.of(instance("a")));
		ServiceInstanceListSupplier supplier = new ServiceInstanceListSupplier() {
			@Override
			public String getServiceId() {
				return "llm";
			}

			@Override
			public Flux<List<ServiceInstance>> get() {
				return Flux.just(discovered.get());
			}
		};
		DiscoveryMembership membership = new DiscoveryMembership(registry, id -> supplier, REFRESH);
		ServicePool service = registry.service("llm");
		membership.start();
		try {
			awaitTrue(() -> service.instancePool().instance("a") != null);
			discovered.set(List.of(instance("a"), instance("b")));
			awaitTrue(() -> changes.get() >= 2);
			discovered.set(List.of(instance("a"), instance("c")));
			awaitTrue(() -> service.instancePool()
				.instances()
				.stream()
				.map(InstanceState::id)
				.toList()
				.equals(List.of("a", "c")));
		}
		finally {
			membership.stop();
		}
	}

	private static ServiceInstance instance(String id) {
		return new DefaultServiceInstance(id, "llm", "10.0.0." + (id.charAt(0) - 'a' + 1), 8000, false, Map.of());
	}

	/** Waits for a state the refresher reaches on its own (the bound is not a speed). */
	private static void awaitTrue(BooleanSupplier condition) {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime()).as("waited 10 s for the refresher").isLessThan(deadline);
			try {
				Thread.sleep(5);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	@SuppressWarnings("unchecked")
	private static <T extends Throwable> void throwUnchecked(Throwable failure) throws T {
		throw (T) failure;
	}

}

package io.github.dualmap.gateway;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.DefaultServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An instance taken out by its circuit breaker says so in the log, once when its breaker
 * opens and once when it closes again, not once per refused request.
 */
@ExtendWith(OutputCaptureExtension.class)
class InstanceBreakersTests {

	private final DualMapRegistry registry = DualMapRegistry.builder()
		.services("llm")
		.breakers(CircuitBreakerConfig.custom()
			.slidingWindowSize(4)
			.minimumNumberOfCalls(4)
			.failureRateThreshold(50)
			// Half open only when the test says so.
			.waitDurationInOpenState(Duration.ofHours(1))
			.permittedNumberOfCallsInHalfOpenState(1)
			.build())
		.build();

	private final ServicePool service = this.registry.service("llm");

	InstanceBreakersTests() {
		this.service.updateMembership(List.of(new DefaultServiceInstance("a", "llm", "10.0.0.1", 8000, false, Map.of()),
				new DefaultServiceInstance("b", "llm", "10.0.0.2", 8000, false, Map.of())));
	}

	private static List<String> lines(CapturedOutput output, String level) {
		return output.getAll()
			.lines()
			.filter(l -> l.contains("Instance a of llm") && l.contains(" " + level + " "))
			.toList();
	}

	@Test
	void anOpeningBreakerLogsOneWarningAndItsClosingOneInfo(CapturedOutput output) {
		CircuitBreaker breaker = this.service.breakers().breaker("a");
		breaker.onSuccess(1, TimeUnit.MILLISECONDS);
		for (int i = 0; i < 3; i++) {
			breaker.onError(1, TimeUnit.MILLISECONDS, new IOException("connection reset"));
		}
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(this.service.instancePool().instance("a").healthy()).isFalse();
		// Requests refused while it is open log nothing more.
		for (int i = 0; i < 10; i++) {
			assertThatThrownBy(breaker::acquirePermission).isInstanceOf(CallNotPermittedException.class);
			this.service.breakers().refused("a");
		}
		List<String> warnings = lines(output, "WARN");
		assertThat(warnings).hasSize(1);
		assertThat(warnings.get(0)).contains("circuit breaker opened")
			.contains("75.0 % of the last 4 calls failed")
			.contains("no new requests go to it");
		assertThat(lines(output, "INFO")).isEmpty();

		// A failed probe keeps it out: no second warning.
		breaker.transitionToHalfOpenState();
		breaker.acquirePermission();
		breaker.onError(1, TimeUnit.MILLISECONDS, new IOException("connection reset"));
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(lines(output, "WARN")).hasSize(1);

		// A probe that succeeds closes it: one info line.
		breaker.transitionToHalfOpenState();
		breaker.acquirePermission();
		breaker.onSuccess(1, TimeUnit.MILLISECONDS);
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
		assertThat(this.service.instancePool().instance("a").healthy()).isTrue();
		List<String> infos = lines(output, "INFO");
		assertThat(infos).hasSize(1);
		assertThat(infos.get(0)).contains("circuit breaker closed").contains("gets new requests");
		assertThat(lines(output, "WARN")).hasSize(1);
	}

}

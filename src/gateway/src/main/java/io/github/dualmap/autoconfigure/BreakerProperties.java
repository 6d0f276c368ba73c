package io.github.dualmap.autoconfigure;

import java.time.Duration;

import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

/** {@code dualmap.breaker.*}: per-instance Resilience4j circuit breakers. */
public class BreakerProperties {

	/** Failure rate in percent at which an instance's breaker opens. */
	@DecimalMin(value = "0", inclusive = false, message = "dualmap.breaker.failure-rate-threshold must be in (0, 100]")
	@DecimalMax(value = "100", message = "dualmap.breaker.failure-rate-threshold must be in (0, 100]")
	private float failureRateThreshold = 50;

	/** Calls in the count-based sliding window. */
	@Min(value = 1, message = "dualmap.breaker.sliding-window-size must be >= 1")
	private int slidingWindowSize = 20;

	/** Calls needed before the failure rate is evaluated. */
	@Min(value = 1, message = "dualmap.breaker.minimum-number-of-calls must be >= 1")
	private int minimumNumberOfCalls = 5;

	/** How long an open breaker keeps the instance out before probing it again. */
	@NotNull(message = "dualmap.breaker.wait-duration-in-open-state must be set")
	private Duration waitDurationInOpenState = Duration.ofSeconds(10);

	/** Probe calls let through while half open. */
	@Min(value = 1, message = "dualmap.breaker.permitted-number-of-calls-in-half-open-state must be >= 1")
	private int permittedNumberOfCallsInHalfOpenState = 2;

	@AssertTrue(message = "dualmap.breaker.wait-duration-in-open-state must be > 0")
	private boolean isWaitPositive() {
		return this.waitDurationInOpenState.toMillis() > 0;
	}

	public float getFailureRateThreshold() {
		return this.failureRateThreshold;
	}

	public void setFailureRateThreshold(float failureRateThreshold) {
		this.failureRateThreshold = failureRateThreshold;
	}

	public int getSlidingWindowSize() {
		return this.slidingWindowSize;
	}

	public void setSlidingWindowSize(int slidingWindowSize) {
		this.slidingWindowSize = slidingWindowSize;
	}

	public int getMinimumNumberOfCalls() {
		return this.minimumNumberOfCalls;
	}

	public void setMinimumNumberOfCalls(int minimumNumberOfCalls) {
		this.minimumNumberOfCalls = minimumNumberOfCalls;
	}

	public Duration getWaitDurationInOpenState() {
		return this.waitDurationInOpenState;
	}

	public void setWaitDurationInOpenState(Duration waitDurationInOpenState) {
		this.waitDurationInOpenState = waitDurationInOpenState;
	}

	public int getPermittedNumberOfCallsInHalfOpenState() {
		return this.permittedNumberOfCallsInHalfOpenState;
	}

	public void setPermittedNumberOfCallsInHalfOpenState(int permittedNumberOfCallsInHalfOpenState) {
		this.permittedNumberOfCallsInHalfOpenState = permittedNumberOfCallsInHalfOpenState;
	}

}

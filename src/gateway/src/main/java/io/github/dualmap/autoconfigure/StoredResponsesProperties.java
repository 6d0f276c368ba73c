package io.github.dualmap.autoconfigure;

import java.time.Duration;

import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

/**
 * {@code dualmap.stored-responses.*}: responses API continuations
 * ({@code previous_response_id}) go back to the instance that answered the response they
 * continue (see docs/operations.md, "Stored responses").
 */
public class StoredResponsesProperties {

	/** Whether the gateway remembers which instance answered which response. */
	private boolean enabled = true;

	/**
	 * Most responses remembered; beyond, the least used are forgotten (Caffeine's size
	 * eviction).
	 */
	@Min(value = 1, message = "dualmap.stored-responses.max-entries must be >= 1")
	private long maxEntries = 100_000;

	/** How long a response is remembered after it was answered. */
	@NotNull(message = "dualmap.stored-responses.ttl must be set")
	private Duration ttl = Duration.ofHours(1);

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public long getMaxEntries() {
		return this.maxEntries;
	}

	public void setMaxEntries(long maxEntries) {
		this.maxEntries = maxEntries;
	}

	public Duration getTtl() {
		return this.ttl;
	}

	public void setTtl(Duration ttl) {
		this.ttl = ttl;
	}

	@AssertTrue(message = "dualmap.stored-responses.ttl must be > 0")
	boolean isTtlPositive() {
		return this.ttl == null || this.ttl.toNanos() > 0;
	}

}

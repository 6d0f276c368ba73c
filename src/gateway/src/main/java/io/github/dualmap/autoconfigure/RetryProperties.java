package io.github.dualmap.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.NotNull;

/**
 * {@code dualmap.retry.*}: sending a request once more, to another instance, when the
 * chosen one did not take it.
 */
public class RetryProperties {

	/**
	 * Response statuses of an instance that send the request once more to another
	 * instance, when they come before any response body byte (an engine that refuses
	 * work: overloaded, draining, starting). Connect failures are always retried once.
	 * Empty: only connect failures.
	 */
	@NotNull(message = "dualmap.retry.statuses must be set")
	private List<Integer> statuses = new ArrayList<>(List.of(429, 503));

	public List<Integer> getStatuses() {
		return this.statuses;
	}

	public void setStatuses(List<Integer> statuses) {
		this.statuses = statuses;
	}

	@AssertTrue(message = "dualmap.retry.statuses must be HTTP error statuses (400 to 599)")
	boolean isStatusesErrors() {
		return this.statuses == null || this.statuses.stream().allMatch(s -> s != null && s >= 400 && s <= 599);
	}

}

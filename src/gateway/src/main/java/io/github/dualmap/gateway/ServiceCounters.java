package io.github.dualmap.gateway;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

import io.github.dualmap.core.Rejection;

/**
 * The counts one service keeps for its meters: requests answered with a rejection by
 * status, and tries sent once more by cause. Apart from {@link ServicePool} so the
 * reactive bridge and the accounting filter count through one small object the meters
 * read.
 */
final class ServiceCounters {

	private final LongAdder tooManyRequests = new LongAdder();

	private final LongAdder unavailable = new LongAdder();

	private final Map<RetryCause, LongAdder> retries = new EnumMap<>(RetryCause.class);

	ServiceCounters() {
		for (RetryCause cause : RetryCause.values()) {
			this.retries.put(cause, new LongAdder());
		}
	}

	/**
	 * Requests answered with {@code status} instead of being sent.
	 * @param status {@link Rejection#TOO_MANY_REQUESTS} or
	 * {@link Rejection#SERVICE_UNAVAILABLE}
	 */
	long rejections(int status) {
		return switch (status) {
			case Rejection.TOO_MANY_REQUESTS -> this.tooManyRequests.sum();
			case Rejection.SERVICE_UNAVAILABLE -> this.unavailable.sum();
			default -> throw new IllegalArgumentException("rejection status must be 429 or 503 but was " + status);
		};
	}

	void countRejection(Rejection rejection) {
		(rejection.status() == Rejection.TOO_MANY_REQUESTS ? this.tooManyRequests : this.unavailable).increment();
	}

	/** Tries sent once more to another instance, for {@code cause}. */
	long retries(RetryCause cause) {
		return this.retries.get(cause).sum();
	}

	void countRetry(RetryCause cause) {
		this.retries.get(cause).increment();
	}

}

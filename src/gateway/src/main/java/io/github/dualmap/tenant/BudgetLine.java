package io.github.dualmap.tenant;

/**
 * One token budget a request is charged to: a bucket of {@code limit} tokens that refills
 * continuously at {@code limit} per {@code windowMillis} (a tenant's tokens per minute,
 * per day, or the same for one model). Its level may go below zero when a request's
 * actual usage exceeds what it was admitted for: the debt delays the next admission.
 *
 * @param key the bucket's name in the store, unique per tenant, model and window
 * @param limit tokens the bucket holds when full
 * @param windowMillis milliseconds it takes to refill from empty
 */
public record BudgetLine(String key, long limit, long windowMillis) {

	/** A minute, the window of {@code tokens-per-minute}. */
	public static final long MINUTE_MILLIS = 60_000;

	/** A day, the window of {@code tokens-per-day}. */
	public static final long DAY_MILLIS = 86_400_000;

	public BudgetLine {
		if (limit <= 0) {
			throw new IllegalArgumentException("limit must be > 0 but was " + limit);
		}
		if (windowMillis <= 0) {
			throw new IllegalArgumentException("windowMillis must be > 0 but was " + windowMillis);
		}
	}

	/** {@code level} after {@code elapsedMillis} of refill, never above the limit. */
	public double refilled(double level, long elapsedMillis) {
		return Math.min(this.limit, level + Math.max(0, elapsedMillis) * (double) this.limit / this.windowMillis);
	}

	/** Milliseconds until a bucket at {@code level} holds {@code target} tokens. */
	public long millisUntil(double level, double target) {
		double missing = Math.min(target, this.limit) - level;
		return missing <= 0 ? 0 : (long) Math.ceil(missing * this.windowMillis / this.limit);
	}

	/** Milliseconds until a bucket at {@code level} is full again. */
	public long millisUntilFull(double level) {
		return millisUntil(level, this.limit);
	}

	/**
	 * What a request of {@code cost} needs in the bucket to be admitted: its cost, or a
	 * full bucket for a request that costs more than the bucket holds.
	 */
	public double needed(double cost) {
		return Math.min(cost, this.limit);
	}

}

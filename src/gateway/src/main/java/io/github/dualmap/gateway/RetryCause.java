package io.github.dualmap.gateway;

/**
 * Why a request was sent once more to another instance: the {@code cause} tag of
 * {@code dualmap_retries_total}.
 */
public enum RetryCause {

	/** Connecting to the chosen instance failed. */
	CONNECT("connect"),

	/**
	 * The instance answered a status of {@code dualmap.retry.statuses} before any body
	 * byte.
	 */
	STATUS("status"),

	/**
	 * The instance was taken out as unresponsive
	 * ({@code dualmap.scrape.unresponsive-after}) while the request waited for its
	 * answer.
	 */
	UNRESPONSIVE("unresponsive");

	private final String tag;

	RetryCause(String tag) {
		this.tag = tag;
	}

	/** The value of the meter's {@code cause} tag. */
	public String tag() {
		return this.tag;
	}

}

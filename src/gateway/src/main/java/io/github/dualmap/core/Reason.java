package io.github.dualmap.core;

/**
 * Why a policy chose the instance it chose; the value of the {@code x-dualmap-reason}
 * header.
 */
public enum Reason {

	/** The candidate with the longer cached prefix (or the only sensible one). */
	AFFINITY("affinity"),
	/**
	 * The affinity choice would miss the SLO budget; the candidate with the lower TTFT
	 * estimate.
	 */
	SLO_SWITCH("slo-switch"),
	/**
	 * The affinity choice is a hotspot; its prefix was steered to the other candidate.
	 */
	HOTSPOT("hotspot"),
	/**
	 * Both candidates unavailable (breaker open, draining, gone): next healthy instance
	 * on the ring.
	 */
	FALLBACK("fallback"),
	/**
	 * A queued request taken over by its other candidate, which had prefill capacity and
	 * nothing queued (late binding's work stealing).
	 */
	IDLE_PULL("idle-pull"),
	/**
	 * A queued request at its wait bound, sent to another instance that could start it at
	 * once and still make its SLO instead of being turned away
	 * ({@link QueueSettings#rescue()}).
	 */
	RESCUE("rescue"),
	/** A bounded third choice beyond the two candidates, when both would miss the SLO. */
	THIRD_CHOICE("third-choice"),
	/**
	 * Neither ring candidate: the instance the prefix directory names for the prompt's
	 * longest recorded prefix, chosen over the candidates by the same rule (more cached
	 * tokens, then the lower estimate) ({@code dualmap-directory}).
	 */
	DIRECTORY("directory"),
	/**
	 * A cold request (none of its ring instances holds much of its prompt) sent to the
	 * least occupied of its first ring instances
	 * ({@link SchedulerSettings#spreadsCold()}).
	 */
	COLD("cold"),
	/**
	 * A load-only decision of a baseline policy, or of any policy for an unparsed body.
	 */
	LOAD("load"),
	/**
	 * The instance that holds state the request continues (a stored response it names);
	 * never moved while it waits, since another instance could not answer it.
	 */
	PINNED("pinned");

	private final String value;

	Reason(String value) {
		this.value = value;
	}

	/** The lower-case name used in headers and meter tags. */
	public String value() {
		return value;
	}

}

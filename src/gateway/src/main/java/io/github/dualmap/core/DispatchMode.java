package io.github.dualmap.core;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How {@link DispatchQueues} hands requests to instances: the value of
 * {@code dualmap.dispatch.mode}.
 */
public enum DispatchMode {

	/**
	 * Late binding: a request waits in the router until its instance has prefill
	 * capacity, so queued work can still be moved away from a hotspot.
	 */
	QUEUE("queue"),
	/** Every request is sent to its instance as soon as the policy has chosen it. */
	PASS_THROUGH("pass-through");

	private final String value;

	DispatchMode(String value) {
		this.value = value;
	}

	/** The configuration value ({@code queue}, {@code pass-through}). */
	public String value() {
		return value;
	}

	/**
	 * Parses a configuration value, case-insensitively; {@code _} may stand for
	 * {@code -}.
	 */
	public static DispatchMode of(String value) {
		String v = value.trim().toLowerCase(Locale.ROOT).replace('_', '-');
		for (DispatchMode m : values()) {
			if (m.value.equals(v)) {
				return m;
			}
		}
		throw new IllegalArgumentException("unknown dispatch mode '" + value + "'; known: "
				+ Arrays.stream(values()).map(DispatchMode::value).collect(Collectors.joining(", ")));
	}

}

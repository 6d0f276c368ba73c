package io.github.dualmap.core;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * State a policy keeps per instance of its own (a learned prefix index, active blocks, a
 * load window): created on first use, dropped when the instance leaves the pool.
 * Thread-safe.
 *
 * @param <T> the per-instance state
 */
final class PerInstance<T> {

	private final Map<String, T> byId = new ConcurrentHashMap<>();

	private final Supplier<T> factory;

	PerInstance(Supplier<T> factory) {
		this.factory = factory;
	}

	/** The state of {@code instanceId}, created if it has none yet. */
	T get(String instanceId) {
		return byId.computeIfAbsent(instanceId, id -> factory.get());
	}

	/** The state of {@code instanceId}, or {@code null} when it has none. */
	@Nullable T find(String instanceId) {
		return byId.get(instanceId);
	}

	/**
	 * Drops the state of instances that are no longer members of {@code pool}.
	 * @return the ids of the current members
	 */
	Set<String> retainMembers(InstancePool pool) {
		Set<String> members = pool.memberIds();
		retain(members);
		return members;
	}

	/** Drops the state of instances not in {@code members}. */
	void retain(Set<String> members) {
		byId.keySet().retainAll(members);
	}

}

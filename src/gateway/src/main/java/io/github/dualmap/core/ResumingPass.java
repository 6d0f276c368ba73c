package io.github.dualmap.core;

import java.util.TreeSet;
import java.util.function.ToLongFunction;

import org.jspecify.annotations.Nullable;

/**
 * Passes over the elements of a set in the order of their ordinals, each below an end
 * fixed when the pass begins, where a pass may stop early
 * ({@link QueueSettings#maxMoveChecksPerTrigger()},
 * {@link QueueSettings#maxPullChecksPerTrigger()}): the next then starts after the
 * element where it stopped and wraps around to those before it, so every element has its
 * turn; after a pass that was not stopped the next starts at the first. Elements that
 * join or leave the set during a pass are met as the pass reaches their place. The passes
 * of the hotspot moves over the queues with requests, and of the idle pull over the idle
 * instances' entries.
 */
final class ResumingPass<T> {

	private final TreeSet<T> set;

	private final ToLongFunction<T> ordinal;

	// Where the last pass stopped; null when it was not stopped.
	private @Nullable T stoppedAt;

	// Where the current pass began (null: at the first) and its end.
	private @Nullable T from;

	private long end;

	ResumingPass(TreeSet<T> set, ToLongFunction<T> ordinal) {
		this.set = set;
		this.ordinal = ordinal;
	}

	/**
	 * Begins a pass over the elements of ordinal below {@code end}.
	 * @return its first element, or {@code null} when there is none
	 */
	@Nullable T begin(long end) {
		this.end = end;
		this.from = stoppedAt == null ? null : after(set, stoppedAt, end, ordinal);
		this.stoppedAt = null;
		return firstFrom(set, from, end, ordinal);
	}

	/** The element after {@code current} in the pass, or {@code null} at its end. */
	@Nullable T next(T current) {
		return nextFrom(set, current, from, end, ordinal);
	}

	/** Ends the pass at {@code current}: the next begins after it. */
	void stopAt(T current) {
		this.stoppedAt = current;
	}

	/**
	 * The element of {@code set} after {@code element} of ordinal below {@code end}, else
	 * its first below {@code end}.
	 */
	static <T> @Nullable T after(TreeSet<T> set, T element, long end, ToLongFunction<T> ordinal) {
		T next = set.higher(element);
		if (next == null || ordinal.applyAsLong(next) >= end) {
			next = set.isEmpty() ? null : set.first();
		}
		return next != null && ordinal.applyAsLong(next) < end ? next : null;
	}

	/**
	 * The first element of a pass over the elements of {@code set} of ordinal below
	 * {@code end} that starts at {@code from} (or the next after it) and wraps around:
	 * its first for {@code null}, or when none from there is below {@code end}.
	 */
	static <T> @Nullable T firstFrom(TreeSet<T> set, @Nullable T from, long end, ToLongFunction<T> ordinal) {
		T first = from == null ? null : set.ceiling(from);
		if (first == null || ordinal.applyAsLong(first) >= end) {
			first = set.isEmpty() ? null : set.first();
		}
		return first != null && ordinal.applyAsLong(first) < end ? first : null;
	}

	/**
	 * The element after {@code current} in a pass {@link #firstFrom} began at
	 * {@code from}: the elements from there up to {@code end}, then those before it.
	 */
	static <T> @Nullable T nextFrom(TreeSet<T> set, T current, @Nullable T from, long end, ToLongFunction<T> ordinal) {
		T next = set.higher(current);
		if (next != null && ordinal.applyAsLong(next) >= end) {
			next = null;
		}
		if (from == null) {
			return next;
		}
		long start = ordinal.applyAsLong(from);
		if (ordinal.applyAsLong(current) >= start) {
			if (next != null) {
				return next;
			}
			next = set.isEmpty() ? null : set.first();
		}
		return next != null && ordinal.applyAsLong(next) < start ? next : null;
	}

}

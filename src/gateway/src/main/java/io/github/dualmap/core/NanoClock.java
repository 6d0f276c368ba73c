package io.github.dualmap.core;

/**
 * Monotonic time in nanoseconds; the gateway uses {@link System#nanoTime()}, the
 * simulator its virtual clock.
 */
@FunctionalInterface
public interface NanoClock {

	/** The system's monotonic clock. */
	NanoClock SYSTEM = System::nanoTime;

	long nanos();

}

package io.github.dualmap.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A {@link NanoClock} that moves only when a test advances it. */
final class ManualClock implements NanoClock {

	private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

	@Override
	public long nanos() {
		return nanos.get();
	}

	void advance(Duration d) {
		nanos.addAndGet(d.toNanos());
	}

}

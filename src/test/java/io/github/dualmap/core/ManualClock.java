package io.github.dualmap.core;

import java.time.Duration;

/** A clock the test moves by hand. */
final class ManualClock implements NanoClock {

	private long nanos = 1_000_000_000L;

	@Override
	public long nanos() {
		return nanos;
	}

	void advance(Duration d) {
		nanos += d.toNanos();
	}

}

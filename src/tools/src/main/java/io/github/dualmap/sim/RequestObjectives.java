package io.github.dualmap.sim;

import org.jspecify.annotations.Nullable;

/**
 * Each request's TTFT objective and priority band: its SLO class's when the run has
 * classes (a seeded choice per request), else the run's one objective.
 */
final class RequestObjectives {

	private final SloClasses classes;

	private final long sloNanos;

	// Each request's SLO class when the run has classes, else null.
	private final int @Nullable [] classOf;

	// A request whose arrival is older than this without a first token has missed.
	private final long maxSloNanos;

	RequestObjectives(SimulationConfig config, int requests) {
		this.classes = config.sloClasses();
		this.sloNanos = config.slo().toNanos();
		if (this.classes.isEmpty()) {
			this.classOf = null;
			this.maxSloNanos = this.sloNanos;
		}
		else {
			int[] of = new int[requests];
			long max = 0;
			for (int i = 0; i < requests; i++) {
				of[i] = this.classes.classOf(i, config.seed());
				max = Math.max(max, this.classes.sloNanos(of[i], this.sloNanos));
			}
			this.classOf = of;
			this.maxSloNanos = max;
		}
	}

	/** Request {@code i}'s TTFT objective. */
	long sloOf(int i) {
		return this.classOf == null ? this.sloNanos : this.classes.sloNanos(this.classOf[i], this.sloNanos);
	}

	/** The longest objective of any request. */
	long maxSloNanos() {
		return this.maxSloNanos;
	}

	boolean hasClasses() {
		return this.classOf != null;
	}

	/** Request {@code i}'s class; only with classes. */
	int classOf(int i) {
		int[] of = this.classOf;
		if (of == null) {
			throw new IllegalStateException("the run has no SLO classes");
		}
		return of[i];
	}

	/**
	 * Request {@code i}'s priority band, {@code null} when its class has none; only with
	 * classes.
	 */
	@Nullable Integer priorityOf(int i) {
		return this.classes.priority(classOf(i));
	}

	SloClasses classes() {
		return this.classes;
	}

	/** The objective of class {@code c}. */
	long classSloNanos(int c) {
		return this.classes.sloNanos(c, this.sloNanos);
	}

}

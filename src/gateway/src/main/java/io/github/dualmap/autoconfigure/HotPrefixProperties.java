package io.github.dualmap.autoconfigure;

import io.github.dualmap.core.SchedulerSettings;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Min;

/** {@code dualmap.hot-prefix.*}: adaptive prefix depth. */
public class HotPrefixProperties {

	/** Blocks in the routing key of a prefix that is not hot. */
	@Min(value = 1, message = "dualmap.hot-prefix.min-depth must be >= 1")
	private int minDepth = SchedulerSettings.DEFAULT_MIN_PREFIX_DEPTH;

	/** Deepest a hot prefix may be expanded. */
	@Min(value = 1, message = "dualmap.hot-prefix.max-depth must be >= 1")
	private int maxDepth = SchedulerSettings.DEFAULT_MAX_PREFIX_DEPTH;

	/** Requests in the sliding window. */
	@Min(value = 1, message = "dualmap.hot-prefix.window must be >= 1")
	private int window = SchedulerSettings.DEFAULT_HOT_WINDOW;

	/** Share of the window above which a prefix is expanded one block deeper. */
	@DecimalMin(value = "0", inclusive = false, message = "dualmap.hot-prefix.ratio must be in (0, 1)")
	@DecimalMax(value = "1", inclusive = false, message = "dualmap.hot-prefix.ratio must be in (0, 1)")
	private double ratio = SchedulerSettings.DEFAULT_HOT_RATIO;

	/** Share below which an expansion is dropped. */
	@DecimalMin(value = "0", inclusive = false, message = "dualmap.hot-prefix.drop-ratio must be in (0, 1)")
	@DecimalMax(value = "1", inclusive = false, message = "dualmap.hot-prefix.drop-ratio must be in (0, 1)")
	private double dropRatio = SchedulerSettings.DEFAULT_HOT_DROP_RATIO;

	/** Requests the window must hold before anything is expanded. */
	@Min(value = 1, message = "dualmap.hot-prefix.min-samples must be >= 1")
	private int minSamples = SchedulerSettings.DEFAULT_HOT_MIN_SAMPLES;

	/** Bound on expanded prefixes held at once. */
	@Min(value = 1, message = "dualmap.hot-prefix.max-entries must be >= 1")
	private int maxEntries = SchedulerSettings.DEFAULT_MAX_HOT_PREFIXES;

	@AssertTrue(message = "dualmap.hot-prefix.max-depth must be >= dualmap.hot-prefix.min-depth")
	private boolean isDepthOrdered() {
		return this.maxDepth >= this.minDepth;
	}

	@AssertTrue(message = "dualmap.hot-prefix.drop-ratio must be <= dualmap.hot-prefix.ratio")
	private boolean isRatioOrdered() {
		return this.dropRatio <= this.ratio;
	}

	/** The window never holds more requests than its size: nothing would expand. */
	@AssertTrue(message = "dualmap.hot-prefix.min-samples (default " + SchedulerSettings.DEFAULT_HOT_MIN_SAMPLES
			+ ") must be <= dualmap.hot-prefix.window")
	private boolean isMinSamplesWithinWindow() {
		return this.minSamples <= this.window;
	}

	public int getMinDepth() {
		return this.minDepth;
	}

	public void setMinDepth(int minDepth) {
		this.minDepth = minDepth;
	}

	public int getMaxDepth() {
		return this.maxDepth;
	}

	public void setMaxDepth(int maxDepth) {
		this.maxDepth = maxDepth;
	}

	public int getWindow() {
		return this.window;
	}

	public void setWindow(int window) {
		this.window = window;
	}

	public double getRatio() {
		return this.ratio;
	}

	public void setRatio(double ratio) {
		this.ratio = ratio;
	}

	public double getDropRatio() {
		return this.dropRatio;
	}

	public void setDropRatio(double dropRatio) {
		this.dropRatio = dropRatio;
	}

	public int getMinSamples() {
		return this.minSamples;
	}

	public void setMinSamples(int minSamples) {
		this.minSamples = minSamples;
	}

	public int getMaxEntries() {
		return this.maxEntries;
	}

	public void setMaxEntries(int maxEntries) {
		this.maxEntries = maxEntries;
	}

}

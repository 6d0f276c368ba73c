package io.github.dualmap.autoconfigure;

import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Min;

/** Adaptive prefix depth. */
public class HotPrefixProperties {

	/** Blocks in the routing key of a prefix that is not hot. */
	@Min(value = 1, message = "dualmap.hot-prefix.min-depth must be >= 1")
	private int minDepth = 1;

	/** Deepest a hot prefix may be expanded. */
	@Min(value = 1, message = "dualmap.hot-prefix.max-depth must be >= 1")
	private int maxDepth = 16;

	/** Requests in the sliding window. */
	@Min(value = 1, message = "dualmap.hot-prefix.window must be >= 1")
	private int window = 200;

	/** Share of the window above which a prefix is expanded one block deeper. */
	@DecimalMin(value = "0", inclusive = false, message = "dualmap.hot-prefix.ratio must be in (0, 1)")
	@DecimalMax(value = "1", inclusive = false, message = "dualmap.hot-prefix.ratio must be in (0, 1)")
	private double ratio = 0.0612;

	/** Share below which an expansion is dropped. */
	@DecimalMin(value = "0", inclusive = false, message = "dualmap.hot-prefix.drop-ratio must be in (0, 1)")
	@DecimalMax(value = "1", inclusive = false, message = "dualmap.hot-prefix.drop-ratio must be in (0, 1)")
	private double dropRatio = 0.02;

	/** Requests the window must hold before anything is expanded. */
	@Min(value = 1, message = "dualmap.hot-prefix.min-samples must be >= 1")
	private int minSamples = 20;

	/** Bound on expanded prefixes held at once. */
	@Min(value = 1, message = "dualmap.hot-prefix.max-entries must be >= 1")
	private int maxEntries = 256;

	@AssertTrue(message = "dualmap.hot-prefix.max-depth must be >= dualmap.hot-prefix.min-depth")
	private boolean isDepthOrdered() {
		return this.maxDepth >= this.minDepth;
	}

	@AssertTrue(message = "dualmap.hot-prefix.drop-ratio must be <= dualmap.hot-prefix.ratio")
	private boolean isRatioOrdered() {
		return this.dropRatio <= this.ratio;
	}

	/** The window never holds more requests than its size: nothing would expand. */
	@AssertTrue(message = "dualmap.hot-prefix.min-samples (default 20) must be <= dualmap.hot-prefix.window")
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

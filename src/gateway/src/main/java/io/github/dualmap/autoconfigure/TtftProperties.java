package io.github.dualmap.autoconfigure;

import java.time.Duration;

import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.core.TtftModel;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.NotNull;

/**
 * {@code dualmap.ttft.*}, the TTFT model: {@code base + a*(T + u) + c*(A + u*(k + u/2))}
 * per instance ({@code attention}), or {@code (W + P + u) * prefill-per-token + base} for
 * the pool ({@code linear}).
 */
public class TtftProperties {

	/**
	 * Which model the estimates come from: attention (per instance, a cost per uncached
	 * token plus one per attention pair, the work ahead kept as cost, fitted online) or
	 * linear (one rate per token for the pool).
	 */
	@NotNull(message = "dualmap.ttft.model must be set")
	private TtftModel model = SchedulerSettings.DEFAULT_TTFT_MODEL;

	/**
	 * Initial attention cost of one million (query token x context token) pairs, fitted
	 * online per instance: about 4 x layers x hidden FLOPs per pair at the accelerator's
	 * attention throughput.
	 */
	@NotNull(message = "dualmap.ttft.attention-per-million-pairs must be set")
	private Duration attentionPerMillionPairs = Duration
		.ofNanos(Math.round(SchedulerSettings.DEFAULT_ATTENTION_NANOS_PER_PAIR * 1e6));

	/**
	 * Forgetting factor of the attention model's online fit, in (0, 1]: 1 weighs every
	 * observed TTFT alike, 0.99 halves an observation's weight after about 70 more on the
	 * same instance.
	 */
	@DecimalMin(value = "0", inclusive = false, message = "dualmap.ttft.forgetting must be in (0, 1]")
	@DecimalMax(value = "1", message = "dualmap.ttft.forgetting must be in (0, 1]")
	private double forgetting = SchedulerSettings.DEFAULT_TTFT_FORGETTING;

	/** Initial prefill time per uncached token; recalibrated online. */
	@NotNull(message = "dualmap.ttft.prefill-per-token must be set")
	private Duration prefillPerToken = SchedulerSettings.DEFAULT_PREFILL_PER_TOKEN;

	/** Fixed part of the time to first token. */
	@NotNull(message = "dualmap.ttft.base must be set")
	private Duration base = SchedulerSettings.DEFAULT_BASE_TTFT;

	/**
	 * EWMA weight of one observed TTFT in recalibrating the linear model; 0 turns
	 * calibration off for either model.
	 */
	@DecimalMin(value = "0", message = "dualmap.ttft.calibration-alpha must be in [0, 1]")
	@DecimalMax(value = "1", message = "dualmap.ttft.calibration-alpha must be in [0, 1]")
	private double calibrationAlpha = SchedulerSettings.DEFAULT_CALIBRATION_ALPHA;

	/**
	 * An instance whose attention model has seen no first token for this long is
	 * estimated with the lower of its own fit and the fit over every instance's
	 * observations, so an instance whose first answers were slow gets traffic back and
	 * relearns (0 turns it off).
	 */
	@NotNull(message = "dualmap.ttft.relax-after must be set")
	private Duration relaxAfter = SchedulerSettings.DEFAULT_TTFT_RELAX_AFTER;

	@AssertTrue(message = "dualmap.ttft.relax-after must be >= 0")
	private boolean isRelaxAfterNonNegative() {
		return !this.relaxAfter.isNegative();
	}

	public Duration getRelaxAfter() {
		return this.relaxAfter;
	}

	public void setRelaxAfter(Duration relaxAfter) {
		this.relaxAfter = relaxAfter;
	}

	@AssertTrue(message = "dualmap.ttft.prefill-per-token must be > 0")
	private boolean isPrefillPerTokenPositive() {
		return this.prefillPerToken.toNanos() > 0;
	}

	@AssertTrue(message = "dualmap.ttft.base must be >= 0")
	private boolean isBaseNonNegative() {
		return !this.base.isNegative();
	}

	@AssertTrue(message = "dualmap.ttft.attention-per-million-pairs must be > 0")
	private boolean isAttentionPerMillionPairsPositive() {
		return this.attentionPerMillionPairs.toNanos() > 0;
	}

	public TtftModel getModel() {
		return this.model;
	}

	public void setModel(TtftModel model) {
		this.model = model;
	}

	public Duration getAttentionPerMillionPairs() {
		return this.attentionPerMillionPairs;
	}

	public void setAttentionPerMillionPairs(Duration attentionPerMillionPairs) {
		this.attentionPerMillionPairs = attentionPerMillionPairs;
	}

	public double getForgetting() {
		return this.forgetting;
	}

	public void setForgetting(double forgetting) {
		this.forgetting = forgetting;
	}

	public Duration getPrefillPerToken() {
		return this.prefillPerToken;
	}

	public void setPrefillPerToken(Duration prefillPerToken) {
		this.prefillPerToken = prefillPerToken;
	}

	public Duration getBase() {
		return this.base;
	}

	public void setBase(Duration base) {
		this.base = base;
	}

	public double getCalibrationAlpha() {
		return this.calibrationAlpha;
	}

	public void setCalibrationAlpha(double calibrationAlpha) {
		this.calibrationAlpha = calibrationAlpha;
	}

}

package io.github.dualmap.core;

import java.util.Random;

import io.github.dualmap.engine.EngineProfile;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

class AttentionTtftModelTests {

	private static final EngineProfile ENGINE = EngineProfile.h100_8b();

	private static final double A = ENGINE.cLinSeconds() * 1e9;

	private static final double C = ENGINE.cAttnSeconds() * 1e9;

	/**
	 * The engine model's own prefill time for {@code own} behind {@code ahead}: every
	 * token and pair at its step coefficients, plus one step's fixed cost per chunk of
	 * the token budget and a network delay.
	 */
	private static long engineNanos(PrefillWork ahead, PrefillWork own) {
		long tokens = ahead.tokens() + own.tokens();
		long steps = Math.max(1, (tokens + ENGINE.tokenBudget() - 1) / ENGINE.tokenBudget());
		double seconds = steps * ENGINE.t0Seconds() + ENGINE.cLinSeconds() * tokens
				+ ENGINE.cAttnSeconds() * (ahead.pairs() + own.pairs()) + 0.002;
		return Math.round(seconds * 1e9);
	}

	/** A request with up to 32k cached and up to 16k uncached tokens. */
	private static PrefillWork randomRequest(Random random) {
		int cached = random.nextInt(4) == 0 ? 0 : random.nextInt(32_000);
		return PrefillWork.of(cached, 1 + random.nextInt(16_000));
	}

	/** Up to three requests' work ahead. */
	private static PrefillWork randomAhead(Random random) {
		long tokens = 0;
		long pairs = 0;
		for (int i = random.nextInt(4); i > 0; i--) {
			PrefillWork w = randomRequest(random);
			tokens += w.tokens();
			pairs += w.pairs();
		}
		return new PrefillWork(tokens, pairs);
	}

	/** Configured 25 us a token and 0.5 ns a pair: both off, c by 2.6x. */
	private static AttentionTtftModel offPrior() {
		return new AttentionTtftModel(25_000, 0.5, 20_000_000, 0.99, true);
	}

	@Test
	void theOnlineFitConvergesOnTheEngineModelsCoefficients() {
		AttentionTtftModel m = offPrior();
		Random random = new Random(1);
		for (int i = 0; i < 3_000; i++) {
			PrefillWork ahead = randomAhead(random);
			PrefillWork own = randomRequest(random);
			m.observe(ahead, own, engineNanos(ahead, own));
		}
		// The step's fixed cost per chunk of 8,192 tokens adds 0.85 us a token.
		assertThat(m.nanosPerToken()).isCloseTo(A + ENGINE.t0Seconds() * 1e9 / ENGINE.tokenBudget(), within(0.08 * A));
		assertThat(m.nanosPerPair()).isCloseTo(C, within(0.05 * C));
		PrefillWork longCached = PrefillWork.of(60_000, 8_000);
		long truth = engineNanos(PrefillWork.NONE, longCached);
		assertThat((double) m.estimate(PrefillWork.NONE, longCached)).isCloseTo(truth, within(0.05 * truth));
	}

	@Test
	void noisyAndOutlyingObservationsStillConverge() {
		AttentionTtftModel m = offPrior();
		Random random = new Random(2);
		for (int i = 0; i < 5_000; i++) {
			PrefillWork ahead = randomAhead(random);
			PrefillWork own = randomRequest(random);
			double noise = 1 + 0.2 * (2 * random.nextDouble() - 1);
			// One in fifty is a preempted or stalled request: ten times late.
			if (random.nextInt(50) == 0) {
				noise = 10;
			}
			m.observe(ahead, own, Math.round(engineNanos(ahead, own) * noise));
		}
		assertThat(m.nanosPerToken()).isCloseTo(A, within(0.2 * A));
		assertThat(m.nanosPerPair()).isCloseTo(C, within(0.15 * C));
	}

	/**
	 * How fast the fit follows an engine that slows down (docs/benchmarks.md, "An engine
	 * that slows down"): with the default forgetting factor, hundreds of first tokens.
	 */
	@Test
	void aThreefoldSlowdownIsFollowedOverHundredsOfObservations() {
		AttentionTtftModel m = AttentionTtftModel.of(SchedulerSettings.custom().build());
		Random random = new Random(4);
		double[] ratio = new double[700];
		for (int i = -600; i < 700; i++) {
			PrefillWork ahead = randomAhead(random);
			PrefillWork own = randomRequest(random);
			double truth = engineNanos(ahead, own) * (i < 0 ? 1 : 3);
			if (i >= 0) {
				ratio[i] = m.estimate(ahead, own) / truth;
			}
			m.observe(ahead, own, Math.round(truth * (1 + 0.1 * (2 * random.nextDouble() - 1))));
		}
		assertThat(ratio[0]).isCloseTo(1.0 / 3, within(0.05));
		// Half the new cost after about eighty observations, nine tenths after about
		// four hundred.
		assertThat(ratio[50]).isLessThan(0.5);
		assertThat(ratio[100]).isGreaterThan(0.5);
		assertThat(ratio[300]).isLessThan(0.9);
		assertThat(ratio[450]).isGreaterThan(0.9);
	}

	@Test
	void aFewSamplesMoveTheFitTowardTheTruthWithoutJumping() {
		AttentionTtftModel m = offPrior();
		Random random = new Random(3);
		PrefillWork probe = PrefillWork.of(40_000, 10_000);
		long truth = engineNanos(PrefillWork.NONE, probe);
		long before = m.estimate(PrefillWork.NONE, probe);
		for (int i = 0; i < 5; i++) {
			PrefillWork own = randomRequest(random);
			m.observe(PrefillWork.NONE, own, Math.round(engineNanos(PrefillWork.NONE, own) * 1.15));
			assertThat(m.nanosPerToken()).isBetween(25_000 / TtftEstimator.MAX_DRIFT, 25_000 * TtftEstimator.MAX_DRIFT);
			assertThat(m.nanosPerPair()).isBetween(0.5 / TtftEstimator.MAX_DRIFT, 0.5 * TtftEstimator.MAX_DRIFT);
		}
		long after = m.estimate(PrefillWork.NONE, probe);
		assertThat(Math.abs(after - truth)).isLessThan(Math.abs(before - truth));
		assertThat(m.samples()).isEqualTo(5);
	}

	@Test
	void oneRepeatedRequestDoesNotWindTheFitUpForTheNextDifferentOne() {
		AttentionTtftModel m = new AttentionTtftModel(A, C, 2_000_000, 0.9, true);
		PrefillWork same = PrefillWork.of(0, 1_000);
		for (int i = 0; i < 10_000; i++) {
			m.observe(PrefillWork.NONE, same, engineNanos(PrefillWork.NONE, same));
		}
		// Only one direction was excited; a long cached prompt afterwards moves the fit
		// a bounded step, not by the 0.9^-10000 an unbounded covariance would allow.
		PrefillWork other = PrefillWork.of(100_000, 20_000);
		m.observe(PrefillWork.NONE, other, 50 * engineNanos(PrefillWork.NONE, other));
		assertThat(m.nanosPerPair()).isFinite().isBetween(C / TtftEstimator.MAX_DRIFT, C * TtftEstimator.MAX_DRIFT);
		assertThat(m.nanosPerToken()).isFinite().isBetween(A / TtftEstimator.MAX_DRIFT, A * TtftEstimator.MAX_DRIFT);
		assertThat(m.estimate(PrefillWork.NONE, other)).isPositive();
	}

	/** A short chat prompt with nothing ahead: up to 330 tokens. */
	private static PrefillWork shortPrompt(Random random) {
		return PrefillWork.of(random.nextInt(300), 30 + random.nextInt(300));
	}

	@Test
	void theFitVouchesForAnEstimateOnlyOfWorkLikeWhatItObservedLately() {
		AttentionTtftModel m = AttentionTtftModel.of(SchedulerSettings.custom().build());
		PrefillWork reference = PrefillWork.of(0, InstanceState.REFERENCE_PROMPT_TOKENS);
		double limit = InstanceState.REFERENCE_MAX_RELATIVE_ERROR;
		// Its priors: about as uncertain as the priors themselves.
		assertThat(m.relativeError(PrefillWork.NONE, reference)).isGreaterThan(0.5);
		Random random = new Random(6);
		// A mix of prompts up to 16k tokens, first tokens within a tenth of the engine's
		// time: a few hundredths.
		for (int i = 0; i < 300; i++) {
			PrefillWork ahead = randomAhead(random);
			PrefillWork own = randomRequest(random);
			m.observe(ahead, own, Math.round(engineNanos(ahead, own) * (1 + 0.1 * random.nextGaussian())));
		}
		assertThat(m.relativeError(PrefillWork.NONE, reference)).isLessThan(0.05);
		// Short prompts alone whose first tokens also carry up to 30 ms of decode steps,
		// as on a lightly loaded engine: as the forgetting factor lets the long prompts
		// go, the cost of 4,096 tokens becomes an extrapolation, and the error says so.
		for (int i = 0; i < 1_000; i++) {
			PrefillWork own = shortPrompt(random);
			m.observe(PrefillWork.NONE, own,
					engineNanos(PrefillWork.NONE, own) + Math.round(30e6 * random.nextDouble() * random.nextDouble()));
		}
		assertThat(m.relativeError(PrefillWork.NONE, reference)).isGreaterThan(limit);
		// The same short prompts, their first tokens as the model has them: the
		// extrapolation is vouched for, and right.
		AttentionTtftModel well = AttentionTtftModel.of(SchedulerSettings.custom().build());
		for (int i = 0; i < 1_000; i++) {
			PrefillWork own = shortPrompt(random);
			well.observe(PrefillWork.NONE, own,
					Math.round(engineNanos(PrefillWork.NONE, own) * (1 + 0.1 * random.nextGaussian())));
		}
		assertThat(well.relativeError(PrefillWork.NONE, reference)).isLessThan(limit);
		assertThat((double) well.estimate(PrefillWork.NONE, reference)).isCloseTo(
				engineNanos(PrefillWork.NONE, reference), within(0.15 * engineNanos(PrefillWork.NONE, reference)));
	}

	@Test
	void aFitFollowingASlowdownKeepsVouchingForItsEstimate() {
		// Prompts of 500-1,500 tokens, then the engine three times slower: while the fit
		// lags, every residual is large and of one sign. That is the fit catching up, not
		// scatter, so the error stays below the gauge's threshold all along and the
		// estimate is shown as it doubles (counting the lag as scatter took it above).
		AttentionTtftModel m = AttentionTtftModel.of(SchedulerSettings.custom().build());
		PrefillWork reference = PrefillWork.of(0, InstanceState.REFERENCE_PROMPT_TOKENS);
		Random random = new Random(2);
		long before = 0;
		double worst = 0;
		for (int i = 0; i < 1_500; i++) {
			PrefillWork own = PrefillWork.of(random.nextInt(2_000), 500 + random.nextInt(1_000));
			double slowdown = i < 600 ? 1 : 3;
			m.observe(PrefillWork.NONE, own,
					Math.round(engineNanos(PrefillWork.NONE, own) * slowdown * (1 + 0.1 * random.nextGaussian())));
			if (i == 599) {
				before = m.estimate(PrefillWork.NONE, reference);
			}
			if (i >= 600) {
				worst = Math.max(worst, m.relativeError(PrefillWork.NONE, reference));
			}
		}
		assertThat(worst).isLessThan(InstanceState.REFERENCE_MAX_RELATIVE_ERROR);
		assertThat(m.estimate(PrefillWork.NONE, reference)).isGreaterThan(2 * before);
	}

	@Test
	void aColdModelEstimatesFromItsPriors() {
		AttentionTtftModel m = new AttentionTtftModel(20_000, 1.5, 10_000_000, 0.99, true);
		PrefillWork ahead = new PrefillWork(3_000, 9_000_000);
		PrefillWork own = PrefillWork.of(4_000, 2_000);
		assertThat(own.pairs()).isEqualTo(2_000L * 4_000 + 2_000L * 2_000 / 2);
		assertThat(m.estimate(ahead, own))
			.isCloseTo((long) (10_000_000 + 20_000.0 * 5_000 + 1.5 * (9_000_000 + own.pairs())), within(2L));
		assertThat(m.cost(own)).isCloseTo((long) (20_000.0 * 2_000 + 1.5 * own.pairs()), within(2L));
	}

	@Test
	void withoutLearningObservationsChangeNothing() {
		AttentionTtftModel m = new AttentionTtftModel(A, C, 0, 0.99, false);
		m.observe(PrefillWork.NONE, PrefillWork.of(0, 1_000), 10_000_000_000L);
		assertThat(m.nanosPerToken()).isEqualTo(A, within(1e-9));
		assertThat(m.nanosPerPair()).isEqualTo(C, within(1e-12));
		assertThat(m.samples()).isZero();
		// Nor does a thousand of the reference prompt, exactly as estimated, vouch for
		// its
		// estimate: the priors' uncertainty stays (learning, ten would).
		PrefillWork reference = PrefillWork.of(0, InstanceState.REFERENCE_PROMPT_TOKENS);
		for (int i = 0; i < 1_000; i++) {
			m.observe(PrefillWork.NONE, reference, m.estimate(PrefillWork.NONE, reference));
		}
		assertThat(m.relativeError(PrefillWork.NONE, reference))
			.isGreaterThan(InstanceState.REFERENCE_MAX_RELATIVE_ERROR);
		AttentionTtftModel learning = new AttentionTtftModel(A, C, 0, 0.99, true);
		for (int i = 0; i < 10; i++) {
			learning.observe(PrefillWork.NONE, reference, learning.estimate(PrefillWork.NONE, reference));
		}
		assertThat(learning.relativeError(PrefillWork.NONE, reference))
			.isLessThan(InstanceState.REFERENCE_MAX_RELATIVE_ERROR);
	}

	@Test
	void badPriorsAreRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> new AttentionTtftModel(0, 1, 0, 0.99, true))
			.withMessageContaining("nanosPerToken must be > 0");
		assertThatIllegalArgumentException().isThrownBy(() -> new AttentionTtftModel(1, 0, 0, 0.99, true))
			.withMessageContaining("nanosPerPair must be > 0");
		assertThatIllegalArgumentException().isThrownBy(() -> new AttentionTtftModel(1, 1, -1, 0.99, true))
			.withMessageContaining("baseNanos must be >= 0");
		assertThatIllegalArgumentException().isThrownBy(() -> new AttentionTtftModel(1, 1, 0, 0, true))
			.withMessageContaining("forgetting must be in (0, 1]");
		assertThatIllegalArgumentException().isThrownBy(() -> new AttentionTtftModel(1, 1, 0, 1.01, true))
			.withMessageContaining("forgetting must be in (0, 1]");
	}

}

package io.github.dualmap.core;

import java.time.Duration;
import java.util.Arrays;

/**
 * Requests, settings and pools shared by the dispatch queue tests: prompts of 64-token
 * blocks whose chains are a pure function of a family number (same family, same prefix),
 * and a TTFT model of 1 ms per uncached token.
 */
final class QueueFixture {

	private QueueFixture() {
	}

	/**
	 * A request with the 5 s default SLO whose prompt is {@code promptTokens} long and
	 * shares its blocks with every request of the same {@code family}.
	 */
	static RoutingRequest request(String id, long family, int promptTokens) {
		int blocks = Math.max(1, (promptTokens + 63) / 64);
		long[] chain = new long[blocks];
		for (int i = 0; i < blocks; i++) {
			chain[i] = family * 1_000_003L + i + 1;
		}
		return new RoutingRequest(id, new PromptBlocks(chain, 64, promptTokens), Duration.ofSeconds(5).toNanos(), 0);
	}

	/** {@code r} with a TTFT objective of its own. */
	static RoutingRequest withSlo(RoutingRequest r, Duration slo) {
		return new RoutingRequest(r.id(), r.blocks(), slo.toNanos(), r.arrivalNanos());
	}

	/**
	 * Queue settings for tests of the move mechanics themselves (hotspot migration, idle
	 * pull, overflow): without {@link QueueSettings#moveLateOnly()}'s gate, whose own
	 * tests are in {@code DispatchQueuesTests}, and with the moves after every event
	 * ({@link #movesEveryEvent()}).
	 */
	static QueueSettings.Builder ungatedMoves() {
		return movesEveryEvent().moveLateOnly(false);
	}

	/**
	 * Queue settings whose moves run after every event
	 * ({@link QueueSettings#moveIntervalNanos()} 0), so a test of what the moves do sees
	 * them at the event that makes them; the interval has tests of its own
	 * ({@code DispatchQueuesContractsTests}).
	 */
	static QueueSettings.Builder movesEveryEvent() {
		return QueueSettings.custom().moveInterval(Duration.ZERO);
	}

	/**
	 * 1 ms per uncached token (the 10 % migration margin of a 5 s SLO is 500 tokens), no
	 * calibration.
	 */
	static SchedulerSettings.Builder millisecondPerToken() {
		// The linear model: a prompt's estimate is its tokens in milliseconds plus the
		// base.
		return SchedulerSettings.custom()
			.prefillNanosPerToken(1_000_000)
			.calibrationAlpha(0)
			.ttftModel(TtftModel.LINEAR);
	}

	/** A pool of the given instances, each of weight 1. */
	static InstancePool pool(SchedulerSettings settings, NanoClock clock, String... ids) {
		InstancePool pool = new InstancePool("llm", settings, clock);
		pool.updateMembership(Arrays.stream(ids).map(id -> new RingMember(id, 1)).toList());
		return pool;
	}

}

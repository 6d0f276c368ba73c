package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.DispatchListener;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.Rejection;
import io.github.dualmap.core.RequestTicket;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.core.TtftModel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ticker ticks at the pools' deadlines, not only on its interval: a non-streaming
 * request's estimated end of prefill hands its instance's prefill budget on at the
 * estimate. On the system clock and Reactor's scheduler, with an interval far longer than
 * the tests wait.
 */
class DispatchTickerTests {

	private static final Duration INTERVAL = Duration.ofSeconds(60);

	// 1 ms per uncached token plus a 20 ms base; one request in prefill per instance.
	private final DualMapRegistry registry = DualMapRegistry.builder()
		.services("llm")
		.settings(SchedulerSettings.custom()
			.prefillNanosPerToken(1_000_000)
			.calibrationAlpha(0)
			.ttftModel(TtftModel.LINEAR)
			.build())
		.queueSettings(QueueSettings.custom().maxPrefillRequests(1).build())
		.build();

	private final ServicePool service = this.registry.service("llm");

	private final DispatchTicker ticker = new DispatchTicker(this.registry, INTERVAL);

	private final CountDownLatch secondReleased = new CountDownLatch(1);

	private final DispatchListener listener = new DispatchListener() {

		@Override
		public void released(RequestTicket request, Decision decision, InstancePool.InFlight dispatch) {
			if (request.request().id().equals("second")) {
				DispatchTickerTests.this.secondReleased.countDown();
			}
		}

		@Override
		public void rejected(RequestTicket request, Rejection rejection) {
		}

	};

	DispatchTickerTests() {
		this.service
			.updateMembership(List.of(new DefaultServiceInstance("a", "llm", "127.0.0.1", 8000, false, Map.of())));
	}

	@AfterEach
	void stop() {
		this.ticker.stop();
	}

	private RoutingRequest request(String id, long family, int tokens) {
		long[] chain = new long[(tokens + 63) / 64];
		for (int i = 0; i < chain.length; i++) {
			chain[i] = family * 1_000_003L + i + 1;
		}
		return new RoutingRequest(id, new PromptBlocks(chain, 64, tokens), Duration.ofSeconds(30).toNanos(),
				this.service.instancePool().now());
	}

	// A non-streaming request in prefill for about 220 ms, and one queued behind it.
	private RequestTicket firstAndSecond() {
		RequestTicket first = this.service.queues().submit(request("first", 1, 200), false, this.listener);
		assertThat(first.state()).isEqualTo(RequestTicket.State.RELEASED);
		RequestTicket second = this.service.queues().submit(request("second", 2, 200), true, this.listener);
		assertThat(second.state()).isEqualTo(RequestTicket.State.QUEUED);
		return second;
	}

	@Test
	void anEstimatedEndOfPrefillSetBetweenTicksReleasesTheNextRequestAtTheEstimate() throws InterruptedException {
		this.ticker.start();
		long start = System.nanoTime();
		firstAndSecond();

		assertThat(this.secondReleased.await(10, TimeUnit.SECONDS)).isTrue();
		long waited = System.nanoTime() - start;
		// Not before the estimate, and long before the 60 s interval.
		assertThat(waited).isGreaterThanOrEqualTo(Duration.ofMillis(200).toNanos());
		assertThat(waited).isLessThan(Duration.ofSeconds(10).toNanos());
	}

	@Test
	void aDeadlineKnownAtTheStartIsTheFirstTick() throws InterruptedException {
		firstAndSecond();

		this.ticker.start();

		assertThat(this.secondReleased.await(10, TimeUnit.SECONDS)).isTrue();
	}

	@Test
	void deadlinesCloserThanTheSpacingShareATick() throws InterruptedException {
		List<ServiceInstance> members = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			members.add(new DefaultServiceInstance("i" + i, "llm", "127.0.0." + (i + 1), 8000, false, Map.of()));
		}
		this.service.updateMembership(members);
		long start = System.nanoTime();
		this.ticker.start();
		// Estimated ends of prefill about a millisecond apart, from 20 ms to 100 ms on.
		for (int i = 0; i < 80; i++) {
			this.service.queues().submit(request("r" + i, 100 + i, 1 + i), false, this.listener);
		}
		Thread.sleep(150);

		// Ticks start at least the spacing apart: read before the time they had.
		long ticks = this.ticker.ticks();
		long elapsed = System.nanoTime() - start;
		assertThat(ticks).isPositive().isLessThanOrEqualTo(elapsed / DispatchTicker.MIN_SPACING_NANOS + 1);
	}

	@Test
	void aStoppedTickerTicksNoMore() throws InterruptedException {
		this.ticker.start();
		this.ticker.stop();
		RequestTicket second = firstAndSecond();

		assertThat(this.secondReleased.await(1, TimeUnit.SECONDS)).isFalse();
		assertThat(second.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(this.ticker.isRunning()).isFalse();
	}

}

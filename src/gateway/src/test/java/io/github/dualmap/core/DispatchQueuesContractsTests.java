package io.github.dualmap.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static io.github.dualmap.core.QueueFixture.request;

/**
 * The dispatch queues' smaller promises: what a release accounts, when estimated prefills
 * end, the next deadline, Retry-After, return values, unparsed bodies, and that no public
 * operation keeps the lock.
 */
class DispatchQueuesContractsTests {

	private final ManualClock clock = new ManualClock();

	// 1 ms per uncached token, 20 ms base; no hotspot by load.
	private final SchedulerSettings scheduler = QueueFixture.millisecondPerToken()
		.hotspotFloorTokens(1_000_000_000L)
		.build();

	private final Outcomes outcomes = new Outcomes();

	private InstancePool pool(String... ids) {
		return QueueFixture.pool(scheduler, clock, ids);
	}

	@Test
	void aReleaseRereadsTheCacheThatRequestsReleasedBeforeItFilled() {
		InstancePool pool = pool("a");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				QueueSettings.custom().maxPrefillRequests(1).build());
		RequestTicket r0 = q.submit(request("r0", 1, 1_000), true, outcomes);
		// Two requests with one prompt, both queued cold.
		RequestTicket r1 = q.submit(request("r1", 7, 1_000), true, outcomes);
		RequestTicket r2 = q.submit(request("r2", 7, 1_000), true, outcomes);
		assertThat(pool.instance("a").queuedTokens()).isEqualTo(2_000);

		q.firstToken(r0);
		assertThat(r1.decision().uncachedTokens()).isEqualTo(1_000);
		q.firstToken(r1);

		// r1 put the prompt in a's cache before r2 went.
		assertThat(r2.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(r2.decision().cachedTokens()).isEqualTo(999);
		assertThat(r2.decision().uncachedTokens()).isEqualTo(1);
		assertThat(pool.instance("a").prefillTokens()).isEqualTo(1);
		assertThat(pool.instance("a").queuedTokens()).isZero();
	}

	@Test
	void estimatedPrefillsEndInDeadlineOrderNotSubmissionOrder() {
		InstancePool pool = pool("a", "b");
		DispatchQueues q = new DispatchQueues(pool, new PinnedPolicy(r -> r.id().substring(0, 1)),
				QueueSettings.custom().maxPrefillRequests(1).idlePull(false).build());
		// Non-streaming: a0's prefill is estimated at 5.02 s, b0's, sent later, at 0.12
		// s.
		RequestTicket a0 = q.submit(request("a0", 1, 5_000), false, outcomes);
		q.submit(request("b0", 2, 100), false, outcomes);
		RequestTicket b1 = q.submit(request("b1", 3, 100), true, outcomes);
		clock.advance(Duration.ofMillis(500));

		q.tick(clock.nanos());

		assertThat(b1.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(q.nextDeadlineNanos()).isEqualTo(a0.submittedAtNanos() + Duration.ofMillis(5_020).toNanos());
	}

	@Test
	void aNonStreamingReleaseTellsTheListenerOfItsEstimatedEndWhenItIsTheEarliest() {
		InstancePool pool = pool("a", "b");
		DispatchQueues q = new DispatchQueues(pool, new PinnedPolicy(r -> r.id().substring(0, 1)),
				QueueSettings.custom().maxPrefillRequests(1).idlePull(false).build());
		List<Long> told = new ArrayList<>();
		q.onEarlierDeadline(told::add);
		// 1 ms per token plus the 20 ms base: a0 ends at 1.02 s, then b0 at 0.12 s.
		RequestTicket a0 = q.submit(request("a0", 1, 1_000), false, outcomes);
		RequestTicket b0 = q.submit(request("b0", 2, 100), false, outcomes);
		assertThat(told).containsExactly(a0.submittedAtNanos() + Duration.ofMillis(1_020).toNanos(),
				b0.submittedAtNanos() + Duration.ofMillis(120).toNanos());
		assertThat(q.nextDeadlineNanos()).isEqualTo(told.get(1));

		// b0's estimate ends; a streaming release has no estimated end to tell, and b2's
		// ends after a0's, so it is not the earliest.
		clock.advance(Duration.ofMillis(150));
		q.tick(clock.nanos());
		RequestTicket b1 = q.submit(request("b1", 3, 100), true, outcomes);
		q.firstToken(b1);
		RequestTicket b2 = q.submit(request("b2", 4, 1_000), false, outcomes);
		assertThat(outcomes.releasedIds()).containsExactly("a0", "b0", "b1", "b2");
		assertThat(told).hasSize(2);
		assertThat(q.nextDeadlineNanos()).isEqualTo(told.get(0));
		assertThat(b2.state()).isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void aListenerThatThrowsDoesNotCostTheReleaseItsOutcome() {
		InstancePool pool = pool("a");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"), QueueSettings.ofDefaults());
		q.onEarlierDeadline(at -> {
			throw new IllegalStateException("listener bug");
		});
		RequestTicket r = q.submit(request("r", 1, 100), false, outcomes);
		assertThat(outcomes.releasedIds()).containsExactly("r");
		assertThat(r.state()).isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void aTickerTicksAtTheDeadlineOrAShortWhileAfterOneAlreadyDue() {
		long now = 1_000_000_000L;
		assertThat(DispatchQueues.tickAt(now + 5, now)).isEqualTo(now + 5);
		assertThat(DispatchQueues.tickAt(now, now)).isEqualTo(now + DispatchQueues.RETICK_NANOS);
		assertThat(DispatchQueues.tickAt(now - 1_000, now)).isEqualTo(now + DispatchQueues.RETICK_NANOS);
		assertThat(DispatchQueues.tickAt(Long.MAX_VALUE, now)).isEqualTo(Long.MAX_VALUE);
	}

	@Test
	void anEstimatedPrefillEndsOnTheNextEventNotOnlyOnATick() {
		InstancePool pool = pool("a");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				QueueSettings.custom().maxPrefillRequests(1).build());
		q.submit(request("r0", 1, 100), false, outcomes);
		RequestTicket r1 = q.submit(request("r1", 2, 100), true, outcomes);
		clock.advance(Duration.ofSeconds(1));

		q.submit(request("r2", 3, 100), true, outcomes);

		assertThat(r1.state()).isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void anExpiredRequestSentAnywayIsEstimatedBehindThePrefillNotTheQueue() {
		InstancePool pool = pool("a");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				QueueSettings.custom()
					.maxPrefillRequests(1)
					.maxWait(Duration.ofSeconds(10))
					.expiry(QueueSettings.Expiry.DISPATCH)
					.build());
		q.submit(request("busy", 1, 100), true, outcomes);
		RequestTicket expiring = q.submit(request("expiring", 2, 100), false, outcomes);
		clock.advance(Duration.ofSeconds(1));
		RequestTicket later = q.submit(request("later", 3, 100), true, outcomes);
		clock.advance(Duration.ofSeconds(9));

		q.tick(clock.nanos());

		assertThat(expiring.state()).isEqualTo(RequestTicket.State.RELEASED);
		assertThat(later.state()).isEqualTo(RequestTicket.State.QUEUED);
		// 100 tokens in prefill ahead of its own 100, plus the 20 ms base; the request
		// still queued behind it is not ahead of it.
		assertThat(q.nextDeadlineNanos() - clock.nanos()).isEqualTo(Duration.ofMillis(220).toNanos());
	}

	@Test
	void theNextDeadlineIsTheOldestRequestsHotspotWaitBound() {
		InstancePool pool = pool("a", "b");
		// Moves after every event: no move interval ahead of the other deadlines.
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				QueueFixture.movesEveryEvent().maxPrefillRequests(1).idlePull(false).maxWaitShare(0).build());
		q.submit(request("r0", 1, 100), true, outcomes);
		RequestTicket r1 = q.submit(request("r1", 2, 100), true, outcomes);

		// Just past the 3 s wait bound, when the instance turns hot: before the 30 s
		// max-wait.
		assertThat(q.nextDeadlineNanos()).isEqualTo(r1.submittedAtNanos() + pool.settings().hotspotMaxWaitNanos() + 1);
		// With the default share, half its 5 s SLO comes first: it expires at 2.5 s.
		DispatchQueues shared = new DispatchQueues(pool("c", "d"), PinnedPolicy.to("c"),
				QueueFixture.movesEveryEvent().maxPrefillRequests(1).idlePull(false).build());
		shared.submit(request("r2", 1, 100), true, outcomes);
		RequestTicket r3 = shared.submit(request("r3", 2, 100), true, outcomes);
		assertThat(shared.nextDeadlineNanos()).isEqualTo(r3.submittedAtNanos() + Duration.ofMillis(2_500).toNanos());
	}

	@Test
	void retryAfterIsTheBacklogRoundedUpAndAtMostTheWaitBound() {
		assertThat(retryAfterBehind(2_000, 500)).as("2.52 s").isEqualTo(3);
		assertThat(retryAfterBehind(100_000, 1_500)).as("101.52 s, max-wait 30 s").isEqualTo(30);
	}

	/** Retry-After of a request refused by a one-request queue behind these prompts. */
	private long retryAfterBehind(int inPrefill, int queued) {
		InstancePool pool = pool("a");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				QueueSettings.custom()
					.maxPrefillRequests(1)
					.maxQueuedPerInstance(1)
					.maxWait(Duration.ofSeconds(30))
					.build());
		q.submit(request("running", 1, inPrefill), true, outcomes);
		q.submit(request("queued", 2, queued), true, outcomes);
		RequestTicket refused = q.submit(request("refused", 3, 100), true, outcomes);
		assertThat(refused.state()).isEqualTo(RequestTicket.State.REJECTED);
		return outcomes.rejected.get(refused).retryAfterSeconds();
	}

	@Test
	void firstTokenReportsNoTtftForARequestNotInPrefill() {
		InstancePool pool = pool("a");
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("a"),
				QueueSettings.custom().maxPrefillRequests(1).build());
		RequestTicket running = q.submit(request("running", 1, 100), true, outcomes);
		RequestTicket queued = q.submit(request("queued", 2, 100), true, outcomes);

		assertThat(q.firstToken(queued)).as("still queued").isEqualTo(-1);
		clock.advance(Duration.ofMillis(40));
		assertThat(q.firstToken(running)).isEqualTo(Duration.ofMillis(40).toNanos());
		assertThat(q.firstToken(running)).as("reported before").isEqualTo(-1);
	}

	@Test
	void anUnparsedBodyIsQueuedAndReleasedLikeAnyOther() {
		InstancePool pool = pool("a", "b");
		DispatchQueues q = new DispatchQueues(pool, DualMapPolicy.of(pool.settings()),
				QueueSettings.custom().maxPrefillRequests(1).build());
		List<RequestTicket> all = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			all.add(q.submit(new RoutingRequest("u" + i, null, Duration.ofSeconds(5).toNanos(), 0), true, outcomes));
		}
		assertThat(outcomes.rejected).isEmpty();
		for (int i = 0; i < 4; i++) {
			q.firstToken(all.get(i));
			q.finish(all.get(i));
		}
		assertThat(outcomes.releasedIds()).containsExactlyInAnyOrder("u0", "u1", "u2", "u3");
		assertThat(q.queued()).isZero();
	}

	@Test
	void noOperationKeepsTheLockFromAnotherThread() {
		InstancePool pool = pool("a", "b");
		DispatchQueues q = new DispatchQueues(pool, new PinnedPolicy(r -> r.id().endsWith("0") ? "a" : "b"),
				QueueSettings.custom().maxPrefillRequests(1).maxQueuedPerInstance(4).build());
		// Two threads each call every public operation in turn; one that returned with
		// the lock held would block the other for good.
		assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
			AtomicReference<Throwable> failure = new AtomicReference<>();
			CountDownLatch start = new CountDownLatch(1);
			List<Thread> threads = new ArrayList<>();
			for (int t = 0; t < 2; t++) {
				String name = "t" + t;
				Thread thread = new Thread(() -> {
					try {
						start.await();
						for (int i = 0; i < 200; i++) {
							everyOperation(q, name + "-" + i, i);
						}
					}
					catch (Throwable ex) {
						failure.compareAndSet(null, ex);
					}
				}, name);
				thread.setDaemon(true);
				threads.add(thread);
				thread.start();
			}
			start.countDown();
			for (Thread thread : threads) {
				thread.join();
			}
			assertThat(failure.get()).isNull();
		});
		assertThat(q.queued()).isZero();
		assertThat(pool.instance("a").inFlight()).isZero();
		assertThat(pool.instance("b").inFlight()).isZero();
	}

	private void everyOperation(DispatchQueues q, String id, int i) {
		DispatchListener quiet = DispatchListener.of((r, d) -> {
		}, (r, rej) -> {
		});
		RequestTicket one = q.submit(request(id + "0", i, 100), i % 2 == 0, quiet);
		RequestTicket two = q.submit(request(id + "1", i + 1_000, 100), true, quiet);
		q.cancel(two);
		q.firstToken(one);
		q.tick(clock.nanos());
		q.onMembershipChanged();
		q.nextDeadlineNanos();
		q.isIdle("a");
		q.queued();
		q.queued("b");
		q.migrations();
		q.rerouted();
		q.rejections();
		q.shed();
		q.pulls();
		q.releases();
		q.finish(one);
		q.finish(two);
	}

}

package io.github.dualmap.core;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Fair shares between tenants on small hand-made cases: one instance releasing one
 * request at a time (the next goes when the one in prefill has its first token), prompts
 * of distinct families (nothing cached), so each release is a visible choice.
 */
class DispatchQueuesFairnessTests {

	private static final Tenant A = new Tenant("a", 1, 0);

	private static final Tenant B = new Tenant("b", 1, 0);

	private final ManualClock clock = new ManualClock();

	private final InstancePool pool = QueueFixture.pool(QueueFixture.millisecondPerToken().build(), clock, "i");

	private final Outcomes outcomes = new Outcomes();

	private long family;

	/** Output tokens cost nothing: a request's service is its 100 uncached tokens. */
	private DispatchQueues queues(QueueSettings.Builder settings, boolean fair) {
		return new DispatchQueues(pool, PinnedPolicy.to("i"), settings.maxPrefillRequests(1).build(),
				new FairnessSettings(fair, 0.1, 0, Duration.ofMinutes(1).toNanos(), 0));
	}

	private RequestTicket submit(DispatchQueues q, Tenant tenant) {
		return submit(q, tenant, null);
	}

	/** A request of {@code tenant} whose SLO class sets {@code classPriority}. */
	private RequestTicket submit(DispatchQueues q, Tenant tenant, Integer classPriority) {
		family++;
		return q.submit(QueueFixture.request(tenant.name() + family, family, 100)
			.withTenant(tenant, 0)
			.withClassPriority(classPriority), true, outcomes);
	}

	/**
	 * Ends the prefill of the request in prefill ({@code n} times): the next one is
	 * released each time. Returns the tenants of the requests released, in order.
	 */
	private String releaseNext(DispatchQueues q, int n) {
		StringBuilder order = new StringBuilder();
		for (int k = 0; k < n; k++) {
			RequestTicket current = outcomes.released.get(outcomes.released.size() - 1);
			int before = outcomes.released.size();
			q.firstToken(current);
			q.finish(current);
			if (outcomes.released.size() == before) {
				break;
			}
			order.append(outcomes.released.get(outcomes.released.size() - 1).request().tenant().name());
		}
		return order.toString();
	}

	private static long count(String order, char tenant) {
		return order.chars().filter(c -> c == tenant).count();
	}

	@Test
	void tenantsWaitingForOnePoolGetServiceInProportionToTheirWeights() {
		Tenant heavy = new Tenant("a", 2, 0);
		DispatchQueues q = queues(QueueSettings.custom(), true);
		submit(q, B);
		for (int i = 0; i < 30; i++) {
			submit(q, heavy);
			submit(q, B);
		}
		String order = releaseNext(q, 30);
		assertThat(order).hasSize(30);
		assertThat(count(order, 'a')).as(order).isBetween(19L, 21L);
	}

	@Test
	void withoutFairnessTheQueueServesInItsOwnOrder() {
		DispatchQueues q = queues(QueueSettings.custom(), false);
		submit(q, B);
		for (int i = 0; i < 10; i++) {
			submit(q, A);
		}
		for (int i = 0; i < 10; i++) {
			submit(q, B);
		}
		assertThat(releaseNext(q, 10)).isEqualTo("aaaaaaaaaa");
	}

	@Test
	void anUncontendedPoolServesAnyTenantAtOnceWhateverItsCounter() {
		DispatchQueues q = queues(QueueSettings.custom(), true);
		submit(q, A);
		for (int i = 0; i < 10; i++) {
			submit(q, A);
		}
		// Only tenant a waits: every release is a's, however far past b it is.
		assertThat(releaseNext(q, 10)).isEqualTo("aaaaaaaaaa");
		RequestTicket last = outcomes.released.get(outcomes.released.size() - 1);
		q.firstToken(last);
		q.finish(last);
		RequestTicket again = submit(q, A);
		assertThat(again.state()).as("an idle instance takes a's next request at once")
			.isEqualTo(RequestTicket.State.RELEASED);
	}

	@Test
	void aTenantThatWasIdleBanksNoCredit() {
		DispatchQueues q = queues(QueueSettings.custom(), true);
		submit(q, A);
		for (int i = 0; i < 40; i++) {
			submit(q, A);
		}
		assertThat(releaseNext(q, 20)).isEqualTo("a".repeat(20));
		clock.advance(Duration.ofSeconds(1));
		for (int i = 0; i < 10; i++) {
			submit(q, B);
		}
		// b's counter starts at a's: they alternate instead of b taking its 10 first.
		String order = releaseNext(q, 10);
		assertThat(count(order, 'b')).as(order).isBetween(4L, 6L);
		assertThat(q.tenantShares()).extracting(TenantShare::tenant).containsExactly("a", "b");
	}

	@Test
	void aTenantThatStartsWaitingIsLiftedToTheSmallestCounterOfThoseWaitingInItsBand() {
		DispatchQueues q = queues(QueueSettings.custom(), true);
		submit(q, A);
		for (int i = 0; i < 3; i++) {
			submit(q, A);
			submit(q, B);
		}
		releaseNext(q, 2);
		// While both wait, another replica's service puts a far past b.
		q.creditRemoteService(Map.of("0:a", 10_000.0));
		Map<String, Double> counters = counters(q);
		assertThat(counters.get("a")).isGreaterThan(counters.get("b") + 9_000);

		Tenant c = new Tenant("c", 1, 0);
		submit(q, c);
		// Lifted to b's counter, the smallest of the others waiting, not a's.
		assertThat(counters(q).get("c")).isEqualTo(counters.get("b"));
		// A tenant of another band does not count.
		submit(q, new Tenant("d", 1, 5));
		assertThat(counters(q).get("d")).isZero();
	}

	private static Map<String, Double> counters(DispatchQueues q) {
		return q.tenantShares().stream().collect(Collectors.toMap(TenantShare::tenant, TenantShare::counter));
	}

	@Test
	void serviceAnotherReplicaGaveATenantPutsItBehindOneThatWasNotServed() {
		Tenant c = new Tenant("c", 1, 0);
		DispatchQueues local = queues(QueueSettings.custom(), true);
		submit(local, c);
		for (int i = 0; i < 3; i++) {
			submit(local, B);
		}
		for (int i = 0; i < 3; i++) {
			submit(local, A);
		}
		// Alone, the queues alternate: b and a start waiting at the same counter.
		assertThat(releaseNext(local, 6)).isEqualTo("bababa");
		RequestTicket last = outcomes.released.get(outcomes.released.size() - 1);
		local.firstToken(last);
		local.finish(last);

		DispatchQueues shared = queues(QueueSettings.custom(), true);
		submit(shared, c);
		for (int i = 0; i < 3; i++) {
			submit(shared, B);
		}
		for (int i = 0; i < 3; i++) {
			submit(shared, A);
		}
		assertThat(shared.takeLocalService()).containsOnlyKeys("0:c", "0:b", "0:a").containsEntry("0:c", 100.0);
		// Another replica released five of a's requests (100 tokens each) from the pool;
		// service of a band a has no account in here, or of an unknown tenant, credits
		// nothing.
		assertThat(shared
			.creditRemoteService(Map.of("0:a", 500.0, "0:unknown", 100.0, "1:a", 100.0, "a", 100.0, "x:a", 100.0)))
			.isEqualTo(1);
		assertThat(releaseNext(shared, 6)).isEqualTo("bbbaaa");
		// The credit counts in a's share of the window but is not shared again.
		assertThat(shared.tenantShares()).filteredOn(s -> s.tenant().equals("a"))
			.singleElement()
			.satisfies(s -> assertThat(s.servedTokens()).isEqualTo(800.0));
		Map<String, Double> released = shared.takeLocalService();
		assertThat(released).containsEntry("0:a", 300.0).containsEntry("0:b", 300.0).containsEntry("0:c", 0.0);
		assertThat(shared.takeLocalService()).containsEntry("0:a", 0.0);
	}

	@Test
	void aHigherPriorityBandIsServedFirstWhateverItsCounter() {
		Tenant high = new Tenant("h", 1, 1);
		Tenant low = new Tenant("l", 1, 0);
		DispatchQueues q = queues(QueueSettings.custom(), true);
		submit(q, high);
		for (int i = 0; i < 5; i++) {
			submit(q, high);
		}
		releaseNext(q, 5);
		// h has been served five times, l never: l still waits behind h.
		for (int i = 0; i < 3; i++) {
			submit(q, low);
		}
		for (int i = 0; i < 3; i++) {
			submit(q, high);
		}
		assertThat(releaseNext(q, 6)).isEqualTo("hhhlll");
	}

	@Test
	void aFullPoolShedsTheLowestPriorityFirst() {
		Tenant high = new Tenant("h", 1, 1);
		Tenant low = new Tenant("l", 1, 0);
		DispatchQueues q = queues(QueueSettings.custom().maxQueuedPerPool(3), true);
		submit(q, low);
		RequestTicket l1 = submit(q, low);
		RequestTicket l2 = submit(q, low);
		RequestTicket h1 = submit(q, high);
		assertThat(outcomes.rejected).isEmpty();
		RequestTicket h2 = submit(q, high);
		assertThat(outcomes.rejected).containsOnlyKeys(l2);
		assertThat(outcomes.rejected.get(l2).status()).isEqualTo(Rejection.TOO_MANY_REQUESTS);
		assertThat(outcomes.rejected.get(l2).message()).contains("higher priority");
		RequestTicket l3 = submit(q, low);
		assertThat(outcomes.rejected).as("a low arrival sheds nobody of a higher band: it is refused")
			.containsOnlyKeys(l2, l3);
		assertThat(List.of(l1.state(), h1.state(), h2.state())).containsOnly(RequestTicket.State.QUEUED);
	}

	@Test
	void aRequestOfAHigherClassBandIsServedFirstWhateverItsTenantsCounter() {
		DispatchQueues q = queues(QueueSettings.custom(), true);
		// b's interactive requests (class band 10) are served six times, a never.
		submit(q, B, 10);
		for (int i = 0; i < 5; i++) {
			submit(q, B, 10);
		}
		assertThat(releaseNext(q, 5)).isEqualTo("bbbbb");
		// a's batch requests (class band 0) wait behind b's interactive ones although
		// b's counter is far past a's.
		RequestTicket a1 = submit(q, A, 0);
		submit(q, A, 0);
		submit(q, B, 10);
		submit(q, B, 10);
		assertThat(a1.request().priority()).isZero();
		assertThat(releaseNext(q, 4)).isEqualTo("bbaa");
	}

	@Test
	void withoutAClassPriorityTheTenantsBandHolds() {
		Tenant high = new Tenant("h", 1, 1);
		Tenant low = new Tenant("l", 1, 0);
		DispatchQueues q = queues(QueueSettings.custom(), true);
		submit(q, high);
		submit(q, low);
		submit(q, low);
		submit(q, high);
		submit(q, high);
		// h's tenant band 1 before l's 0; a class band overrides either: h's request of
		// a class of band 0 waits behind l's of a class of band 5.
		submit(q, high, 0);
		submit(q, low, 5);
		assertThat(releaseNext(q, 6)).isEqualTo("lhhlhl");
	}

	@Test
	void aTenantInTwoBandsIsOneTenantInItsShares() {
		DispatchQueues q = queues(QueueSettings.custom(), true);
		submit(q, A, 10);
		submit(q, A, 0);
		submit(q, A, 0);
		submit(q, B, 0);
		List<TenantShare> shares = q.tenantShares();
		assertThat(shares).extracting(TenantShare::tenant).containsExactly("a", "b");
		assertThat(shares.get(0).priority()).isEqualTo(10);
		assertThat(shares.get(0).queued()).isEqualTo(2);
		assertThat(shares.get(0).fairShare()).isEqualTo(0.5, within(1e-9));
	}

	@Test
	void aFullPoolShedsTheLowestClassBandFirstEvenOfTheSameTenant() {
		DispatchQueues q = queues(QueueSettings.custom().maxQueuedPerPool(3), true);
		submit(q, A, 0);
		RequestTicket batch1 = submit(q, A, 0);
		RequestTicket batch2 = submit(q, A, 0);
		RequestTicket other = submit(q, B, 0);
		assertThat(outcomes.rejected).isEmpty();
		// a's interactive request sheds a batch one, of its own tenant too: the lowest
		// band first, then the largest backlog for its weight (a's), then the newest.
		RequestTicket interactive = submit(q, A, 10);
		assertThat(interactive.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(outcomes.rejected).containsOnlyKeys(batch2);
		assertThat(outcomes.rejected.get(batch2).message()).contains("higher priority");
		// A batch arrival sheds nobody of the interactive band, and b would hold as much
		// as a in the batch band: it is refused.
		RequestTicket late = submit(q, B, 0);
		assertThat(outcomes.rejected).containsOnlyKeys(batch2, late);
		assertThat(List.of(batch1.state(), other.state(), interactive.state()))
			.containsOnly(RequestTicket.State.QUEUED);
	}

	@Test
	void aFullPoolShedsForAQuietTenantTheNewestOfTheTenantFillingIt() {
		DispatchQueues q = queues(QueueSettings.custom().maxQueuedPerPool(3), true);
		submit(q, A);
		for (int i = 0; i < 3; i++) {
			submit(q, A);
		}
		assertThat(q.queued()).isEqualTo(3);
		RequestTicket b1 = submit(q, B);
		assertThat(b1.state()).isEqualTo(RequestTicket.State.QUEUED);
		assertThat(outcomes.rejected).hasSize(1);
		RequestTicket shed = outcomes.rejected.keySet().iterator().next();
		assertThat(shed.request().id()).isEqualTo("a4");
		assertThat(outcomes.rejected.get(shed).message()).contains("holding less of the queues");
		// a holds two, b one: a's arrival sheds nobody, and b's next does not shed a's
		// second-to-last either once they hold the same.
		RequestTicket a5 = submit(q, A);
		assertThat(outcomes.rejected).containsKey(a5).hasSize(2);
		RequestTicket b2 = submit(q, B);
		assertThat(outcomes.rejected).containsKey(b2).hasSize(3);
	}

	@Test
	void outputIsChargedOnAnEstimateAtReleaseAndCorrectedAtFinish() {
		DispatchQueues q = new DispatchQueues(pool, PinnedPolicy.to("i"), QueueSettings.custom().build(),
				new FairnessSettings(true, 0.1, 1.0, Duration.ofMinutes(1).toNanos(), 50));
		RequestTicket a1 = submit(q, A);
		assertThat(q.tenantShares()).singleElement()
			.satisfies(s -> assertThat(s.servedTokens()).isEqualTo(150.0, within(1e-9)));
		q.firstToken(a1);
		q.finish(a1);
		q.reportOutput(a1, 10);
		q.reportOutput(a1, 1000);
		assertThat(q.tenantShares()).singleElement()
			.satisfies(s -> assertThat(s.servedTokens()).as("corrected once, to 10 output tokens")
				.isEqualTo(110.0, within(1e-9)));
		// The next request of a is charged its tenant's mean output (10), at most its
		// cap.
		RequestTicket a2 = q.submit(QueueFixture.request("a-capped", 99, 100).withTenant(A, 4), true, outcomes);
		q.firstToken(a2);
		q.finish(a2);
		RequestTicket b1 = submit(q, new Tenant("b", 3, 0));
		List<TenantShare> shares = q.tenantShares();
		assertThat(shares).as("largest share first").extracting(TenantShare::tenant).containsExactly("a", "b");
		TenantShare a = shares.get(0);
		TenantShare b = shares.get(1);
		assertThat(a.servedTokens()).isEqualTo(110.0 + 104.0, within(1e-9));
		assertThat(b.servedTokens()).as("a new tenant is charged the pool's mean output")
			.isEqualTo(110.0, within(1e-9));
		assertThat(a.share()).isEqualTo(214.0 / 324.0, within(1e-9));
		assertThat(a.fairShare()).isEqualTo(0.25, within(1e-9));
		assertThat(b.fairShare()).isEqualTo(0.75, within(1e-9));
		assertThat(b.counter()).as("lifted to a's, then charged 110 at weight 3")
			.isEqualTo(a.counter() + 110.0 / 3, within(1e-9));
		assertThat(b1.state()).isEqualTo(RequestTicket.State.RELEASED);
		// The window forgets.
		clock.advance(Duration.ofMinutes(2));
		assertThat(q.tenantShares()).isEmpty();
	}

}

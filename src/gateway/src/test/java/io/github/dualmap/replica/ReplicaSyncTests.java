package io.github.dualmap.replica;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.Reason;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.RoutedAttempt;
import io.github.dualmap.gateway.ServicePool;
import io.github.dualmap.gateway.StoredResponses;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Buffering this replica's releases and applying its peers' batches. */
class ReplicaSyncTests {

	private final DualMapRegistry registry = DualMapRegistry.builder().services("llm").clock(() -> 1L).build();

	private final PrefixHasher hasher = PrefixHasher.ofDefaults();

	ReplicaSyncTests() {
		ServicePool service = this.registry.service("llm");
		service.updateMembership(List.of(new DefaultServiceInstance("a", "llm", "10.0.0.1", 8000, false, Map.of()),
				new DefaultServiceInstance("b", "llm", "10.0.0.2", 8000, false, Map.of())));
	}

	private PromptBlocks blocks(String topic) {
		return this.hasher.ofText("m", ("System prompt of " + topic + ". ").repeat(40));
	}

	private void decide(ReplicaSync sync, String instance, PromptBlocks blocks) {
		RoutingRequest request = new RoutingRequest("r", blocks, Duration.ofSeconds(5).toNanos(), 0);
		sync.onDecision("llm", request, Decision.of(instance, Reason.AFFINITY, request));
	}

	private int matched(String instance, PromptBlocks blocks) {
		return this.registry.service("llm")
			.instancePool()
			.instance(instance)
			.shadow()
			.peekMatchedBlocks(blocks.chain());
	}

	private InstanceState instance(String id) {
		return this.registry.service("llm").instancePool().instance(id);
	}

	private static ReleaseBatch loadOf(String replica, ReleaseBatch.Load... load) {
		return new ReleaseBatch(replica, "h", List.of(), List.of(load));
	}

	private static ReleaseBatch.Load load(String instance, int requests, long prefill, long queued) {
		return new ReleaseBatch.Load("llm", instance, requests, prefill, queued);
	}

	@Test
	void localLoadListsEveryInstanceWithWorkInPrefillOrQueuedAndNothingUnlessLoadIsShared() {
		ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 16);
		ServicePool service = this.registry.service("llm");
		RoutingRequest request = new RoutingRequest("r", blocks("one"), Duration.ofSeconds(5).toNanos(), 0);
		// Both instances at the release limit (32 requests in prefill): the next request
		// queues.
		for (int i = 0; i < QueueSettings.DEFAULT_MAX_PREFILL_REQUESTS; i++) {
			for (String id : List.of("a", "b")) {
				service.instancePool().dispatch(request, new Decision(id, Reason.AFFINITY, 0, 10, -1));
			}
		}
		AtomicReference<RoutedAttempt> attempt = new AtomicReference<>();
		Disposable waiting = service.submit(request, true).subscribe(attempt::set);
		assertThat(attempt.get()).isNull();
		assertThat(sync.localLoad()).as("load not shared").isEmpty();

		sync.shareLoad(Duration.ofSeconds(1));
		List<ReleaseBatch.Load> load = sync.localLoad();
		assertThat(load).hasSize(2).allSatisfy(l -> {
			assertThat(l.service()).isEqualTo("llm");
			assertThat(l.prefillRequests()).isEqualTo(32);
			assertThat(l.prefillTokens()).isEqualTo(320);
			// 32 requests of 10 uncached tokens behind none cached: 10 * 5 pairs each.
			assertThat(l.prefillPairs()).isEqualTo(32 * 50);
		});
		// The queued request's uncached tokens, on the one instance it waits for.
		assertThat(load).filteredOn(l -> l.queuedTokens() > 0).hasSize(1);
		waiting.dispose();
		assertThat(sync.localLoad()).allSatisfy(l -> assertThat(l.queuedTokens()).isZero());
	}

	@Test
	void peersLoadIsSummedPerInstanceReplacedByTheirNextPublicationAndForgottenAfterTheTtl() {
		AtomicLong now = new AtomicLong();
		ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 16, now::get).shareLoad(Duration.ofSeconds(1));
		sync.apply(loadOf("p1", load("a", 2, 1_000, 500)));
		sync.apply(loadOf("p2", load("a", 1, 200, 0), load("b", 0, 0, 300), load("gone", 5, 5, 5),
				new ReleaseBatch.Load("other", "a", 7, 7, 7)));
		assertThat(sync.loadPeers()).isEqualTo(2);
		assertThat(sync.peerLoadedInstances()).as("the unknown instance and service are not kept").isEqualTo(2);
		assertThat(instance("a").peerPrefillRequests()).isEqualTo(3);
		assertThat(instance("a").peerPrefillTokens()).isEqualTo(1_200);
		assertThat(instance("a").peerQueuedTokens()).isEqualTo(500);
		assertThat(instance("b").peerPendingTokens()).isEqualTo(300);
		assertThat(this.registry.service("llm").instancePool().pendingTokens(instance("a"))).isEqualTo(1_700);

		// p1's prefill ended; a batch from this replica itself changes nothing.
		now.addAndGet(Duration.ofMillis(500).toNanos());
		sync.apply(loadOf("p1"));
		sync.apply(loadOf("me", load("a", 9, 9, 9)));
		assertThat(instance("a").peerPrefillRequests()).isEqualTo(1);
		assertThat(instance("a").peerPendingTokens()).isEqualTo(200);
		// A batch without load (a peer that does not share it) leaves its last load.
		sync.apply(new ReleaseBatch("p2", "h", List.of()));
		assertThat(instance("a").peerPrefillRequests()).isEqualTo(1);

		// p2 published last at 0: at 1 s it is forgotten, p1 (at 0.5 s) still counts.
		now.addAndGet(Duration.ofMillis(499).toNanos());
		sync.expirePeerLoads();
		assertThat(sync.loadPeers()).isEqualTo(2);
		now.addAndGet(Duration.ofMillis(1).toNanos());
		sync.expirePeerLoads();
		assertThat(sync.loadPeers()).isEqualTo(1);
		assertThat(instance("a").peerPrefillRequests()).isZero();
		assertThat(instance("a").peerPendingTokens()).isZero();
		assertThat(instance("b").peerPendingTokens()).isZero();
		sync.apply(loadOf("p1"));
		assertThat(sync.peerLoadedInstances()).as("nothing kept for load that ended").isZero();
	}

	@Test
	void peersPairsAreSummedOverThoseThatPublishThemWithTheirTokensAndTheOthersTokensLeftToTheMean() {
		ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 16).shareLoad(Duration.ofSeconds(1));
		sync.apply(loadOf("p1", new ReleaseBatch.Load("llm", "a", 1, 1_000, 0, 700_000L)));
		sync.apply(loadOf("p2", new ReleaseBatch.Load("llm", "a", 2, 3_000, 0, 5_000_000L)));
		sync.apply(loadOf("older", load("a", 1, 400, 0)));
		assertThat(instance("a").peerPrefillTokens()).isEqualTo(4_400);
		assertThat(instance("a").peerPrefillPairs()).isEqualTo(5_700_000);
		assertThat(instance("a").peerPairedTokens()).isEqualTo(4_000);
		// A change of the pairs alone reaches the instance; a peer's next publication
		// replaces its pairs.
		sync.apply(loadOf("p2", new ReleaseBatch.Load("llm", "a", 2, 3_000, 0, 6_000_000L)));
		assertThat(instance("a").peerPrefillPairs()).isEqualTo(6_700_000);
		sync.apply(loadOf("p1", load("a", 1, 1_000, 0)));
		assertThat(instance("a").peerPrefillPairs()).isEqualTo(6_000_000);
		assertThat(instance("a").peerPairedTokens()).isEqualTo(3_000);
		sync.apply(loadOf("p2"));
		assertThat(instance("a").peerPrefillPairs()).isZero();
		assertThat(instance("a").peerPairedTokens()).isZero();
		assertThat(instance("a").peerPrefillTokens()).isEqualTo(1_400);
	}

	@Test
	void aChangeOfAnyOneFigureReachesTheInstance() {
		ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 16).shareLoad(Duration.ofSeconds(1));
		sync.apply(loadOf("p1", load("a", 1, 100, 10)));
		sync.apply(loadOf("p1", load("a", 1, 100, 20)));
		assertThat(instance("a").peerQueuedTokens()).isEqualTo(20);
		sync.apply(loadOf("p1", load("a", 1, 200, 20)));
		assertThat(instance("a").peerPrefillTokens()).isEqualTo(200);
		sync.apply(loadOf("p1", load("a", 2, 200, 20)));
		assertThat(instance("a").peerPrefillRequests()).isEqualTo(2);
	}

	@Test
	void aRequestQueuedBehindAPeersPrefillIsReleasedWhenThatPeerFallsSilent() {
		AtomicLong now = new AtomicLong();
		ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 16, now::get).shareLoad(Duration.ofSeconds(1));
		sync.apply(loadOf("p1", load("a", 32, 32_000, 0), load("b", 32, 32_000, 0)));
		AtomicReference<RoutedAttempt> attempt = new AtomicReference<>();
		RoutingRequest request = new RoutingRequest("r", blocks("one"), Duration.ofSeconds(5).toNanos(), 0);
		this.registry.service("llm").submit(request, true).subscribe(attempt::set);
		assertThat(attempt.get()).isNull();
		now.addAndGet(Duration.ofSeconds(1).toNanos());
		sync.expirePeerLoads();
		assertThat(attempt.get()).as("released at once, not at the next dispatch tick").isNotNull();
	}

	@Test
	void absurdLoadFromPeersSaturatesInsteadOfOverflowing() {
		ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 16).shareLoad(Duration.ofSeconds(1));
		ReleaseBatch.Load absurd = new ReleaseBatch.Load("llm", "a", Integer.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE,
				Long.MAX_VALUE);
		sync.apply(loadOf("p1", absurd));
		sync.apply(loadOf("p2", absurd));
		assertThat(instance("a").peerPrefillRequests()).isEqualTo(Integer.MAX_VALUE);
		assertThat(instance("a").peerPrefillTokens()).isEqualTo(2L << 40);
		assertThat(instance("a").peerPrefillPairs()).isEqualTo(2L << 52);
		assertThat(instance("a").peerPendingTokens()).isPositive();
		sync.apply(loadOf("p1"));
		sync.apply(loadOf("p2"));
		assertThat(instance("a").peerPrefillRequests()).isZero();
		assertThat(instance("a").peerPendingTokens()).isZero();
	}

	@Test
	void aPeerPublishingReleasesWithoutItsLoadIsReportedForAMinuteOrUntilItSendsLoad() {
		AtomicLong now = new AtomicLong(Duration.ofSeconds(5).toNanos());
		ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 16, now::get).shareLoad(Duration.ofSeconds(1));
		ReleaseBatch.Release release = new ReleaseBatch.Release("llm", "a", blocks("one").chain());
		sync.apply(new ReleaseBatch("old-2", "h", List.of(release)));
		sync.apply(new ReleaseBatch("old-1", "h", List.of(release)));
		sync.apply(new ReleaseBatch("quiet", "h", List.of()));
		sync.apply(new ReleaseBatch("me", "h", List.of(release)));
		assertThat(sync.peersWithoutLoad()).containsExactly("old-1", "old-2");
		sync.apply(new ReleaseBatch("old-1", "h", List.of(release), List.of()));
		assertThat(sync.peersWithoutLoad()).containsExactly("old-2");
		now.addAndGet(ReplicaSync.WITHOUT_LOAD_REPORTED.toNanos() - 1);
		assertThat(sync.peersWithoutLoad()).containsExactly("old-2");
		now.addAndGet(1);
		assertThat(sync.peersWithoutLoad()).isEmpty();
		ReplicaSync notSharing = new ReplicaSync(this.registry, "me", "h", 16);
		notSharing.apply(new ReleaseBatch("old-2", "h", List.of(release)));
		assertThat(notSharing.peersWithoutLoad()).isEmpty();
	}

	@Test
	void peersWithoutLoadAreKeptWithinABoundWhateverIdsTheySendAndASnapshotIsNotOne() {
		AtomicLong now = new AtomicLong(Duration.ofSeconds(5).toNanos());
		ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 16, now::get).shareLoad(Duration.ofSeconds(1));
		ReleaseBatch.Release release = new ReleaseBatch.Release("llm", "a", blocks("one").chain());
		for (int i = 0; i < 1_000; i++) {
			now.incrementAndGet();
			sync.apply(new ReleaseBatch("peer-" + i, "h", List.of(release)));
		}
		// The most recent ones, and never more than the bound.
		assertThat(sync.peersWithoutLoad()).hasSize(ReplicaSync.MAX_WITHOUT_LOAD).contains("peer-999", "peer-936");
		// A start-up snapshot carries blocks and never load: its sender is not one of
		// them.
		ReplicaSync starting = new ReplicaSync(this.registry, "new", "h", 16, now::get)
			.shareLoad(Duration.ofSeconds(1));
		starting.applySnapshot(new ReleaseBatch("peer-x", "h", List.of(release)));
		assertThat(starting.peersWithoutLoad()).isEmpty();
		assertThat(instance("a").shadow().peekMatchedBlocks(blocks("one").chain()))
			.isEqualTo(blocks("one").chain().length);
	}

	@Test
	void aReplicaThatDoesNotShareLoadIgnoresItsPeers() {
		ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 16);
		sync.apply(loadOf("p1", load("a", 2, 1_000, 500)));
		assertThat(sync.loadPeers()).isZero();
		assertThat(instance("a").peerPrefillRequests()).isZero();
		assertThatThrownBy(() -> sync.shareLoad(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
	}

	@Test
	void aRequestQueuedBehindThePeersPrefillIsReleasedWhenTheirNextPublicationShowsItEnded() {
		ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 16).shareLoad(Duration.ofSeconds(1));
		sync.apply(loadOf("p1", load("a", 32, 32_000, 0), load("b", 32, 32_000, 0)));
		AtomicReference<RoutedAttempt> attempt = new AtomicReference<>();
		RoutingRequest request = new RoutingRequest("r", blocks("one"), Duration.ofSeconds(5).toNanos(), 0);
		this.registry.service("llm").submit(request, true).subscribe(attempt::set);
		assertThat(attempt.get()).as("both candidates are full of the peer's requests").isNull();
		sync.apply(loadOf("p1", load("b", 32, 32_000, 0)));
		assertThat(attempt.get()).isNotNull();
		assertThat(attempt.get().instanceId()).isEqualTo("a");
	}

	@Test
	void releasesAreBufferedInOrderUpToTheBoundAndTheRestDroppedAndCounted() {
		ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 2);
		decide(sync, "a", blocks("one"));
		decide(sync, "b", blocks("two"));
		decide(sync, "a", blocks("three"));
		RoutingRequest noPrompt = new RoutingRequest("r", null, 1, 0);
		sync.onDecision("llm", noPrompt, Decision.of("a", Reason.FALLBACK, noPrompt));
		assertThat(sync.buffered()).isEqualTo(2);
		assertThat(sync.dropped()).isEqualTo(1);
		assertThat(sync.take(1)).singleElement().satisfies(r -> {
			assertThat(r.service()).isEqualTo("llm");
			assertThat(r.instance()).isEqualTo("a");
			assertThat(r.chain()).containsExactly(blocks("one").chain());
		});
		assertThat(sync.take(10)).extracting(ReleaseBatch.Release::instance).containsExactly("b");
		assertThat(sync.take(10)).isEmpty();
		assertThat(sync.buffered()).isZero();
	}

	@Test
	void aSnapshotCarriesEveryInstancesRecentBlocksWithinTheBudgetAndAnotherReplicaLearnsThem() {
		ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 16);
		PromptBlocks billing = blocks("billing");
		PromptBlocks shipping = blocks("shipping");
		this.registry.service("llm").instancePool().instance("a").shadow().record(billing.chain());
		this.registry.service("llm").instancePool().instance("b").shadow().record(shipping.chain());
		ReleaseBatch all = sync.snapshot(1_000);
		assertThat(all.replica()).isEqualTo("me");
		assertThat(all.hashing()).isEqualTo("h");
		assertThat(all.releases()).extracting(ReleaseBatch.Release::instance).containsExactlyInAnyOrder("a", "b");
		// A budget of 4 blocks: 2 per instance, the most recently used (a chain's head).
		ReleaseBatch small = sync.snapshot(4);
		assertThat(small.releases()).allSatisfy(r -> assertThat(r.chain()).hasSize(2));
		assertThat(small.releases()).filteredOn(r -> r.instance().equals("a"))
			.singleElement()
			.satisfies(r -> assertThat(r.chain()).containsExactly(billing.chain()[0], billing.chain()[1]));

		// A second replica with the same instances learns the whole snapshot.
		DualMapRegistry other = DualMapRegistry.builder().services("llm").clock(() -> 1L).build();
		other.service("llm").updateMembership(this.registry.service("llm").serviceInstances());
		ReplicaSync starting = new ReplicaSync(other, "new", "h", 16);
		assertThat(starting.membershipKnown()).isTrue();
		starting.apply(ReleaseBatch.parse(all.toJson()));
		assertThat(other.service("llm").instancePool().instance("a").shadow().peekMatchedBlocks(billing.chain()))
			.isEqualTo(billing.chain().length);
		assertThat(other.service("llm").instancePool().instance("b").shadow().peekMatchedBlocks(shipping.chain()))
			.isEqualTo(shipping.chain().length);
	}

	@Test
	void aSnapshotServedToPeersFitsTheirBodyLimitWhateverTheInstancesIdsAndBlocks() {
		DualMapRegistry many = DualMapRegistry.builder().services("llm").clock(() -> 1L).build();
		List<ServiceInstance> instances = new ArrayList<>();
		for (int i = 0; i < 16; i++) {
			instances.add(new DefaultServiceInstance("instance-with-a-rather-long-id-" + "x".repeat(100) + "-" + i,
					"llm", "10.0.0." + i, 8000, false, Map.of()));
		}
		many.service("llm").updateMembership(instances);
		for (InstanceState s : many.service("llm").instancePool().instances()) {
			s.shadow().record(blocks("topic " + s.id()).chain());
		}
		ReplicaSync sync = new ReplicaSync(many, "me", "h", 16);
		// The first estimate (limit / 24 blocks) leaves too little room for 16 long ids.
		assertThat(sync.snapshot(ReplicaSyncHandler.snapshotBlocks(2_048)).toJson()).hasSizeGreaterThan(2_048);
		for (int limit : new int[] { 2_048, 8_192, 65_536 }) {
			byte[] json = ReplicaSyncHandler.snapshotJson(sync, limit);
			assertThat(json.length).as("limit " + limit).isLessThanOrEqualTo(limit);
			assertThat(ReleaseBatch.parse(json).releases()).isNotEmpty();
		}
	}

	@Test
	void aPeersReleaseEntersTheShadowIndexOfItsInstanceOnly() {
		ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 16);
		PromptBlocks billing = blocks("billing");
		assertThat(matched("b", billing)).isZero();
		ReplicaSync.Applied applied = sync.apply(new ReleaseBatch("peer", "h",
				List.of(new ReleaseBatch.Release("llm", "b", billing.chain()),
						new ReleaseBatch.Release("llm", "gone", billing.chain()),
						new ReleaseBatch.Release("other-service", "a", billing.chain()))));
		assertThat(applied).isEqualTo(new ReplicaSync.Applied(1, 2, 0));
		assertThat(matched("b", billing)).isEqualTo(billing.chain().length);
		assertThat(matched("a", billing)).isZero();
		assertThat(sync.applied()).isEqualTo(1);
		assertThat(sync.ignored()).isEqualTo(2);
		// Nothing about load: only the shadow index learns.
		assertThat(this.registry.service("llm").instancePool().instance("b").inFlight()).isZero();
	}

	@Test
	void storedResponsesTravelWithTheReleasesWhenShared() {
		ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 16);
		sync.onResponseStored("llm", "a", "resp_0");
		assertThat(sync.buffered()).as("not shared: nothing to publish").isZero();
		StoredResponses mine = new StoredResponses(100, Duration.ofHours(1));
		sync.shareStoredResponses(mine);
		sync.onResponseStored("llm", "a", "resp_1");
		assertThat(sync.take(10)).singleElement().satisfies(r -> {
			assertThat(r.instance()).isEqualTo("a");
			assertThat(r.response()).isEqualTo("resp_1");
			assertThat(r.chain()).isEmpty();
		});

		// A peer sharing them learns where each is, for instances it knows.
		DualMapRegistry other = DualMapRegistry.builder().services("llm").clock(() -> 1L).build();
		other.service("llm").updateMembership(this.registry.service("llm").serviceInstances());
		StoredResponses theirs = new StoredResponses(100, Duration.ofHours(1));
		ReplicaSync peer = new ReplicaSync(other, "peer", "h", 16).shareStoredResponses(theirs);
		ReleaseBatch batch = new ReleaseBatch("me", "h",
				List.of(new ReleaseBatch.Release("llm", "a", new long[0], "resp_1"),
						new ReleaseBatch.Release("llm", "gone", new long[0], "resp_2")));
		assertThat(peer.apply(ReleaseBatch.parse(batch.toJson()))).isEqualTo(new ReplicaSync.Applied(1, 1, 1));
		assertThat(theirs.instanceOf("llm", "resp_1")).isEqualTo("a");
		assertThat(theirs.instanceOf("llm", "resp_2")).isNull();
		// One that does not share them ignores them.
		assertThat(new ReplicaSync(other, "x", "h", 16).apply(batch)).isEqualTo(new ReplicaSync.Applied(0, 2, 0));

		// The start-up snapshot carries the most recent ones.
		mine.record("llm", "resp_1", "a");
		mine.record("llm", "resp_2", "b");
		ReleaseBatch snapshot = sync.snapshot(1_000);
		assertThat(snapshot.releases()).filteredOn(r -> r.response() != null)
			.extracting(ReleaseBatch.Release::response)
			.containsExactlyInAnyOrder("resp_1", "resp_2");
		StoredResponses starting = new StoredResponses(100, Duration.ofHours(1));
		new ReplicaSync(other, "new", "h", 16).shareStoredResponses(starting).apply(snapshot);
		assertThat(starting.instanceOf("llm", "resp_2")).isEqualTo("b");
	}

	@Test
	void ownBatchesAreIgnoredAndOtherHashingRefused() {
		ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 16);
		PromptBlocks billing = blocks("billing");
		List<ReleaseBatch.Release> releases = List.of(new ReleaseBatch.Release("llm", "a", billing.chain()));
		assertThat(sync.apply(new ReleaseBatch("me", "h", releases))).isEqualTo(new ReplicaSync.Applied(0, 1, 0));
		assertThat(matched("a", billing)).isZero();
		assertThatThrownBy(() -> sync.apply(new ReleaseBatch("peer", "other", releases)))
			.isInstanceOf(ReplicaSync.HashingMismatchException.class)
			.hasMessageContaining("replicas must share dualmap.prompt.*");
		assertThat(matched("a", billing)).isZero();
		assertThat(sync.refusedBatches()).isEqualTo(1);
	}

	@Test
	void hashingFingerprintNamesEveryParameter() {
		assertThat(ReplicaSync.hashingFingerprint(256, 4.0, 64))
			.isEqualTo("xxh3-chain;block-chars=256;chars-per-token=4.0;block-tokens=64");
		assertThat(ReplicaSync.hashingFingerprint(256, 3.5, 64))
			.isNotEqualTo(ReplicaSync.hashingFingerprint(256, 4.0, 64));
	}

}

package io.github.dualmap.replica;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.PrefillWork;
import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.core.Reason;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.gateway.DualMapRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The publisher against stub peers on loopback: what it sends, that a failing or slow
 * peer costs the others nothing, and that it stops publishing to itself.
 */
class ReplicaPublisherTests {

	private static final String PATH = "/dualmap/replicas/releases";

	private final DualMapRegistry registry = DualMapRegistry.builder().services("llm").clock(() -> 1L).build();

	private final ReplicaSync sync = new ReplicaSync(this.registry, "me", "h", 1024);

	private final List<DisposableServer> servers = new CopyOnWriteArrayList<>();

	@AfterEach
	void stop() {
		this.servers.forEach(DisposableServer::disposeNow);
	}

	/**
	 * A peer recording what it receives and answering as {@code answerAs} ({@code null}:
	 * not as a replica).
	 */
	private Peer peer(String answerAs, Duration delay) {
		Peer peer = new Peer(new CopyOnWriteArrayList<>(), new AtomicReference<>());
		DisposableServer server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.route(routes -> routes.post("/dualmap/replicas/releases",
					(req, res) -> req.receive()
						.aggregate()
						.asString(StandardCharsets.UTF_8)
						.delayElement(delay)
						.flatMap(body -> {
							peer.bodies().add(body);
							peer.authorization().set(req.requestHeaders().get("Authorization"));
							return (answerAs == null ? res : res.header(ReplicaSyncHandler.REPLICA_HEADER, answerAs))
								.sendString(Mono.just("{}"))
								.then();
						})))
			.bindNow();
		this.servers.add(server);
		return new Peer(peer.bodies(), peer.authorization(), URI.create("http://127.0.0.1:" + server.port()));
	}

	private ReplicaPublisher publisher(List<URI> peers, Duration timeout) {
		return publisher(peers, PATH, Duration.ofHours(1), timeout, 2, 100);
	}

	/** A publisher to static {@code peers} that refreshes nothing. */
	private ReplicaPublisher publisher(List<URI> peers, String path, Duration flushInterval, Duration timeout,
			int maxBatch, int maxPending) {
		return new ReplicaPublisher(this.sync, new ReplicaPeers(peers, null, null), WebClient.create(), path,
				"s3cret-0123456789", flushInterval, Duration.ofHours(1), timeout, maxBatch, maxPending);
	}

	private static PromptBlocks blocks(String topic) {
		return PrefixHasher.ofDefaults().ofText("m", ("Prompt of " + topic + ". ").repeat(40));
	}

	private void release(String instance, String topic) {
		PromptBlocks blocks = blocks(topic);
		RoutingRequest request = new RoutingRequest(topic, blocks, 1, 0);
		this.sync.onDecision("llm", request, Decision.of(instance, Reason.AFFINITY, request));
	}

	@Test
	void withLoadSharedEveryFlushCarriesTheLoadWhileThereIsSomeAndOnceMoreWhenItEnds() {
		this.registry.service("llm")
			.updateMembership(List.of(new DefaultServiceInstance("a", "llm", "10.0.0.1", 8000, false, Map.of())));
		this.sync.shareLoad(Duration.ofSeconds(1));
		Peer one = peer("peer-1", Duration.ZERO);
		ReplicaPublisher publisher = publisher(List.of(one.uri()), Duration.ofSeconds(5));
		publisher.flush().block(Duration.ofSeconds(10));
		assertThat(one.bodies()).as("no load and no release: nothing to say").isEmpty();

		PromptBlocks blocks = blocks("one");
		RoutingRequest request = new RoutingRequest("one", blocks, 1, 0);
		InstancePool.InFlight sent = this.registry.service("llm")
			.instancePool()
			.dispatch(request, new Decision("a", Reason.AFFINITY, 0, 640, -1));
		publisher.flush().block(Duration.ofSeconds(10));
		publisher.flush().block(Duration.ofSeconds(10));
		assertThat(one.bodies()).as("the same load again: a live replica's load must not expire at its peers")
			.hasSize(2)
			.allSatisfy(body -> assertThat(ReleaseBatch.parse(body.getBytes(StandardCharsets.UTF_8)).load())
				.containsExactly(new ReleaseBatch.Load("llm", "a", 1, 640, 0, PrefillWork.pairs(0, 640))));

		sent.firstToken();
		publisher.flush().block(Duration.ofSeconds(10));
		publisher.flush().block(Duration.ofSeconds(10));
		assertThat(one.bodies()).hasSize(3);
		ReleaseBatch last = ReleaseBatch.parse(one.bodies().get(2).getBytes(StandardCharsets.UTF_8));
		assertThat(last.releases()).isEmpty();
		assertThat(last.load()).as("the load ended: said once").isEmpty();

		// Releases without load still say so: a batch without "load" is from a replica
		// that does not share it.
		release("a", "two");
		publisher.flush().block(Duration.ofSeconds(10));
		assertThat(ReleaseBatch.parse(one.bodies().get(3).getBytes(StandardCharsets.UTF_8)).load()).isEmpty();
	}

	/**
	 * A peer serving start-up snapshots of {@code snapshot} as replica {@code peer-1},
	 * the first {@code busy} asks answered 503 with {@code Retry-After: 1}; counts the
	 * asks in {@code asked}.
	 */
	private URI snapshotPeer(byte[] snapshot, int busy, AtomicInteger asked) {
		DisposableServer server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.route(routes -> routes.get(PATH,
					(req, res) -> asked.incrementAndGet() <= busy
							? res.status(503).header("Retry-After", "1").sendString(Mono.just("{}")).then()
							: res.header(ReplicaSyncHandler.REPLICA_HEADER, "peer-1")
								.header("Content-Type", "application/json")
								.sendByteArray(Mono.just(snapshot))
								.then()))
			.bindNow();
		this.servers.add(server);
		return URI.create("http://127.0.0.1:" + server.port());
	}

	@Test
	void aStartingReplicaAsksABusyPeerAgainAfterItsRetryAfterThenTheNextPeer() {
		this.registry.service("llm")
			.updateMembership(List.of(new DefaultServiceInstance("a", "llm", "10.0.0.1", 8000, false, Map.of())));
		DualMapRegistry peerRegistry = DualMapRegistry.builder().services("llm").clock(() -> 1L).build();
		peerRegistry.service("llm").updateMembership(this.registry.service("llm").serviceInstances());
		PromptBlocks billing = blocks("billing");
		peerRegistry.service("llm").instancePool().instance("a").shadow().record(billing.chain());
		byte[] snapshot = new ReplicaSync(peerRegistry, "peer-1", "h", 16).snapshot(1_000).toJson();

		// Busy twice (its budget of bodies full), then it serves: learned from it.
		AtomicInteger asked = new AtomicInteger();
		URI busyTwice = snapshotPeer(snapshot, 2, asked);
		long start = System.nanoTime();
		ReplicaPublisher.Bootstrap learned = publisher(List.of(busyTwice), Duration.ofSeconds(5))
			.bootstrapFromPeers(1 << 20)
			.bootstrap(List.of(busyTwice))
			.block(Duration.ofSeconds(20));
		assertThat(learned).isNotNull();
		assertThat(learned.peer()).isEqualTo(busyTwice);
		assertThat(learned.blocks()).isEqualTo(billing.chain().length);
		assertThat(asked).hasValue(3);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("waited its Retry-After each time")
			.isGreaterThanOrEqualTo(Duration.ofSeconds(2));
		assertThat(
				this.registry.service("llm").instancePool().instance("a").shadow().peekMatchedBlocks(billing.chain()))
			.isEqualTo(billing.chain().length);

		// Busy every time: given up after its retries, and the next peer serves.
		AtomicInteger askedBusy = new AtomicInteger();
		URI alwaysBusy = snapshotPeer(snapshot, Integer.MAX_VALUE, askedBusy);
		AtomicInteger askedNext = new AtomicInteger();
		URI next = snapshotPeer(snapshot, 0, askedNext);
		learned = publisher(List.of(alwaysBusy, next), Duration.ofSeconds(5)).bootstrapFromPeers(1 << 20)
			.bootstrap(List.of(alwaysBusy, next))
			.block(Duration.ofSeconds(20));
		assertThat(learned).isNotNull();
		assertThat(learned.peer()).isEqualTo(next);
		assertThat(askedBusy).hasValue(1 + ReplicaPublisher.BUSY_RETRIES);
		assertThat(askedNext).hasValue(1);
	}

	@Test
	void everyFlushForgetsPeersThatFellSilent() {
		this.sync.shareLoad(Duration.ofNanos(1));
		this.registry.service("llm")
			.updateMembership(List.of(new DefaultServiceInstance("a", "llm", "10.0.0.1", 8000, false, Map.of())));
		this.sync.apply(new ReleaseBatch("peer", "h", List.of(), List.of(new ReleaseBatch.Load("llm", "a", 1, 1, 1))));
		assertThat(this.sync.loadPeers()).isEqualTo(1);
		publisher(List.of(), Duration.ofSeconds(1)).flush().block(Duration.ofSeconds(10));
		assertThat(this.sync.loadPeers()).isZero();
	}

	@Test
	void withoutLoadSharingAPublicationCarriesNoLoad() {
		this.registry.service("llm")
			.updateMembership(List.of(new DefaultServiceInstance("a", "llm", "10.0.0.1", 8000, false, Map.of())));
		Peer one = peer("peer-1", Duration.ZERO);
		ReplicaPublisher publisher = publisher(List.of(one.uri()), Duration.ofSeconds(5));
		RoutingRequest request = new RoutingRequest("one", blocks("one"), 1, 0);
		this.registry.service("llm").instancePool().dispatch(request, new Decision("a", Reason.AFFINITY, 0, 640, -1));
		publisher.flush().block(Duration.ofSeconds(10));
		assertThat(one.bodies()).isEmpty();
		release("a", "two");
		publisher.flush().block(Duration.ofSeconds(10));
		assertThat(one.bodies()).singleElement()
			.satisfies(body -> assertThat(body).contains("\"releases\":[{").doesNotContain("load"));
	}

	@Test
	void aFlushSendsOneBatchToEveryPeerWithTheTokenAndABrokenOrSlowPeerCostsTheOthersNothing() {
		Peer one = peer("peer-1", Duration.ZERO);
		Peer two = peer("peer-2", Duration.ZERO);
		Peer slow = peer("peer-3", Duration.ofSeconds(5));
		URI refused = URI.create("http://127.0.0.1:1");
		ReplicaPublisher publisher = publisher(List.of(one.uri(), refused, slow.uri(), two.uri()),
				Duration.ofMillis(500));
		release("a", "one");
		release("b", "two");
		release("a", "three");
		publisher.flush().block(Duration.ofSeconds(10));
		for (Peer p : List.of(one, two)) {
			assertThat(p.bodies()).singleElement().satisfies(body -> {
				ReleaseBatch batch = ReleaseBatch.parse(body.getBytes(StandardCharsets.UTF_8));
				assertThat(batch.replica()).isEqualTo("me");
				assertThat(batch.releases()).extracting(ReleaseBatch.Release::instance).containsExactly("a", "b");
			});
			assertThat(p.authorization().get()).isEqualTo("Bearer s3cret-0123456789");
		}
		// Two peers answered in time; the refused one and the slow one count as failed.
		assertThat(this.sync.sent()).isEqualTo(4);
		assertThat(this.sync.failedPublications()).isEqualTo(2);
		// The third release waits for the next flush, in every peer's pending list.
		assertThat(this.sync.buffered()).isZero();
		publisher.flush().block(Duration.ofSeconds(10));
		assertThat(one.bodies()).hasSize(2);
		assertThat(ReleaseBatch.parse(one.bodies().get(1).getBytes(StandardCharsets.UTF_8)).releases())
			.extracting(ReleaseBatch.Release::instance)
			.containsExactly("a");
		assertThat(this.sync.sent()).isEqualTo(6);
		// Nothing buffered: nothing sent.
		publisher.flush().block(Duration.ofSeconds(10));
		assertThat(one.bodies()).hasSize(2);
	}

	@Test
	void aSlowPeerGetsWhatItMissedWhenItAnswersAndTheOthersAreNotDelayed() {
		Peer fast = peer("peer-1", Duration.ZERO);
		Peer slow = peer("peer-2", Duration.ofSeconds(3));
		ReplicaPublisher publisher = publisher(List.of(fast.uri(), slow.uri()), Duration.ofSeconds(10));
		release("a", "one");
		Mono<Void> first = publisher.flush();
		await().atMost(Duration.ofSeconds(5)).until(() -> fast.bodies().size() == 1 && !publisher.inFlight(fast.uri()));
		assertThat(publisher.inFlight(slow.uri())).isTrue();
		// The slow peer has not answered: the next batch reaches the fast one at once and
		// waits for the slow one.
		release("b", "two");
		publisher.flush().block(Duration.ofSeconds(2));
		assertThat(fast.bodies()).hasSize(2);
		first.block(Duration.ofSeconds(10));
		assertThat(slow.bodies()).hasSize(1);
		// Answered: it gets what it missed with what is new, in order.
		release("a", "three");
		publisher.flush().block(Duration.ofSeconds(10));
		assertThat(slow.bodies()).hasSize(2);
		assertThat(ReleaseBatch.parse(slow.bodies().get(1).getBytes(StandardCharsets.UTF_8)).releases())
			.extracting(ReleaseBatch.Release::instance)
			.containsExactly("b", "a");
		assertThat(fast.bodies()).hasSize(3);
		assertThat(this.sync.sent()).isEqualTo(6);
		assertThat(this.sync.failedPublications()).isZero();
	}

	@Test
	void aPeerThatDoesNotAnswerKeepsOnlyTheNewestReleasesUpToTheBound() {
		Peer slow = peer("peer-2", Duration.ofMillis(500));
		ReplicaPublisher publisher = publisher(List.of(slow.uri()), PATH, Duration.ofHours(1), Duration.ofSeconds(10),
				1, 2);
		release("a", "one");
		Mono<Void> first = publisher.flush();
		for (String topic : List.of("two", "three", "four")) {
			release("a", topic);
			publisher.flush();
		}
		// "two" fell out of the bound of 2 while the first publication was open.
		assertThat(this.sync.dropped()).isEqualTo(1);
		first.block(Duration.ofSeconds(10));
		publisher.flush().block(Duration.ofSeconds(10));
		publisher.flush().block(Duration.ofSeconds(10));
		assertThat(slow.bodies()).hasSize(3);
		assertThat(this.sync.sent()).isEqualTo(3);
		assertThat(slow.bodies().get(2)).contains(String.valueOf(blocks("four").chain()[0]))
			.doesNotContain(String.valueOf(blocks("two").chain()[0]));
	}

	@Test
	void aFlushThatFailsDoesNotStopTheNextOnes() {
		Peer one = peer("peer-1", Duration.ZERO);
		// A path that is not validly encoded makes every flush throw (properties refuse
		// it; the constructor does not).
		ReplicaPublisher publisher = publisher(List.of(one.uri()), "/bad%zz", Duration.ofMillis(20),
				Duration.ofSeconds(2), 100, 100);
		publisher.start();
		try {
			release("a", "one");
			await().atMost(Duration.ofSeconds(10)).until(() -> this.sync.buffered() == 0);
			release("a", "two");
			await().atMost(Duration.ofSeconds(10)).until(() -> this.sync.buffered() == 0);
			assertThat(publisher.isRunning()).isTrue();
			assertThat(one.bodies()).isEmpty();
		}
		finally {
			publisher.stop();
		}
	}

	@Test
	void aPeerThatAnswersAsThisReplicaIsDroppedFromThePeers() {
		Peer self = peer("me", Duration.ZERO);
		Peer other = peer("peer-1", Duration.ZERO);
		ReplicaPublisher publisher = publisher(List.of(self.uri(), other.uri()), Duration.ofSeconds(2));
		release("a", "one");
		publisher.flush().block(Duration.ofSeconds(10));
		release("a", "two");
		publisher.flush().block(Duration.ofSeconds(10));
		assertThat(self.bodies()).hasSize(1);
		assertThat(other.bodies()).hasSize(2);
		assertThat(this.sync.sent()).isEqualTo(2);
	}

	@Test
	void aTwoHundredFromSomethingThatIsNotAReplicaIsAFailedPublication() {
		Peer impostor = peer(null, Duration.ZERO);
		ReplicaPublisher publisher = publisher(List.of(impostor.uri()), Duration.ofSeconds(2));
		release("a", "one");
		publisher.flush().block(Duration.ofSeconds(10));
		assertThat(impostor.bodies()).hasSize(1);
		assertThat(this.sync.sent()).isZero();
		assertThat(this.sync.failedPublications()).isOne();
	}

	@Test
	void startedItPublishesEveryFlushIntervalUntilStopped() {
		Peer one = peer("peer-1", Duration.ZERO);
		ReplicaPublisher publisher = publisher(List.of(one.uri()), PATH, Duration.ofMillis(20), Duration.ofSeconds(2),
				100, 100);
		publisher.start();
		try {
			assertThat(publisher.isRunning()).isTrue();
			release("a", "one");
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(one.bodies()).hasSize(1));
			release("b", "two");
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(one.bodies()).hasSize(2));
		}
		finally {
			publisher.stop();
		}
		assertThat(publisher.isRunning()).isFalse();
		release("a", "three");
		assertThat(this.sync.buffered()).isEqualTo(1);
	}

	private record Peer(List<String> bodies, AtomicReference<String> authorization, URI uri) {

		Peer(List<String> bodies, AtomicReference<String> authorization) {
			this(bodies, authorization, URI.create("http://unused"));
		}

	}

}

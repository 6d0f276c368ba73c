package io.github.dualmap.replica;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.github.dualmap.gateway.DualMapLifecycle;
import io.github.dualmap.gateway.RequestBodies;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.client.HttpClientRequest;
import reactor.util.retry.Retry;

import org.springframework.context.SmartLifecycle;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * Publishes this replica's releases to every peer. Every flush interval the releases
 * buffered since the last flush join each peer's own pending list, and every peer without
 * a publication in flight gets one batch of up to {@code max-batch-releases} from its
 * list. So a slow or unreachable peer delays no other, never has more than one
 * publication open, and catches up when it answers again; its pending list is bounded by
 * {@code max-buffered-releases} (oldest dropped first, counted). A publication is sent at
 * most once: a failed one is counted and not retried (what it carried is soon stale, and
 * a missed release only costs a peer a cache hit).
 */
public final class ReplicaPublisher implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(ReplicaPublisher.class);

	/**
	 * How often a start-up snapshot is asked of a peer again after a 503 or 429 (a peer
	 * whose budget of bodies cannot hold one now), each after its {@code Retry-After}
	 * within {@link #MAX_BUSY_WAIT}, before the next peer is tried.
	 */
	static final int BUSY_RETRIES = 2;

	/** Longest wait for a busy peer's {@code Retry-After}. */
	static final Duration MAX_BUSY_WAIT = Duration.ofSeconds(2);

	private final ReplicaSync sync;

	private final ReplicaPeers peers;

	private final WebClient client;

	private final String path;

	private final String token;

	private final Duration flushInterval;

	private final Duration peerRefreshInterval;

	private final Duration timeout;

	private final int maxBatch;

	/**
	 * Per peer: its pending releases, whether a publication is in flight and whether the
	 * last one succeeded.
	 */
	private final Map<URI, Peer> states = new ConcurrentHashMap<>();

	private final int maxPending;

	private @Nullable Scheduler scheduler;

	/** Largest snapshot read from a peer at start; 0 when this replica does not ask. */
	private volatile int bootstrapMaxBytes;

	private final AtomicReference<@Nullable Bootstrap> bootstrapped = new AtomicReference<>();

	/** Whether the start-up snapshot was applied, found nowhere or given up on. */
	private volatile boolean bootstrapConcluded;

	private @Nullable Disposable running;

	public ReplicaPublisher(ReplicaSync sync, ReplicaPeers peers, WebClient client, String path, String token,
			Duration flushInterval, Duration peerRefreshInterval, Duration timeout, int maxBatch, int maxPending) {
		this.sync = sync;
		this.peers = peers;
		this.client = client;
		this.path = path;
		this.token = token;
		this.flushInterval = flushInterval;
		this.peerRefreshInterval = peerRefreshInterval;
		this.timeout = timeout;
		this.maxBatch = maxBatch;
		this.maxPending = maxPending;
	}

	@Override
	public synchronized void start() {
		if (this.running != null) {
			return;
		}
		Scheduler s = Schedulers.newSingle("dualmap-replica-sync", true);
		this.scheduler = s;
		// Each tick starts a flush without waiting for the previous one's answers.
		Disposable flushes = Flux.interval(this.flushInterval, s).onBackpressureDrop().subscribe(tick -> {
			// A failure must not end the interval: the next tick tries again.
			try {
				flush().subscribe(null, ex -> logger.warn("Replica sync: a publication failed unexpectedly", ex));
			}
			catch (RuntimeException ex) {
				logger.warn("Replica sync: a flush failed unexpectedly", ex);
			}
		});
		Disposable refreshes = this.peers.discovers() ? Flux.interval(Duration.ZERO, this.peerRefreshInterval, s)
			.onBackpressureDrop()
			.concatMap(tick -> this.peers.refresh(this.peerRefreshInterval), 1)
			.subscribe() : Disposables.disposed();
		Disposable bootstrap = this.bootstrapMaxBytes > 0 ? bootstrapWhenPeersAreKnown(s) : Disposables.disposed();
		this.running = Disposables.composite(flushes, refreshes, bootstrap);
	}

	/**
	 * Asks the peers at start for what they know ({@code GET} on the sync path, answered
	 * with their shadow indexes) and applies the first answer, so that a replica that
	 * (re)starts routes with its peers' knowledge at once instead of learning it only
	 * from releases made after it started.
	 * @param maxBodyBytes largest snapshot accepted (the peers size theirs to
	 * {@code dualmap.replicas.max-body-size})
	 * @return this
	 */
	public ReplicaPublisher bootstrapFromPeers(int maxBodyBytes) {
		if (maxBodyBytes <= 0) {
			throw new IllegalArgumentException("maxBodyBytes must be > 0 but was " + maxBodyBytes);
		}
		this.bootstrapMaxBytes = maxBodyBytes;
		return this;
	}

	/** Whether this replica asks its peers for a snapshot at start. */
	public boolean bootstraps() {
		return this.bootstrapMaxBytes > 0;
	}

	/**
	 * Whether this replica still waits for a peer's start-up snapshot: it asks for one
	 * and has neither applied one nor given up (no peer known in time, none answered).
	 */
	public boolean bootstrapPending() {
		return bootstraps() && !this.bootstrapConcluded;
	}

	/** The peer this replica learned from at start and how much, or {@code null}. */
	public @Nullable Bootstrap bootstrapped() {
		return this.bootstrapped.get();
	}

	/**
	 * A snapshot applied at start: from {@code peer}, the cached blocks of
	 * {@code instances} instances and {@code responses} stored responses.
	 */
	public record Bootstrap(URI peer, int instances, int blocks, int responses) {

	}

	private Disposable bootstrapWhenPeersAreKnown(Scheduler s) {
		// Discovered peers arrive with the first refresh, and the pools' instances with
		// discovery too (releases for unknown instances are ignored): wait for both, not
		// forever.
		Duration wait = this.peerRefreshInterval.plus(this.timeout).multipliedBy(2);
		return Flux.interval(Duration.ZERO, this.flushInterval, s)
			.filter(tick -> this.sync.membershipKnown())
			.map(tick -> this.peers.current())
			.filter(list -> !list.isEmpty())
			.next()
			.timeout(wait, Mono.empty(), s)
			.doOnSuccess(peers -> {
				if (peers == null) {
					logger.info("Replica sync: no peer known after " + wait.toMillis()
							+ " ms; learning from new releases only");
				}
			})
			.flatMap(this::bootstrap)
			// Concluded however it ends, so readiness never waits for more than the
			// bounds.
			.doFinally(signal -> this.bootstrapConcluded = true)
			.subscribe(null, ex -> logger.warn("Replica sync: learning from peers at start failed", ex));
	}

	/**
	 * Tries {@code candidates} in turn, a busy one again after its {@code Retry-After}
	 * ({@link #BUSY_RETRIES}); completes after the first snapshot applied.
	 */
	Mono<Bootstrap> bootstrap(List<URI> candidates) {
		return Flux.fromIterable(candidates)
			.concatMap(peer -> snapshotOf(peer).retryWhen(Retry.from(signals -> signals
				.concatMap(signal -> signal.totalRetries() < BUSY_RETRIES && signal.failure() instanceof PeerBusy busy
						? Mono.delay(busy.retryAfter) : Mono.error(signal.failure()))))
				.onErrorResume(ex -> {
					// The cause says what happened (a timeout, a refused connection); the
					// client's wrapper often has no message of its own.
					logger.info("Replica sync: no snapshot from " + peer + " ("
							+ NestedExceptionUtils.getMostSpecificCause(ex) + ")");
					return Mono.empty();
				}), 1)
			.next()
			.doOnNext(b -> {
				this.bootstrapped.set(b);
				logger.info("Replica sync: learned " + b.blocks() + " cached blocks of " + b.instances()
						+ " instances and " + b.responses() + " stored responses from " + b.peer());
			})
			.switchIfEmpty(Mono.fromRunnable(() -> logger
				.info("Replica sync: no peer answered with a snapshot; learning from new releases only")));
	}

	private Mono<Bootstrap> snapshotOf(URI peer) {
		int max = this.bootstrapMaxBytes;
		Duration allowed = this.timeout.multipliedBy(10);
		return this.client.get()
			.uri(syncUri(peer))
			.headers(h -> h.setBearerAuth(this.token))
			.accept(MediaType.APPLICATION_JSON)
			// The client's response timeout is a publication's; a snapshot is larger.
			.httpRequest(request -> {
				if (request.getNativeRequest() instanceof HttpClientRequest netty) {
					netty.responseTimeout(allowed);
				}
			})
			.exchangeToMono(response -> {
				if (answeredBySelf(peer, response)) {
					return response.releaseBody().then(Mono.<byte[]>empty());
				}
				int status = response.statusCode().value();
				if (status == 503 || status == 429) {
					return response.releaseBody().then(Mono.<byte[]>error(new PeerBusy(status, retryAfter(response))));
				}
				if (!response.statusCode().is2xxSuccessful()) {
					return response.releaseBody()
						.then(Mono.<byte[]>error(new IllegalStateException("status " + status)));
				}
				return RequestBodies.read(response.bodyToFlux(DataBuffer.class), max);
			})
			// A snapshot is larger than a publication: allow it more time.
			.timeout(allowed)
			.map(body -> {
				ReleaseBatch batch = ReleaseBatch.parse(body);
				ReplicaSync.Applied applied = this.sync.applySnapshot(batch);
				int blocks = batch.releases().stream().mapToInt(r -> r.chain().length).sum();
				return new Bootstrap(peer, applied.applied() - applied.responses(), blocks, applied.responses());
			});
	}

	/**
	 * A peer's {@code Retry-After} in seconds, within 100 ms and {@link #MAX_BUSY_WAIT};
	 * one second when it has none or it is not a number of seconds.
	 */
	static Duration retryAfter(ClientResponse response) {
		String value = response.headers().asHttpHeaders().getFirst(HttpHeaders.RETRY_AFTER);
		long seconds = 1;
		if (value != null) {
			try {
				seconds = Long.parseLong(value.trim());
			}
			catch (NumberFormatException ex) {
				// An HTTP date: a peer of ours sends seconds; wait the default.
			}
		}
		Duration wait = Duration.ofSeconds(Math.max(0, Math.min(seconds, MAX_BUSY_WAIT.toSeconds())));
		return wait.compareTo(Duration.ofMillis(100)) < 0 ? Duration.ofMillis(100) : wait;
	}

	/** A peer that answered 503 or 429: asked again after {@code retryAfter}. */
	static final class PeerBusy extends RuntimeException {

		private final Duration retryAfter;

		PeerBusy(int status, Duration retryAfter) {
			super("status " + status + ", retry after " + retryAfter.toMillis() + " ms", null, false, false);
			this.retryAfter = retryAfter;
		}

	}

	@Override
	public synchronized void stop() {
		if (this.running != null) {
			this.running.dispose();
			this.running = null;
		}
		if (this.scheduler != null) {
			this.scheduler.dispose();
			this.scheduler = null;
		}
	}

	@Override
	public synchronized boolean isRunning() {
		return this.running != null;
	}

	@Override
	public int getPhase() {
		return DualMapLifecycle.PHASE;
	}

	/**
	 * Whether a publication to {@code peer} is in flight (its batches wait meanwhile).
	 */
	boolean inFlight(URI peer) {
		Peer p = this.states.get(peer);
		return p != null && p.inFlight.get();
	}

	/** The peers the next publication goes to. */
	public List<URI> peers() {
		return this.peers.current();
	}

	/**
	 * Adds the releases buffered since the last flush to every current peer's pending
	 * list and starts a publication to every peer that has none in flight; the returned
	 * {@code Mono} (already running) completes when those answered or timed out. Releases
	 * taken while there is no peer are discarded.
	 */
	Mono<Void> flush() {
		List<ReleaseBatch.Release> fresh = this.sync.take(this.maxPending);
		@Nullable List<ReleaseBatch.Load> load = null;
		if (this.sync.sharesLoad()) {
			this.sync.expirePeerLoads();
			load = this.sync.localLoad();
		}
		List<URI> targets = this.peers.current();
		this.states.keySet().retainAll(targets);
		List<Mono<Void>> sends = new ArrayList<>();
		// Peers that kept up get the same batch: serialize it once.
		Map<Body, byte[]> bodies = new HashMap<>();
		for (URI peer : targets) {
			Peer state = this.states.computeIfAbsent(peer, p -> new Peer());
			state.add(fresh, this.maxPending, this.sync);
			if (!state.inFlight.compareAndSet(false, true)) {
				continue;
			}
			List<ReleaseBatch.Release> batch = state.take(this.maxBatch);
			// Load is news while there is some, and once more when it changed (to none);
			// a replica that shares it sends it with every publication, so a batch
			// without
			// it means a peer that does not.
			boolean loadNews = load != null && (!load.isEmpty() || !load.equals(state.lastLoad));
			if (batch.isEmpty() && !loadNews) {
				state.inFlight.set(false);
				continue;
			}
			byte[] body = bodies.computeIfAbsent(new Body(batch, load),
					b -> new ReleaseBatch(this.sync.replicaId(), this.sync.hashing(), b.releases(), b.load()).toJson());
			// Free before the completion propagates, so whoever waits on this flush can
			// publish to the peer again at once.
			sends.add(publish(peer, state, body, batch.size(), load).doOnTerminate(() -> state.inFlight.set(false))
				.doOnCancel(() -> state.inFlight.set(false))
				.cache());
		}
		// Started here, not on subscription: a caller that never subscribes still
		// publishes.
		sends.forEach(Mono::subscribe);
		return Flux.merge(sends).then();
	}

	/** What one publication carries. */
	private record Body(List<ReleaseBatch.Release> releases, @Nullable List<ReleaseBatch.Load> load) {

	}

	/** One peer's releases not yet published to it. */
	private static final class Peer {

		final AtomicBoolean inFlight = new AtomicBoolean();

		/** The load this peer last received from this replica (at first: none). */
		volatile List<ReleaseBatch.Load> lastLoad = List.of();

		/** Whether the last publication succeeded, to log changes only. */
		final AtomicReference<@Nullable Boolean> healthy = new AtomicReference<>();

		private final ArrayDeque<ReleaseBatch.Release> pending = new ArrayDeque<>();

		synchronized void add(List<ReleaseBatch.Release> releases, int max, ReplicaSync sync) {
			this.pending.addAll(releases);
			while (this.pending.size() > max) {
				this.pending.pollFirst();
				sync.countDropped();
			}
		}

		synchronized List<ReleaseBatch.Release> take(int max) {
			List<ReleaseBatch.Release> out = new ArrayList<>(Math.min(max, this.pending.size()));
			while (out.size() < max && !this.pending.isEmpty()) {
				out.add(this.pending.pollFirst());
			}
			return out;
		}

	}

	private Mono<Void> publish(URI peer, Peer state, byte[] body, int releases,
			@Nullable List<ReleaseBatch.Load> load) {
		return this.client.post()
			.uri(syncUri(peer))
			.headers(h -> h.setBearerAuth(this.token))
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchangeToMono(response -> {
				if (answeredBySelf(peer, response)) {
					// Nothing to count: this replica stops publishing to itself.
					return response.releaseBody();
				}
				if (response.statusCode().is2xxSuccessful()
						&& response.headers().asHttpHeaders().getFirst(ReplicaSyncHandler.REPLICA_HEADER) == null) {
					// Something answered that is not a replica (a proxy, another service
					// on the path): nothing was applied.
					failed(peer, state, "answered without " + ReplicaSyncHandler.REPLICA_HEADER + ": not a replica");
				}
				else if (response.statusCode().is2xxSuccessful()) {
					this.sync.countSent(releases);
					if (load != null) {
						state.lastLoad = load;
					}
					healthy(peer, state, null);
				}
				else {
					failed(peer, state, "status " + response.statusCode().value());
				}
				return response.releaseBody();
			})
			.timeout(this.timeout)
			.onErrorResume(ex -> {
				failed(peer, state, ex.toString());
				return Mono.empty();
			});
	}

	/** The sync endpoint on {@code peer}. */
	private URI syncUri(URI peer) {
		return UriComponentsBuilder.fromUri(peer).replacePath(this.path).replaceQuery(null).build(true).toUri();
	}

	/**
	 * Whether {@code peer} is this replica (it answered with this replica's id); if so,
	 * it is left out of the peers from now on.
	 */
	private boolean answeredBySelf(URI peer, ClientResponse response) {
		String answeredAs = response.headers().asHttpHeaders().getFirst(ReplicaSyncHandler.REPLICA_HEADER);
		if (this.sync.replicaId().equals(answeredAs)) {
			this.peers.markSelf(peer);
			return true;
		}
		return false;
	}

	private void failed(URI peer, Peer state, String why) {
		this.sync.countFailedPublication();
		healthy(peer, state, why);
	}

	private static void healthy(URI peer, Peer state, @Nullable String failure) {
		Boolean before = state.healthy.getAndSet(failure == null);
		if (failure != null && !Boolean.FALSE.equals(before)) {
			logger.warn("Replica sync: publishing to " + peer + " failed (" + failure
					+ "); its shadow indexes miss this replica's releases until it answers again");
		}
		else if (failure == null && Boolean.FALSE.equals(before)) {
			logger.info("Replica sync: publishing to " + peer + " works again");
		}
	}

}

package io.github.dualmap.replica;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.context.SmartLifecycle;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * Publishes this replica's buffered releases to every peer once per flush interval, one
 * batch per interval and peer, at most once: a failed publication is counted and not
 * retried (what it carried is soon stale, and a missed release only costs a peer a cache
 * hit). Peers are published to in parallel, each under its own timeout, so a slow peer
 * delays no other.
 */
public final class ReplicaPublisher implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(ReplicaPublisher.class);

	private final ReplicaSync sync;

	private final ReplicaPeers peers;

	private final WebClient client;

	private final String path;

	private final String token;

	private final Duration flushInterval;

	private final Duration peerRefreshInterval;

	private final Duration timeout;

	private final int maxBatch;

	/** Whether the last publication to a peer succeeded, to log changes only. */
	private final Map<URI, Boolean> healthy = new ConcurrentHashMap<>();

	private @Nullable Scheduler scheduler;

	private @Nullable Disposable running;

	public ReplicaPublisher(ReplicaSync sync, ReplicaPeers peers, WebClient client, String path, String token,
			Duration flushInterval, Duration peerRefreshInterval, Duration timeout, int maxBatch) {
		this.sync = sync;
		this.peers = peers;
		this.client = client;
		this.path = path;
		this.token = token;
		this.flushInterval = flushInterval;
		this.peerRefreshInterval = peerRefreshInterval;
		this.timeout = timeout;
		this.maxBatch = maxBatch;
	}

	@Override
	public synchronized void start() {
		if (this.running != null) {
			return;
		}
		Scheduler s = Schedulers.newSingle("dualmap-replica-sync", true);
		this.scheduler = s;
		Disposable flushes = Flux.interval(this.flushInterval, s)
			.onBackpressureDrop()
			.concatMap(tick -> flush().onErrorResume(ex -> {
				logger.warn("Replica sync: a publication failed unexpectedly", ex);
				return Mono.empty();
			}), 1)
			.subscribe();
		Disposable refreshes = this.peers.discovers() ? Flux.interval(Duration.ZERO, this.peerRefreshInterval, s)
			.onBackpressureDrop()
			.concatMap(tick -> this.peers.refresh(), 1)
			.subscribe() : Disposables.disposed();
		this.running = Disposables.composite(flushes, refreshes);
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

	/** The peers the next publication goes to. */
	public List<URI> peers() {
		return this.peers.current();
	}

	/**
	 * Publishes the next batch to every current peer; completes when every peer answered
	 * or timed out. Releases taken while there is no peer are discarded.
	 */
	Mono<Void> flush() {
		ReleaseBatch batch = this.sync.nextBatch(this.maxBatch);
		List<URI> targets = this.peers.current();
		this.healthy.keySet().retainAll(targets);
		if (batch == null || targets.isEmpty()) {
			return Mono.empty();
		}
		byte[] body = batch.toJson();
		int n = batch.releases().size();
		return Flux.fromIterable(targets).flatMap(peer -> publish(peer, body, n)).then();
	}

	private Mono<Void> publish(URI peer, byte[] body, int releases) {
		URI target = UriComponentsBuilder.fromUri(peer).replacePath(this.path).replaceQuery(null).build(true).toUri();
		return this.client.post()
			.uri(target)
			.headers(h -> h.setBearerAuth(this.token))
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchangeToMono(response -> {
				String answeredAs = response.headers().asHttpHeaders().getFirst(ReplicaSyncHandler.REPLICA_HEADER);
				if (this.sync.replicaId().equals(answeredAs)) {
					this.peers.markSelf(peer);
				}
				else if (response.statusCode().is2xxSuccessful()) {
					this.sync.countSent(releases);
					healthy(peer, null);
				}
				else {
					failed(peer, "status " + response.statusCode().value());
				}
				return response.releaseBody();
			})
			.timeout(this.timeout)
			.onErrorResume(ex -> {
				failed(peer, ex.toString());
				return Mono.empty();
			});
	}

	private void failed(URI peer, String why) {
		this.sync.countFailedPublication();
		healthy(peer, why);
	}

	private void healthy(URI peer, @Nullable String failure) {
		Boolean before = this.healthy.put(peer, failure == null);
		if (failure != null && !Boolean.FALSE.equals(before)) {
			logger.warn("Replica sync: publishing to " + peer + " failed (" + failure
					+ "); its shadow indexes miss this replica's releases until it answers again");
		}
		else if (failure == null && Boolean.FALSE.equals(before)) {
			logger.info("Replica sync: publishing to " + peer + " works again");
		}
	}

}

package io.github.dualmap.replica;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;

/**
 * The replicas a publication goes to: the configured URLs plus, with a service id, the
 * gateway's own instances from discovery, less every URL that answered as this replica.
 */
public final class ReplicaPeers {

	private static final Log logger = LogFactory.getLog(ReplicaPeers.class);

	private final List<URI> configured;

	private final @Nullable String serviceId;

	private final @Nullable ReactiveDiscoveryClient discovery;

	private volatile List<URI> discovered = List.of();

	private final Set<URI> self = ConcurrentHashMap.newKeySet();

	public ReplicaPeers(List<URI> configured, @Nullable String serviceId, @Nullable ReactiveDiscoveryClient discovery) {
		if (serviceId != null && discovery == null) {
			throw new IllegalArgumentException(
					"dualmap.replicas.service-id '" + serviceId + "' needs a discovery client, and there is none");
		}
		this.configured = List.copyOf(configured);
		this.serviceId = serviceId;
		this.discovery = discovery;
	}

	/** Whether the peer list comes (also) from discovery. */
	boolean discovers() {
		return this.serviceId != null;
	}

	/** The peers to publish to now. */
	List<URI> current() {
		Set<URI> all = new LinkedHashSet<>(this.configured);
		all.addAll(this.discovered);
		all.removeAll(this.self);
		return new ArrayList<>(all);
	}

	/**
	 * Reads the gateway's instances from discovery; keeps the last list on failure or
	 * when discovery takes longer than {@code timeout} (a hung read must not stop later
	 * refreshes).
	 */
	Mono<Void> refresh(Duration timeout) {
		if (this.serviceId == null || this.discovery == null) {
			return Mono.empty();
		}
		return this.discovery.getInstances(this.serviceId)
			.map(ServiceInstance::getUri)
			.collectList()
			.timeout(timeout)
			.doOnNext(uris -> this.discovered = List.copyOf(uris))
			.onErrorResume(ex -> {
				logger.warn("Reading the replicas of '" + this.serviceId + "' from discovery failed; keeping "
						+ this.discovered.size() + " known: " + ex);
				return Mono.empty();
			})
			.then();
	}

	/** {@code peer} answered as this replica: it is never published to again. */
	void markSelf(URI peer) {
		if (this.self.add(peer)) {
			logger.info("Replica sync: " + peer + " is this replica; not publishing to it");
		}
	}

}

package io.github.dualmap.actuate;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.dualmap.replica.ReplicaPublisher;
import io.github.dualmap.replica.ReplicaSync;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * Health of replica sync ({@code dualMapReplicas}): {@code OUT_OF_SERVICE} while this
 * replica waits for a peer's start-up snapshot ({@code dualmap.replicas.bootstrap}),
 * {@code UP} once it applied one or gave up within its bounds. Add it to the readiness
 * group
 * ({@code management.endpoint.health.group.readiness.include=readinessState,dualMapReplicas})
 * so a restarted replica takes traffic only once it knows what its peers routed. A peer
 * that fails publications does not make this replica unhealthy: it routes on without that
 * peer's knowledge (the details count the failures).
 */
public class ReplicaSyncHealthIndicator implements HealthIndicator {

	private final ReplicaSync sync;

	private final ReplicaPublisher publisher;

	public ReplicaSyncHealthIndicator(ReplicaSync sync, ReplicaPublisher publisher) {
		this.sync = sync;
		this.publisher = publisher;
	}

	@Override
	public Health health() {
		Health.Builder health = this.publisher.bootstrapPending() ? Health.outOfService() : Health.up();
		return health.withDetail("replica", this.sync.replicaId())
			.withDetail("peers", this.publisher.peers().size())
			.withDetail("failedPublications", this.sync.failedPublications())
			.withDetail("bootstrap", bootstrap())
			.build();
	}

	private Object bootstrap() {
		if (!this.publisher.bootstraps()) {
			return "off";
		}
		if (this.publisher.bootstrapPending()) {
			return "waiting for a peer's snapshot";
		}
		ReplicaPublisher.Bootstrap learned = this.publisher.bootstrapped();
		if (learned == null) {
			return "no peer answered";
		}
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("peer", learned.peer().toString());
		details.put("instances", learned.instances());
		details.put("blocks", learned.blocks());
		details.put("responses", learned.responses());
		return details;
	}

}

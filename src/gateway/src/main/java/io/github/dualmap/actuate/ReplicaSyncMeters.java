package io.github.dualmap.actuate;

import io.github.dualmap.replica.ReplicaPublisher;
import io.github.dualmap.replica.ReplicaSync;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Replica sync meters: {@code dualmap.replicas.releases} by {@code outcome} (sent,
 * dropped, applied, ignored), {@code dualmap.replicas.publish.failures},
 * {@code dualmap.replicas.refused.batches}, and the gauges
 * {@code dualmap.replicas.buffered}, {@code dualmap.replicas.peers} and
 * {@code dualmap.replicas.load.peers}.
 */
public final class ReplicaSyncMeters implements MeterBinder {

	private final ReplicaSync sync;

	private final ReplicaPublisher publisher;

	public ReplicaSyncMeters(ReplicaSync sync, ReplicaPublisher publisher) {
		this.sync = sync;
		this.publisher = publisher;
	}

	@Override
	public void bindTo(MeterRegistry meters) {
		release(meters, "sent", "Releases delivered to a peer, counted once per peer", ReplicaSync::sent);
		release(meters, "dropped", "Releases not published because the buffer was full", ReplicaSync::dropped);
		release(meters, "applied", "Peers' releases that entered a shadow index here", ReplicaSync::applied);
		release(meters, "ignored", "Peers' releases for an instance or service unknown here", ReplicaSync::ignored);
		FunctionCounter.builder("dualmap.replicas.publish.failures", this.sync, ReplicaSync::failedPublications)
			.description("Publications to one peer that failed (error status, I/O error or timeout)")
			.register(meters);
		FunctionCounter.builder("dualmap.replicas.refused.batches", this.sync, ReplicaSync::refusedBatches)
			.description("Peers' batches refused because they hash prompts differently")
			.register(meters);
		Gauge.builder("dualmap.replicas.buffered", this.sync, ReplicaSync::buffered)
			.description("Releases waiting to be published")
			.register(meters);
		Gauge.builder("dualmap.replicas.peers", this.publisher, p -> p.peers().size())
			.description("Replicas the next publication goes to")
			.register(meters);
		Gauge.builder("dualmap.replicas.load.peers", this.sync, ReplicaSync::loadPeers)
			.description("Peers whose published load counts here now (load sharing)")
			.register(meters);
	}

	private void release(MeterRegistry meters, String outcome, String description,
			java.util.function.ToDoubleFunction<ReplicaSync> count) {
		FunctionCounter.builder("dualmap.replicas.releases", this.sync, count)
			.tag("outcome", outcome)
			.description(description)
			.register(meters);
	}

}

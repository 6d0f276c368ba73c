package io.github.dualmap.actuate;

import java.net.URI;
import java.time.Duration;
import java.util.List;

import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.replica.ReplicaPeers;
import io.github.dualmap.replica.ReleaseBatch;
import io.github.dualmap.replica.ReplicaPublisher;
import io.github.dualmap.replica.ReplicaSync;
import org.junit.jupiter.api.Test;

import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/** The endpoint's replica-sync view and its warning when sync has nobody to talk to. */
class DualMapEndpointReplicasTests {

	private final DualMapRegistry registry = DualMapRegistry.builder().services("llm").clock(() -> 1L).build();

	private final ReplicaSync sync = new ReplicaSync(this.registry, "h", 16);

	private ReplicaPublisher publisher(List<URI> peers) {
		return new ReplicaPublisher(this.sync, new ReplicaPeers(peers, null, null), WebClient.create(),
				"/dualmap/replicas/releases", "t", Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1),
				10, 10);
	}

	private static boolean warnsOfNoPeer(DualMapDescriptor d) {
		return d.warnings().stream().anyMatch(w -> w.startsWith("replica sync is on but has no peer"));
	}

	@Test
	void replicaSyncWithoutPeersIsAWarningAndWithPeersItIsShown() {
		DualMapDescriptor lonely = new DualMapEndpoint(this.registry, this.sync, publisher(List.of())).dualMap();
		assertThat(warnsOfNoPeer(lonely)).isTrue();
		assertThat(lonely.replicas().replica()).isEqualTo(this.sync.replicaId());

		DualMapDescriptor paired = new DualMapEndpoint(this.registry, this.sync,
				publisher(List.of(URI.create("http://gateway-1:8080"))))
			.dualMap();
		assertThat(warnsOfNoPeer(paired)).isFalse();
		assertThat(paired.replicas().peers()).containsExactly("http://gateway-1:8080");

		assertThat(paired.replicas().shareLoad()).isFalse();
		assertThat(paired.replicas().loadPeers()).isZero();

		DualMapDescriptor off = new DualMapEndpoint(this.registry).dualMap();
		assertThat(off.replicas()).isNull();
		assertThat(warnsOfNoPeer(off)).isFalse();
	}

	@Test
	void aPeerThatSendsNoLoadWhileThisReplicaSharesItIsAWarning() {
		this.sync.shareLoad(Duration.ofSeconds(1));
		ReplicaPublisher publisher = publisher(List.of(URI.create("http://gateway-1:8080")));
		assertThat(new DualMapEndpoint(this.registry, this.sync, publisher).dualMap().warnings())
			.noneMatch(w -> w.startsWith("replica"));
		this.sync.apply(
				new ReleaseBatch("gateway-1-id", "h", List.of(new ReleaseBatch.Release("llm", "a", new long[] { 1 }))));
		DualMapDescriptor d = new DualMapEndpoint(this.registry, this.sync, publisher).dualMap();
		assertThat(d.warnings()).filteredOn(w -> w.startsWith("replica"))
			.singleElement()
			.asString()
			.startsWith("replica gateway-1-id publishes releases without its load");
		assertThat(d.replicas().shareLoad()).isTrue();
	}

}

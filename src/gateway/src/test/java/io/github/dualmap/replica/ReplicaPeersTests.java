package io.github.dualmap.replica;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** The peer list: configured, discovered, without this replica, robust to discovery. */
class ReplicaPeersTests {

	private final AtomicReference<Flux<ServiceInstance>> answer = new AtomicReference<>();

	private final ReactiveDiscoveryClient discovery = new ReactiveDiscoveryClient() {

		@Override
		public String description() {
			return "test";
		}

		@Override
		public Flux<ServiceInstance> getInstances(String serviceId) {
			return ReplicaPeersTests.this.answer.get();
		}

		@Override
		public Flux<String> getServices() {
			return Flux.just("gw");
		}

	};

	private static ServiceInstance gateway(int port) {
		return new DefaultServiceInstance("gw-" + port, "gw", "127.0.0.1", port, false, Map.of());
	}

	@Test
	void configuredAndDiscoveredPeersLessThisReplicaAndTheLastListKeptWhenDiscoveryFailsOrHangs() {
		URI configured = URI.create("http://gateway-0:8080");
		ReplicaPeers peers = new ReplicaPeers(List.of(configured), "gw", this.discovery);
		this.answer.set(Flux.just(gateway(8081), gateway(8082)));
		peers.refresh(Duration.ofSeconds(1)).block(Duration.ofSeconds(5));
		assertThat(peers.current()).containsExactly(configured, URI.create("http://127.0.0.1:8081"),
				URI.create("http://127.0.0.1:8082"));
		peers.markSelf(URI.create("http://127.0.0.1:8081"));
		assertThat(peers.current()).containsExactly(configured, URI.create("http://127.0.0.1:8082"));
		// Failing or hanging discovery keeps what was known, and the refresh ends.
		this.answer.set(Flux.error(new IllegalStateException("registry down")));
		peers.refresh(Duration.ofSeconds(1)).block(Duration.ofSeconds(5));
		this.answer.set(Flux.never());
		peers.refresh(Duration.ofMillis(100)).block(Duration.ofSeconds(5));
		assertThat(peers.current()).containsExactly(configured, URI.create("http://127.0.0.1:8082"));
	}

	@Test
	void aServiceIdNeedsADiscoveryClient() {
		assertThatIllegalArgumentException().isThrownBy(() -> new ReplicaPeers(List.of(), "gw", null))
			.withMessageContaining("needs a discovery client");
		assertThat(new ReplicaPeers(List.of(), null, null).refresh(Duration.ofSeconds(1)).block(Duration.ofSeconds(1)))
			.isNull();
	}

}

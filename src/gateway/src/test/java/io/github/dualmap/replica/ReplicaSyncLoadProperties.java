package io.github.dualmap.replica;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dualmap.core.InstanceState;
import io.github.dualmap.gateway.DualMapRegistry;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

import org.springframework.cloud.client.DefaultServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whatever peers publish, in whatever order, and however time passes: every instance's
 * peer load is the sum of the last publication of each peer heard from within the TTL.
 */
class ReplicaSyncLoadProperties {

	private static final List<String> PEERS = List.of("p0", "p1", "p2", "me");

	private static final List<String> INSTANCES = List.of("a", "b", "c", "unknown");

	@Property(tries = 300)
	void peerLoadIsAlwaysTheSumOfEachLivePeersLastPublication(
			@ForAll @Size(max = 80) List<@IntRange(min = 0, max = 99_999) Integer> actions) {
		DualMapRegistry registry = DualMapRegistry.builder().services("llm").clock(() -> 1L).build();
		registry.service("llm")
			.updateMembership(List.of(new DefaultServiceInstance("a", "llm", "10.0.0.1", 8000, false, Map.of()),
					new DefaultServiceInstance("b", "llm", "10.0.0.2", 8000, false, Map.of()),
					new DefaultServiceInstance("c", "llm", "10.0.0.3", 8000, false, Map.of())));
		AtomicLong now = new AtomicLong();
		long ttl = Duration.ofSeconds(1).toNanos();
		ReplicaSync sync = new ReplicaSync(registry, "me", "h", 16, now::get).shareLoad(Duration.ofNanos(ttl));
		// The model: each peer's last load and when it arrived.
		Map<String, List<ReleaseBatch.Load>> last = new HashMap<>();
		Map<String, Long> at = new HashMap<>();
		for (int action : actions) {
			int kind = action % 4;
			if (kind == 0) {
				now.addAndGet((action / 4 % 600) * 1_000_000L);
			}
			else if (kind == 1) {
				sync.expirePeerLoads();
				long t = now.get();
				at.entrySet().removeIf(e -> t - e.getValue() >= ttl);
				last.keySet().retainAll(at.keySet());
			}
			else {
				String peer = PEERS.get(action / 4 % PEERS.size());
				List<ReleaseBatch.Load> load = new ArrayList<>();
				int seed = action / 16;
				for (int i = 0; i < INSTANCES.size(); i++) {
					if ((seed >> i & 1) == 1) {
						load.add(new ReleaseBatch.Load("llm", INSTANCES.get(i), seed % 7, seed % 1000, seed % 333));
					}
				}
				sync.apply(new ReleaseBatch(peer, "h", List.of(), load));
				if (!peer.equals("me")) {
					last.put(peer, load);
					at.put(peer, now.get());
				}
			}
			for (String id : List.of("a", "b", "c")) {
				long requests = 0;
				long prefill = 0;
				long queued = 0;
				for (List<ReleaseBatch.Load> load : last.values()) {
					for (ReleaseBatch.Load l : load) {
						if (l.instance().equals(id)) {
							requests += l.prefillRequests();
							prefill += l.prefillTokens();
							queued += l.queuedTokens();
						}
					}
				}
				InstanceState s = registry.service("llm").instancePool().instance(id);
				assertThat(s.peerPrefillRequests()).as(id).isEqualTo(requests);
				assertThat(s.peerPrefillTokens()).as(id).isEqualTo(prefill);
				assertThat(s.peerQueuedTokens()).as(id).isEqualTo(queued);
			}
			assertThat(sync.loadPeers()).isEqualTo(last.size());
		}
	}

}

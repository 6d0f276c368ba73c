package io.github.dualmap.gateway;

import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dualmap.core.Candidates;
import io.github.dualmap.core.Decision;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.core.Reason;
import io.github.dualmap.core.RingMember;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.RoutingRequest;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Everything the gateway keeps for one service id: the core {@link InstancePool} and
 * {@link RoutingPolicy}, the discovered {@link ServiceInstance}s by instance id, the
 * per-instance breakers and scrape failure counts.
 */
public final class ServicePool {

	private static final Log logger = LogFactory.getLog(ServicePool.class);

	private final String serviceId;

	private final InstancePool pool;

	private final RoutingPolicy policy;

	private final InstanceBreakers breakers;

	private final String weightMetadataKey;

	private final List<DualMapListener> listeners;

	private volatile Membership membership = new Membership(Set.of(), Map.of());

	private final Map<String, AtomicLong> scrapeFailures = new ConcurrentHashMap<>();

	ServicePool(String serviceId, InstancePool pool, RoutingPolicy policy, InstanceBreakers breakers,
			String weightMetadataKey, List<DualMapListener> listeners) {
		this.serviceId = serviceId;
		this.pool = pool;
		this.policy = policy;
		this.breakers = breakers;
		this.weightMetadataKey = weightMetadataKey;
		this.listeners = listeners;
	}

	/** The id of an instance: its discovery instance id, else {@code host:port}. */
	public static String instanceId(ServiceInstance instance) {
		String id = instance.getInstanceId();
		return id != null && !id.isBlank() ? id : instance.getHost() + ":" + instance.getPort();
	}

	/**
	 * Brings the pool's membership in line with what discovery reports. Cheap when
	 * nothing changed (the common case: it runs on every request).
	 * @return whether the membership changed
	 */
	public boolean updateMembership(List<ServiceInstance> instances) {
		Set<Member> members = new HashSet<>();
		Map<String, ServiceInstance> byId = new LinkedHashMap<>();
		for (ServiceInstance i : instances) {
			String id = instanceId(i);
			if (byId.putIfAbsent(id, i) == null) {
				members.add(new Member(id, weight(id, i), i.getUri()));
			}
		}
		if (members.equals(this.membership.members())) {
			return false;
		}
		synchronized (this) {
			if (members.equals(this.membership.members())) {
				return false;
			}
			this.pool.updateMembership(members.stream().map(m -> new RingMember(m.id(), m.weight())).toList());
			this.breakers.retain(byId.keySet());
			this.membership = new Membership(members, Map.copyOf(byId));
		}
		this.policy.onMembershipChanged(this.pool);
		List<ServiceInstance> current = List.copyOf(byId.values());
		for (DualMapListener l : this.listeners) {
			l.onMembershipChanged(this.serviceId, current);
		}
		return true;
	}

	private double weight(String id, ServiceInstance instance) {
		String raw = instance.getMetadata().get(this.weightMetadataKey);
		if (raw == null) {
			return 1.0;
		}
		try {
			double w = Double.parseDouble(raw.strip());
			if (w > 0 && Double.isFinite(w)) {
				return w;
			}
		}
		catch (NumberFormatException ex) {
			// Fall through to the warning below.
		}
		logger.warn("Instance '" + id + "' of service '" + this.serviceId + "' has metadata " + this.weightMetadataKey
				+ "='" + raw + "', which is not a positive number; using weight 1");
		return 1.0;
	}

	/**
	 * Chooses an instance for {@code request}, avoiding {@code excluded} and instances
	 * whose breaker refuses a call, and dispatches the request there.
	 * @return the attempt, or {@code null} when no instance can take the request
	 */
	public @Nullable RoutedAttempt choose(RoutingRequest request, Set<String> excluded) {
		Set<String> refused = new HashSet<>(excluded);
		Decision decision = this.policy.choose(request, this.pool);
		for (int tries = 0; tries <= this.pool.size() && decision != null; tries++) {
			String id = decision.instanceId();
			if (!refused.contains(id) && this.membership.byId().containsKey(id)) {
				CircuitBreaker breaker = this.breakers.breaker(id);
				if (breaker.tryAcquirePermission()) {
					InstancePool.Dispatch dispatch = this.pool.dispatch(request, decision);
					this.policy.onDispatched(request, decision, this.pool);
					for (DualMapListener l : this.listeners) {
						l.onDecision(this.serviceId, request, decision);
					}
					return new RoutedAttempt(this, request, decision, dispatch, breaker);
				}
			}
			refused.add(id);
			decision = alternative(request, refused);
		}
		return null;
	}

	/**
	 * The next choice once the policy's choice was refused: the key's other candidate,
	 * then the next accepting instance clockwise on the first ring; by load alone for a
	 * request without a prompt.
	 */
	private @Nullable Decision alternative(RoutingRequest request, Set<String> refused) {
		PromptBlocks blocks = request.blocks();
		if (blocks == null || this.pool.rings().isEmpty()) {
			InstanceState best = null;
			for (InstanceState s : this.pool.instances()) {
				if (usable(s.id(), refused)
						&& (best == null || this.pool.pendingTokens(s) < this.pool.pendingTokens(best))) {
					best = s;
				}
			}
			return best == null ? null : Decision.of(best.id(), Reason.FALLBACK, request);
		}
		long key = blocks.keyAt(this.pool.hotPrefixes().peekDepth(blocks));
		Candidates candidates = this.pool.rings().candidates(key);
		String id = usable(candidates.first(), refused) ? candidates.first() : usable(candidates.second(), refused)
				? candidates.second() : this.pool.rings().walk(0, key, i -> usable(i, refused));
		InstanceState s = id == null ? null : this.pool.instance(id);
		if (s == null) {
			return null;
		}
		int cached = blocks.tokensFor(s.shadow().peekMatchedBlocks(blocks.chain()));
		int uncached = blocks.promptTokens() - cached;
		return new Decision(s.id(), Reason.FALLBACK, cached, uncached, this.pool.estimateTtft(s, uncached));
	}

	private boolean usable(String id, Set<String> refused) {
		InstanceState s = this.pool.instance(id);
		return s != null && s.acceptsNewWork() && !refused.contains(id);
	}

	public String serviceId() {
		return this.serviceId;
	}

	public InstancePool pool() {
		return this.pool;
	}

	public RoutingPolicy policy() {
		return this.policy;
	}

	public InstanceBreakers breakers() {
		return this.breakers;
	}

	/** The discovered instance with {@code instanceId}, if it is a member. */
	public @Nullable ServiceInstance serviceInstance(String instanceId) {
		return this.membership.byId().get(instanceId);
	}

	/** The discovered instances, in discovery order. */
	public List<ServiceInstance> serviceInstances() {
		return new ArrayList<>(this.membership.byId().values());
	}

	/** Scrape failures of {@code instanceId} since it was first seen. */
	public long scrapeFailures(String instanceId) {
		AtomicLong n = this.scrapeFailures.get(instanceId);
		return n == null ? 0 : n.get();
	}

	/** Scrape failures per instance id. */
	public Map<String, Long> scrapeFailures() {
		Map<String, Long> out = new LinkedHashMap<>();
		this.scrapeFailures.forEach((id, n) -> out.put(id, n.get()));
		return out;
	}

	void countScrapeFailure(String instanceId) {
		this.scrapeFailures.computeIfAbsent(instanceId, id -> new AtomicLong()).incrementAndGet();
	}

	List<DualMapListener> listeners() {
		return this.listeners;
	}

	private record Member(String id, double weight, URI uri) {
	}

	private record Membership(Set<Member> members, Map<String, ServiceInstance> byId) {
	}

}

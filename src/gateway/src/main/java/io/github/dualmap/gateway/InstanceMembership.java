package io.github.dualmap.gateway;

import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;

import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.RingMember;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;

/**
 * The innermost step of a discovered instance list's way into a service (see
 * {@link EmptyListGrace}, which decorates it): compares each list with the last one,
 * cheaply since it comes with every request, and applies one that differs to the core
 * {@link InstancePool}'s rings, drops the per-instance state of departed instances and
 * tells the policy, the queues and the listeners. Keeps the discovered
 * {@link ServiceInstance}s by id for forwarding.
 *
 * <p>
 * Its monitor is the membership lock: the per-instance state that follows the membership
 * ({@link InstanceLiveness}, {@link InstanceBreakers}) changes under it.
 */
final class InstanceMembership {

	// The category operators know these lines under.
	private static final Log logger = LogFactory.getLog(ServicePool.class);

	private final String serviceId;

	private final InstancePool pool;

	private final String weightMetadataKey;

	private final Consumer<Set<String>> retain;

	private final Consumer<List<ServiceInstance>> tell;

	private volatile Membership membership = new Membership(Set.of(), Map.of());

	/**
	 * The instance objects of the last list {@link #update} saw, in order: a list of the
	 * same objects is the same membership (suppliers cache their lists), so the common
	 * case costs N reference comparisons instead of N ids, weights and URIs.
	 */
	private volatile List<ServiceInstance> lastSeen = List.of();

	/** Whether everyone {@link #settle} tells took the current membership. */
	private volatile boolean settled = true;

	/** The membership whose settling failure was logged: one warning per membership. */
	private volatile @Nullable Membership failedToSettle;

	/**
	 * @param retain called under the membership lock with the new members' ids, before
	 * the new membership is visible: drops the state of instances that left
	 * @param tell tells the policy, the queues and the listeners of the new membership;
	 * whatever it throws leaves the membership unsettled
	 */
	InstanceMembership(String serviceId, InstancePool pool, String weightMetadataKey, Consumer<Set<String>> retain,
			Consumer<List<ServiceInstance>> tell) {
		this.serviceId = serviceId;
		this.pool = pool;
		this.weightMetadataKey = weightMetadataKey;
		this.retain = retain;
		this.tell = tell;
	}

	/**
	 * Brings the membership in line with {@code instances}. Cheap when nothing changed.
	 * @return whether the membership changed
	 */
	boolean update(List<ServiceInstance> instances) {
		List<ServiceInstance> last = this.lastSeen;
		if (sameObjects(instances, last) || sameContent(instances, last)) {
			return false;
		}
		return apply(instances);
	}

	/** Whether the last list taken was empty, so another empty one changes nothing. */
	boolean lastListEmpty() {
		return this.lastSeen.isEmpty();
	}

	/** How many instances are members. */
	int size() {
		return this.membership.members().size();
	}

	/** The discovered instance with {@code instanceId}, if it is a member. */
	@Nullable ServiceInstance serviceInstance(String instanceId) {
		return this.membership.byId().get(instanceId);
	}

	/** The discovered instances, in discovery order. */
	List<ServiceInstance> serviceInstances() {
		return new ArrayList<>(this.membership.byId().values());
	}

	/**
	 * Whether a list of other objects describes the same instances, field by field (id,
	 * address, scheme and the whole metadata, whose keys the pool and scraping read) and
	 * without building anything: a supplier without a cache (or a discovery client that
	 * builds its instances on every call) returns equal instances in new objects, and
	 * building ids, weights and URIs for each of them on every request is what this
	 * avoids. The instance objects kept for forwarding stay the earlier, equal ones.
	 */
	private static boolean sameContent(List<ServiceInstance> a, List<ServiceInstance> b) {
		if (a.size() != b.size()) {
			return false;
		}
		for (int i = 0; i < a.size(); i++) {
			ServiceInstance x = a.get(i);
			ServiceInstance y = b.get(i);
			if (!Objects.equals(x.getInstanceId(), y.getInstanceId()) || !Objects.equals(x.getHost(), y.getHost())
					|| x.getPort() != y.getPort() || x.isSecure() != y.isSecure()
					|| !Objects.equals(x.getScheme(), y.getScheme()) || !InstanceMetadata.same(x, y)) {
				return false;
			}
		}
		return true;
	}

	private static boolean sameObjects(List<ServiceInstance> a, List<ServiceInstance> b) {
		if (a.size() != b.size()) {
			return false;
		}
		for (int i = 0; i < a.size(); i++) {
			if (a.get(i) != b.get(i)) {
				return false;
			}
		}
		return true;
	}

	private boolean apply(List<ServiceInstance> instances) {
		List<ServiceInstance> seen = List.copyOf(instances);
		Set<Member> members = new HashSet<>();
		Map<String, ServiceInstance> byId = new LinkedHashMap<>();
		for (ServiceInstance i : instances) {
			String id = ServicePool.instanceId(i);
			if (byId.putIfAbsent(id, i) == null) {
				members.add(new Member(id, weight(id, i), i.getUri(), InstanceMetadata.copy(i)));
			}
		}
		synchronized (this) {
			if (members.equals(this.membership.members())) {
				if (this.settled) {
					// With the membership it stands for, so a fast-path hit always means
					// the membership of exactly these objects.
					this.lastSeen = seen;
					return false;
				}
				// The same membership, whose hooks or listeners failed last time: again.
			}
			else {
				this.pool.updateMembership(members.stream().map(m -> new RingMember(m.id(), m.weight())).toList());
				this.retain.accept(byId.keySet());
				// Not Map.copyOf: its iteration order is not the discovery order.
				this.membership = new Membership(members, Collections.unmodifiableMap(byId));
				this.settled = false;
			}
		}
		if (settle(List.copyOf(byId.values()))) {
			this.lastSeen = seen;
		}
		return true;
	}

	/**
	 * Tells the policy, the queues and the listeners (scraping among them) of the current
	 * membership. A failure of any of them is logged (once per membership) and leaves the
	 * membership unsettled, so the next list, even an equal one, tells them again instead
	 * of taking the fast path: a scrape target or a re-placement is not lost for good to
	 * one failure, and the request that brought the list is not failed by it.
	 * @return whether every one of them took it
	 */
	private boolean settle(List<ServiceInstance> current) {
		try {
			this.tell.accept(current);
		}
		catch (RuntimeException ex) {
			Membership m = this.membership;
			if (this.failedToSettle != m) {
				this.failedToSettle = m;
				logger.warn("Applying the membership of " + this.serviceId + " (" + current.size()
						+ " instances) failed; it is applied again with the next instance list", ex);
			}
			return false;
		}
		this.settled = true;
		return true;
	}

	private double weight(String id, ServiceInstance instance) {
		String raw = InstanceMetadata.get(instance, this.weightMetadataKey);
		if (raw == null) {
			return 1.0;
		}
		try {
			double w = Double.parseDouble(raw.strip());
			if (w > RingMember.MAX_WEIGHT) {
				// Weights are relative: one far above the rest would take the rings' time
				// and memory for the build and leave the others almost nothing.
				logger.warn("Instance '" + id + "' of service '" + this.serviceId + "' has metadata "
						+ this.weightMetadataKey + "='" + raw + "', above the maximum weight "
						+ (int) RingMember.MAX_WEIGHT + "; using weight " + (int) RingMember.MAX_WEIGHT);
				return RingMember.MAX_WEIGHT;
			}
			if (w > 0) {
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
	 * What an instance is to the pool and its listeners: an edit of its metadata alone
	 * (the metrics path scraping reads) is a change too.
	 */
	private record Member(String id, double weight, URI uri, InstanceMetadata.Copy metadata) {
	}

	private record Membership(Set<Member> members, Map<String, ServiceInstance> byId) {
	}

}

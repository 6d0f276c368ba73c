package io.github.dualmap.actuate;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.github.dualmap.core.InstanceState;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.RequestBuffers;
import io.github.dualmap.gateway.ServicePool;
import io.github.dualmap.replica.ReplicaPublisher;
import io.github.dualmap.replica.ReplicaSync;
import io.github.dualmap.tenant.FairnessAccounts;
import io.github.dualmap.tenant.TokenBudgets;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * {@code /actuator/dualmap}: what the DualMap scheduler sees and does, per routed service
 * and instance, and draining. Reads are open by default; the drain operation needs
 * {@code management.endpoint.dualmap.access=unrestricted}.
 * <ul>
 * <li>{@code GET /actuator/dualmap}: everything ({@link DualMapDescriptor}), replica sync
 * included when it is on, and each tenant's budgets and usage when
 * {@code dualmap.tenants.enabled} is on</li>
 * <li>{@code GET /actuator/dualmap/{service}}: one pool</li>
 * <li>{@code GET /actuator/dualmap/{service}/{instance}}: one instance</li>
 * <li>{@code POST /actuator/dualmap/{service}/{instance}} with {@code {"draining":
 * true|false}}: drain or undrain it</li>
 * </ul>
 */
@Endpoint(id = DualMapEndpoint.ID, defaultAccess = Access.READ_ONLY)
public class DualMapEndpoint {

	/** The endpoint's id, its path under the actuator base path. */
	public static final String ID = "dualmap";

	private final DualMapRegistry registry;

	private final @Nullable ReplicaSync replicaSync;

	private final @Nullable ReplicaPublisher replicaPublisher;

	private final @Nullable RequestBuffers buffers;

	private final @Nullable TokenBudgets budgets;

	private final @Nullable FairnessAccounts fairness;

	public DualMapEndpoint(DualMapRegistry registry) {
		this(registry, null, null);
	}

	/** With the replica sync view, when replica sync is on. */
	public DualMapEndpoint(DualMapRegistry registry, @Nullable ReplicaSync replicaSync,
			@Nullable ReplicaPublisher replicaPublisher) {
		this(registry, replicaSync, replicaPublisher, null);
	}

	/** With the replica sync view and the request body budget, where they exist. */
	public DualMapEndpoint(DualMapRegistry registry, @Nullable ReplicaSync replicaSync,
			@Nullable ReplicaPublisher replicaPublisher, @Nullable RequestBuffers buffers) {
		this(registry, replicaSync, replicaPublisher, buffers, null);
	}

	/** With the tenants' budgets and usage too, when tenants are on. */
	public DualMapEndpoint(DualMapRegistry registry, @Nullable ReplicaSync replicaSync,
			@Nullable ReplicaPublisher replicaPublisher, @Nullable RequestBuffers buffers,
			@Nullable TokenBudgets budgets) {
		this(registry, replicaSync, replicaPublisher, buffers, budgets, null);
	}

	/**
	 * With the tenants' budgets and usage too, when tenants are on, and whether each
	 * pool's fairness account is shared with the other replicas.
	 */
	public DualMapEndpoint(DualMapRegistry registry, @Nullable ReplicaSync replicaSync,
			@Nullable ReplicaPublisher replicaPublisher, @Nullable RequestBuffers buffers,
			@Nullable TokenBudgets budgets, @Nullable FairnessAccounts fairness) {
		this.fairness = fairness;
		this.budgets = budgets;
		this.buffers = buffers;
		this.registry = registry;
		this.replicaSync = replicaSync;
		this.replicaPublisher = replicaPublisher;
	}

	/** The whole view: policy, settings, every pool and every warning. */
	@ReadOperation
	public DualMapDescriptor dualMap() {
		Map<String, DualMapDescriptor.Pool> pools = new TreeMap<>();
		List<String> warnings = new ArrayList<>();
		for (ServicePool service : this.registry.services().values()) {
			pools.put(service.serviceId(), PoolInspection.inspect(service));
		}
		pools.values().forEach(p -> warnings.addAll(p.warnings()));
		DualMapDescriptor.Replicas replicas = this.replicaSync == null || this.replicaPublisher == null ? null
				: DualMapDescriptor.Replicas.of(this.replicaSync, this.replicaPublisher);
		if (replicas != null && replicas.peers().isEmpty()) {
			warnings.add("replica sync is on but has no peer to publish to (dualmap.replicas.peers, "
					+ "or dualmap.replicas.service-id listing no other replica)");
		}
		List<String> withoutLoad = this.replicaSync == null ? List.of() : this.replicaSync.peersWithoutLoad();
		if (!withoutLoad.isEmpty()) {
			boolean one = withoutLoad.size() == 1;
			// The ids are the peers' own: a few name them, the count says how many more.
			String named = String.join(", ", withoutLoad.subList(0, Math.min(8, withoutLoad.size())))
					+ (withoutLoad.size() > 8 ? " and " + (withoutLoad.size() - 8) + " more" : "");
			warnings.add((one ? "replica " : "replicas ") + named
					+ (one ? " publishes releases without its load" : " publish releases without their load")
					+ " (dualmap.replicas.share-load=false there, or a build before load sharing): "
					+ (one ? "its" : "their") + " requests do not count in this replica's release limits, so "
					+ "together the replicas may send an instance more than dualmap.dispatch.max-prefill-*");
		}
		return new DualMapDescriptor(this.registry.policyName(), this.registry.queueSettings().mode().value(),
				DualMapDescriptor.Settings.of(this.registry.settings()),
				DualMapDescriptor.Dispatch.of(this.registry.queueSettings()), pools, warnings, replicas,
				this.buffers == null ? null : DualMapDescriptor.Buffers.of(this.buffers), this.budgets == null ? null
						: DualMapDescriptor.Tenants.of(this.budgets, this.registry.services().values(), this.fairness));
	}

	/** One pool; {@code null} (404) when DualMap does not route {@code service}. */
	@ReadOperation
	public DualMapDescriptor.@Nullable Pool pool(@Selector String service) {
		ServicePool pool = this.registry.service(service);
		return pool == null ? null : PoolInspection.inspect(pool);
	}

	/** One instance; {@code null} (404) when it is not a member of {@code service}. */
	@ReadOperation
	public DualMapDescriptor.@Nullable Instance instance(@Selector String service, @Selector String instance) {
		ServicePool pool = this.registry.service(service);
		InstanceState state = pool == null ? null : pool.instancePool().instance(instance);
		return state == null ? null : PoolInspection.instance(pool, state);
	}

	/**
	 * Drains ({@code draining = true}) or undrains an instance of one service, through
	 * {@link ServicePool#drain} and {@link ServicePool#undrain}. A draining instance gets
	 * no new requests and the requests queued for it move to their other candidate before
	 * this returns; those in flight finish normally, and the returned state's
	 * {@code idle} turns true once none is left (poll the read operation to wait for it).
	 * Draining is router-local state: a membership change that removes the instance
	 * forgets it.
	 * @throws InvalidEndpointRequestException (400) naming the unknown service or
	 * instance
	 */
	@WriteOperation
	public DualMapDescriptor.Instance drain(@Selector String service, @Selector String instance, boolean draining) {
		ServicePool pool = this.registry.service(service);
		if (pool == null) {
			throw invalid("DualMap routes no service '" + service + "'; routed services: "
					+ new TreeMap<>(this.registry.services()).keySet());
		}
		InstanceState state = pool.instancePool().instance(instance);
		if (state == null) {
			throw invalid("service '" + service + "' has no instance '" + instance + "'; its instances: "
					+ pool.instancePool().instances().stream().map(InstanceState::id).toList());
		}
		// Through the pool, not the state's flag: the pool also settles its queues, so
		// what was queued for a drained instance moves now instead of on the next event.
		if (draining) {
			pool.drain(instance);
		}
		else {
			pool.undrain(instance);
		}
		return PoolInspection.instance(pool, state);
	}

	/** Whether DualMap routes {@code service}. */
	boolean isRouted(String service) {
		return this.registry.service(service) != null;
	}

	// The reason is what the web layer answers with (shown when
	// spring.web.error.include-message allows it), so it carries the whole message.
	private static InvalidEndpointRequestException invalid(String message) {
		return new InvalidEndpointRequestException(message, message);
	}

}

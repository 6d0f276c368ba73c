package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.dualmap.core.DispatchQueues;
import io.github.dualmap.core.InstancePool;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.Rejection;
import io.github.dualmap.core.RoutingPolicy;
import io.github.dualmap.core.RoutingRequest;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Everything the gateway keeps for one service id, and the coordinator of its parts: the
 * core {@link InstancePool}, {@link RoutingPolicy} and {@link DispatchQueues}; discovered
 * lists enter through {@link EmptyListGrace} into {@link InstanceMembership}, requests
 * through a {@link Submission} each; {@link InstanceBreakers} and
 * {@link InstanceLiveness} keep instances that fail or fall silent out, and
 * {@link ServiceCounters} counts rejections and retries; {@link FallbackChoice} places a
 * request again off the instances it was refused by. Operators drain and undrain
 * instances here.
 */
public final class ServicePool {

	private final String serviceId;

	private final InstancePool pool;

	private final RoutingPolicy policy;

	private final FallbackChoice fallback;

	private final DispatchQueues queues;

	private final InstanceBreakers breakers;

	private final List<DualMapListener> listeners;

	private final InstanceMembership membership;

	private final EmptyListGrace grace;

	private final InstanceLiveness liveness;

	private final ServiceCounters counters = new ServiceCounters();

	ServicePool(String serviceId, InstancePool pool, RoutingPolicy policy, QueueSettings queueSettings,
			InstanceBreakers breakers, String weightMetadataKey, List<DualMapListener> listeners) {
		this.serviceId = serviceId;
		this.pool = pool;
		this.policy = policy;
		this.fallback = new FallbackChoice(pool);
		this.queues = new DispatchQueues(pool, new PinAndRetryPolicy(policy, this.fallback::choose), queueSettings);
		this.breakers = breakers;
		this.listeners = listeners;
		this.membership = new InstanceMembership(serviceId, pool, weightMetadataKey, this::retain,
				this::tellMembership);
		this.grace = new EmptyListGrace(serviceId, pool.clock(), this.membership);
		this.liveness = new InstanceLiveness(serviceId, pool, breakers, this.membership);
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
		return this.grace.update(instances);
	}

	/**
	 * How long an empty instance list is taken for a failed discovery read, and the last
	 * membership kept: Spring's discovery supplier answers an error or a timeout with an
	 * empty list, which would otherwise reject every queued request and forget every
	 * instance's state (drains, requests in flight, breakers). Zero applies an empty list
	 * at once.
	 */
	public void emptyListGrace(Duration grace) {
		this.grace.grace(grace);
	}

	/**
	 * How long discovery has listed no instance while the pool keeps its last known ones
	 * ({@link #emptyListGrace}), or {@code null} when it is not doing so.
	 */
	public @Nullable Duration keptThroughEmptyLists() {
		return this.grace.keptThroughEmptyLists();
	}

	/**
	 * The state of instances that left is dropped, under the membership lock, before the
	 * new membership is visible.
	 */
	private void retain(Set<String> members) {
		this.breakers.retain(members);
		this.liveness.retain(members);
	}

	/** The new membership goes to the policy, the queues and the listeners. */
	private void tellMembership(List<ServiceInstance> current) {
		this.policy.onMembershipChanged(this.pool);
		// Requests queued for an instance that left go to their other home now.
		this.queues.onMembershipChanged();
		for (DualMapListener l : this.listeners) {
			l.onMembershipChanged(this.serviceId, current);
		}
	}

	/**
	 * Places {@code request} through the dispatch queues: the returned {@code Mono} emits
	 * the attempt when the request is released to its instance (at once in pass-through
	 * mode or when the instance has prefill capacity), or fails with a
	 * {@link DispatchRejectedException}. Cancelling the subscription while the request is
	 * queued takes it out of the queue at once; a release that races with the cancel is
	 * ended as cancelled, so nothing leaks. The request carries its constraints
	 * ({@link RoutingRequest#placed}): the instances it must not go to (they failed it),
	 * the instance holding the stored response it continues (it goes there while that
	 * instance accepts work and has not failed for it), and whether it was placed before
	 * (a retry: placed on its candidates without being counted again in the hot-prefix
	 * table).
	 * @param streaming whether the response streams (its first byte then ends prefill;
	 * otherwise the end of prefill is estimated)
	 */
	public Mono<RoutedAttempt> submit(RoutingRequest request, boolean streaming) {
		return submit(request, streaming, 0);
	}

	/**
	 * As {@link #submit(RoutingRequest, boolean)}, for a try after an earlier one failed
	 * (its instance refused the connection or answered a retried status) that had already
	 * waited {@code queuedNanos} in the queues: its wait bound, aging and place in
	 * arrival order count that wait, as a request placed again after a breaker refused
	 * its release does, so a retry neither waits a whole bound again nor goes behind
	 * requests that arrived after it. 0: a first try.
	 */
	public Mono<RoutedAttempt> submit(RoutingRequest request, boolean streaming, long queuedNanos) {
		return Mono.create(sink -> new Submission(this, sink, request, streaming,
				queuedNanos > 0 ? this.pool.now() - queuedNanos : Long.MAX_VALUE)
			.start());
	}

	/**
	 * Whether an instance outside {@code refused} accepts work: where a retry could go.
	 */
	boolean acceptsAnyBut(Set<String> refused) {
		return this.fallback.acceptsAnyBut(refused);
	}

	/**
	 * Stops new assignments to {@code instanceId}: policies skip it and its queued
	 * requests move to their other candidate now; requests already sent finish.
	 * @return whether the instance is a member of this pool
	 */
	public boolean drain(String instanceId) {
		return setDraining(instanceId, true);
	}

	/**
	 * Lets {@code instanceId} take new requests again.
	 * @return whether the instance is a member of this pool
	 */
	public boolean undrain(String instanceId) {
		return setDraining(instanceId, false);
	}

	private boolean setDraining(String instanceId, boolean draining) {
		InstanceState s = this.pool.instance(instanceId);
		if (s == null) {
			return false;
		}
		s.draining(draining);
		// A tick settles the queues: moves a draining instance's queue away, or releases
		// what an undrained one may take.
		this.queues.tick(this.pool.now());
		return true;
	}

	/** Whether {@code instanceId} is draining; false for a non-member. */
	public boolean isDraining(String instanceId) {
		InstanceState s = this.pool.instance(instanceId);
		return s != null && s.draining();
	}

	/**
	 * Whether {@code instanceId} has nothing queued and nothing in flight, so a drained
	 * instance may be removed; true for a non-member.
	 */
	public boolean isIdle(String instanceId) {
		return this.queues.isIdle(instanceId);
	}

	/** The late-binding queues of this pool (also used in pass-through mode). */
	public DispatchQueues queues() {
		return this.queues;
	}

	public String serviceId() {
		return this.serviceId;
	}

	/** The core pool of this service's instances: their state, rings and estimator. */
	public InstancePool instancePool() {
		return this.pool;
	}

	/**
	 * The name of the routing policy this pool runs (its {@link RoutingPolicy#name()}).
	 */
	public String policyName() {
		return this.policy.name();
	}

	public RoutingPolicy policy() {
		return this.policy;
	}

	public InstanceBreakers breakers() {
		return this.breakers;
	}

	/** The discovered instance with {@code instanceId}, if it is a member. */
	public @Nullable ServiceInstance serviceInstance(String instanceId) {
		return this.membership.serviceInstance(instanceId);
	}

	/** The discovered instances, in discovery order. */
	public List<ServiceInstance> serviceInstances() {
		return this.membership.serviceInstances();
	}

	/**
	 * Scrape failures of {@code instanceId} since it last joined the pool; 0 for a
	 * non-member.
	 */
	public long scrapeFailures(String instanceId) {
		return this.liveness.scrapeFailures(instanceId);
	}

	/** Scrape failures per instance id. */
	public Map<String, Long> scrapeFailures() {
		return this.liveness.scrapeFailures();
	}

	/**
	 * {@code instanceId} answered (a scrape, even a failed one, or a response's first
	 * byte): it is responsive again if it was taken out as unresponsive.
	 */
	void heard(String instanceId) {
		this.liveness.heard(instanceId);
	}

	/**
	 * A scrape of {@code instanceId} got no answer: when nothing has come from it for
	 * {@code silenceNanos} (since it joined, if it never answered), it is taken out as
	 * unresponsive until it answers.
	 * @param why the scrape's failure, for the log
	 */
	void unanswered(String instanceId, long silenceNanos, Throwable why) {
		this.liveness.unanswered(instanceId, silenceNanos, why);
	}

	/** Tries sent to an instance that have not ended. */
	int triesInFlight() {
		return this.liveness.triesInFlight();
	}

	/** A try ended: it no longer waits on its instance. */
	void ended(RoutedAttempt attempt) {
		this.liveness.ended(attempt);
	}

	void countScrapeFailure(String instanceId) {
		this.liveness.countScrapeFailure(instanceId);
	}

	/**
	 * Requests of this pool answered with {@code status} instead of being sent: the
	 * dispatch queues' rejections plus requests no instance accepted after every
	 * candidate refused them.
	 * @param status {@link Rejection#TOO_MANY_REQUESTS} or
	 * {@link Rejection#SERVICE_UNAVAILABLE}
	 */
	public long rejections(int status) {
		return this.counters.rejections(status);
	}

	/** Requests of this pool sent once more to another instance, for {@code cause}. */
	public long retries(RetryCause cause) {
		return this.counters.retries(cause);
	}

	void countRetry(RetryCause cause) {
		this.counters.countRetry(cause);
	}

	List<DualMapListener> listeners() {
		return this.listeners;
	}

	InstanceLiveness liveness() {
		return this.liveness;
	}

	ServiceCounters counters() {
		return this.counters;
	}

}

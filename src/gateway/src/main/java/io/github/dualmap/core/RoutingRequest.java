package io.github.dualmap.core;

import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * What a policy knows about one request when it chooses an instance.
 *
 * @param id unique id of the request (for accounting; never prompt-derived)
 * @param blocks the prompt's block chain, or {@code null} when the body could not be
 * parsed (then the request is routed by load alone)
 * @param sloTtftNanos the request's time-to-first-token objective
 * @param arrivalNanos when the request arrived, on the scheduler's clock
 * @param maxWaitNanos how long it may wait in the dispatch queues (its SLO class's
 * bound); 0 for the queues' own {@link QueueSettings#maxWaitNanos()}
 * @param tenant who it is served for, as the queues share the pool between tenants;
 * {@code null}: {@link Tenant#DEFAULT}
 * @param maxOutputTokens its cap on output tokens ({@code max_tokens}), 0 when unknown:
 * bounds the output the queues charge its tenant at release
 * @param classPriority the priority band its SLO class sets, {@code null} when its class
 * sets none: then its tenant's band holds ({@link #priority()})
 * @param avoid instances it must not go to (it failed there, or they refused it): while
 * it waits it is never placed, moved or pulled there
 * @param pinnedInstance the instance holding the stored response it continues
 * ({@code previous_response_id}): it goes there while that instance accepts work and is
 * not in {@code avoid} ({@link Reason#PINNED}); {@code null}: the policy decides
 * @param retry it was placed before (a try after a failed one): placed on its candidates
 * without being counted again in the hot-prefix table
 */
public record RoutingRequest(String id, @Nullable PromptBlocks blocks, long sloTtftNanos, long arrivalNanos,
		long maxWaitNanos, @Nullable Tenant tenant, int maxOutputTokens, @Nullable Integer classPriority,
		Set<String> avoid, @Nullable String pinnedInstance, boolean retry) {

	public RoutingRequest {
		if (maxWaitNanos < 0) {
			throw new IllegalArgumentException("maxWaitNanos must be >= 0 but was " + maxWaitNanos);
		}
		if (maxOutputTokens < 0) {
			throw new IllegalArgumentException("maxOutputTokens must be >= 0 but was " + maxOutputTokens);
		}
		avoid = Set.copyOf(avoid);
	}

	/** A first placement, where the policy decides. */
	public RoutingRequest(String id, @Nullable PromptBlocks blocks, long sloTtftNanos, long arrivalNanos,
			long maxWaitNanos, @Nullable Tenant tenant, int maxOutputTokens, @Nullable Integer classPriority) {
		this(id, blocks, sloTtftNanos, arrivalNanos, maxWaitNanos, tenant, maxOutputTokens, classPriority, Set.of(),
				null, false);
	}

	/** A request of no particular tenant, in the band its SLO class sets (if any). */
	public RoutingRequest(String id, @Nullable PromptBlocks blocks, long sloTtftNanos, long arrivalNanos,
			long maxWaitNanos, @Nullable Integer classPriority) {
		this(id, blocks, sloTtftNanos, arrivalNanos, maxWaitNanos, null, 0, classPriority);
	}

	/** A request of no particular tenant. */
	public RoutingRequest(String id, @Nullable PromptBlocks blocks, long sloTtftNanos, long arrivalNanos,
			long maxWaitNanos) {
		this(id, blocks, sloTtftNanos, arrivalNanos, maxWaitNanos, null);
	}

	/** A request that may wait as long as the queues allow. */
	public RoutingRequest(String id, @Nullable PromptBlocks blocks, long sloTtftNanos, long arrivalNanos) {
		this(id, blocks, sloTtftNanos, arrivalNanos, 0);
	}

	/**
	 * This request served for {@code tenant}, with {@code maxOutputTokens} (0: unknown).
	 */
	public RoutingRequest withTenant(Tenant tenant, int maxOutputTokens) {
		return new RoutingRequest(id, blocks, sloTtftNanos, arrivalNanos, maxWaitNanos, tenant, maxOutputTokens,
				classPriority, avoid, pinnedInstance, retry);
	}

	/**
	 * This request in the priority band {@code classPriority} of its SLO class;
	 * {@code null}: its tenant's.
	 */
	public RoutingRequest withClassPriority(@Nullable Integer classPriority) {
		return new RoutingRequest(id, blocks, sloTtftNanos, arrivalNanos, maxWaitNanos, tenant, maxOutputTokens,
				classPriority, avoid, pinnedInstance, retry);
	}

	/**
	 * This request placed with these constraints: instances to avoid (copied: a live set
	 * may be passed), the instance a stored response pins it to ({@code null}: none), and
	 * whether it was placed before.
	 */
	public RoutingRequest placed(Set<String> avoid, @Nullable String pinnedInstance, boolean retry) {
		return new RoutingRequest(id, blocks, sloTtftNanos, arrivalNanos, maxWaitNanos, tenant, maxOutputTokens,
				classPriority, avoid, pinnedInstance, retry);
	}

	/**
	 * The instance this request is pinned to while it may go there: its pin, unless it
	 * must avoid that instance.
	 */
	public @Nullable String livePin() {
		return pinnedInstance != null && !avoid.contains(pinnedInstance) ? pinnedInstance : null;
	}

	/**
	 * Its priority band, higher first: its SLO class's when the class sets one, else its
	 * tenant's ({@link Tenant#priority()}).
	 */
	public int priority() {
		return classPriority != null ? classPriority : tenantOrDefault().priority();
	}

	/** Its tenant, {@link Tenant#DEFAULT} when it names none. */
	public Tenant tenantOrDefault() {
		return tenant == null ? Tenant.DEFAULT : tenant;
	}

	/** Estimated prompt tokens, 0 when unknown. */
	public int promptTokens() {
		return blocks == null ? 0 : blocks.promptTokens();
	}

}

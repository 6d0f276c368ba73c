package io.github.dualmap.gateway;

/**
 * Names of the exchange attributes through which the DualMap filters and load balancer
 * hand a request to one another. The load balancer sees them through
 * {@code RequestDataContext.getClientRequest().getAttributes()}.
 */
public final class DualMapExchangeAttributes {

	private static final String PREFIX = DualMapExchangeAttributes.class.getName() + ".";

	/** The {@link io.github.dualmap.core.RoutingRequest} built from the body. */
	public static final String ROUTING_REQUEST_ATTR = PREFIX + "routingRequest";

	/** The {@link io.github.dualmap.prompt.ParsedRequest} of the body. */
	public static final String PARSED_REQUEST_ATTR = PREFIX + "parsedRequest";

	/** The {@link RoutedAttempt} of the current try: decision, dispatch and breaker. */
	public static final String ATTEMPT_ATTR = PREFIX + "attempt";

	/**
	 * Nanoseconds the request has spent in the dispatch queues over its tries so far (a
	 * {@code Long}, {@link RoutedAttempt#queueWaitNanos()} of the latest): a try after a
	 * failure continues that wait instead of starting one over.
	 */
	public static final String QUEUE_WAIT_ATTR = PREFIX + "queueWait";

	/**
	 * A {@code Sinks.Empty<Void>} the current try's {@link RoutedAttempt} completes when
	 * the gateway stops waiting for its instance's answer
	 * ({@link RoutedAttempt#whenAbandoned}).
	 */
	public static final String ABANDONMENT_ATTR = PREFIX + "abandonment";

	/**
	 * A {@code Set<String>} of instance ids this request must not be sent to again (they
	 * failed to connect for it).
	 */
	public static final String EXCLUDED_INSTANCES_ATTR = PREFIX + "excludedInstances";

	/**
	 * Present once the load balancer placed the request: a later choice for the same
	 * exchange (retry) must not count the request again in the hot-prefix table.
	 */
	public static final String PLACED_ATTR = PREFIX + "placed";

	/**
	 * The id of the instance holding the stored response the request continues
	 * ({@code previous_response_id}), when this gateway saw that instance answer it.
	 */
	public static final String PINNED_INSTANCE_ATTR = PREFIX + "pinnedInstance";

	/**
	 * The SLO class of the request ({@code String}, see {@link SloResolver.Slo}), for
	 * attainment per class.
	 */
	public static final String SLO_CLASS_ATTR = PREFIX + "sloClass";

	/**
	 * The request body as sent ({@code byte[]}), when it was read before routing because
	 * a route matches on the request's model.
	 */
	public static final String REQUEST_BODY_ATTR = PREFIX + "requestBody";

	/**
	 * The decoded form ({@code byte[]}) of a compressed body ({@code gzip},
	 * {@code deflate}, {@code zstd}, {@code br}) the {@code Model} predicate read, until
	 * {@link PromptRoutingFilter} takes it to parse.
	 */
	public static final String DECODED_BODY_ATTR = PREFIX + "decodedBody";

	/**
	 * What the decoded form of a compressed body says of its completion cap
	 * ({@link io.github.dualmap.tenant.RequestTokens}), read by
	 * {@link PromptRoutingFilter} while it had it, for {@link TenantBudgetFilter}'s
	 * estimate.
	 */
	public static final String DECODED_TOKENS_ATTR = PREFIX + "decodedTokens";

	/**
	 * The decoded form ({@code byte[]}) of a compressed request body that streams a chat
	 * or text completion without asking for its usage, kept by
	 * {@link PromptRoutingFilter} (within the body limit) so that
	 * {@link TenantBudgetFilter} can send it, decoded, with
	 * {@code stream_options.include_usage}.
	 */
	public static final String DECODED_STREAM_BODY_ATTR = PREFIX + "decodedStreamBody";

	/**
	 * The request's {@code model} ({@code String}), when the body was read before routing
	 * and names one.
	 */
	public static final String REQUEST_MODEL_ATTR = PREFIX + "requestModel";

	/**
	 * Why the {@code Model} predicate could not read the body while the gateway chose a
	 * route ({@code ResponseStatusException}): over {@code dualmap.max-body-size} (the
	 * request gets 413) or beyond {@code dualmap.max-buffered-size} (503).
	 */
	public static final String BODY_REFUSED_ATTR = PREFIX + "bodyRefused";

	/**
	 * The request's id ({@code String}, see {@link RequestIdFilter}): the client's
	 * {@code x-request-id}, else one the gateway made.
	 */
	public static final String REQUEST_ID_ATTR = PREFIX + "requestId";

	/**
	 * The request's tenant ({@code String}, see {@link TenantBudgetFilter}), when
	 * {@code dualmap.tenants.enabled} is on.
	 */
	public static final String TENANT_ATTR = PREFIX + "tenant";

	/**
	 * The request's {@link TokenAccount}: its admission against its tenant's budgets and
	 * what is known of its usage, settled by {@link TokenUsageFilter} when it ends.
	 */
	public static final String TOKEN_ACCOUNT_ATTR = PREFIX + "tokenAccount";

	private DualMapExchangeAttributes() {
	}

}

package io.github.dualmap.gateway;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.prompt.InvalidRequestException;
import io.github.dualmap.prompt.ParsedRequest;
import io.github.dualmap.tenant.RequestTokens;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Sinks;

import org.springframework.web.server.ServerWebExchange;

/**
 * What the DualMap filters, predicate and load balancer know of one exchange, kept under
 * one exchange attribute ({@link #ATTRIBUTE}): one typed object instead of loose
 * attributes, so a reader sees in one place what travels with a request from the body
 * predicate to the instance's answer. The load balancer reaches it through
 * {@code RequestDataContext.getClientRequest().getAttributes()}, the exchange's own map.
 * <p>
 * An exchange's filters run one after another, but not always on one thread (a queued
 * request is released on the thread that freed room; an unresponsive instance abandons a
 * try from the scrape's), so every field is volatile and the two check-then-act steps
 * ({@link #markPlaced}, the {@code take} methods) are atomic.
 */
public final class DualMapExchange {

	/** The exchange attribute holding it. */
	public static final String ATTRIBUTE = DualMapExchange.class.getName();

	private volatile @Nullable String requestId;

	private volatile @Nullable String tenant;

	private volatile byte @Nullable [] requestBody;

	private volatile @Nullable String requestModel;

	private volatile @Nullable Throwable bodyRefused;

	private volatile @Nullable InvalidRequestException bodyUnreadable;

	private volatile byte @Nullable [] decodedBody;

	private volatile @Nullable RequestTokens decodedTokens;

	private volatile byte @Nullable [] decodedStreamBody;

	private volatile @Nullable ParsedRequest parsedRequest;

	private volatile @Nullable RoutingRequest routingRequest;

	private volatile @Nullable String sloClass;

	private volatile @Nullable String pinnedInstance;

	private volatile @Nullable TokenAccount tokenAccount;

	private final Set<String> excludedInstances = ConcurrentHashMap.newKeySet();

	private boolean placed;

	private volatile long queueWaitNanos;

	private volatile Sinks.@Nullable Empty<Void> abandonment;

	private volatile @Nullable RoutedAttempt attempt;

	/** The exchange's state, created on first use. */
	public static DualMapExchange of(ServerWebExchange exchange) {
		return in(exchange.getAttributes());
	}

	/**
	 * The state in an exchange's attribute map (the load balancer's view of the
	 * exchange), created on first use.
	 */
	public static DualMapExchange in(Map<String, Object> attributes) {
		return (DualMapExchange) attributes.computeIfAbsent(ATTRIBUTE, k -> new DualMapExchange());
	}

	/** The exchange's state if a DualMap filter or predicate created it, else null. */
	public static @Nullable DualMapExchange find(ServerWebExchange exchange) {
		return exchange.getAttribute(ATTRIBUTE);
	}

	/**
	 * The request's id (see {@link RequestIdFilter}): the client's {@code x-request-id},
	 * else one the gateway made.
	 */
	public @Nullable String requestId() {
		return this.requestId;
	}

	public void requestId(String requestId) {
		this.requestId = requestId;
	}

	/**
	 * The request's tenant (see {@link TenantBudgetFilter}), when
	 * {@code dualmap.tenants.enabled} is on.
	 */
	public @Nullable String tenant() {
		return this.tenant;
	}

	public void tenant(String tenant) {
		this.tenant = tenant;
	}

	/**
	 * The request body as sent, when the {@code Model} predicate read it before routing
	 * because a route matches on the request's model.
	 */
	public byte @Nullable [] requestBody() {
		return this.requestBody;
	}

	public void requestBody(byte[] body) {
		this.requestBody = body;
	}

	/**
	 * The request's {@code model}, when the body was read before routing and names one.
	 */
	public @Nullable String requestModel() {
		return this.requestModel;
	}

	public void requestModel(String model) {
		this.requestModel = model;
	}

	/**
	 * Why the {@code Model} predicate could not read the body while the gateway chose a
	 * route: over {@code dualmap.max-body-size} (413) or beyond
	 * {@code dualmap.max-buffered-size} (503).
	 */
	public @Nullable Throwable bodyRefused() {
		return this.bodyRefused;
	}

	public void bodyRefused(Throwable why) {
		this.bodyRefused = why;
	}

	/**
	 * Why the body the {@code Model} predicate read names no model because it cannot be
	 * read (not valid for its coding, not one JSON object: 400), or why it did not read
	 * it (a content type neither JSON nor multipart: 415): the answer when no route takes
	 * the request, instead of "no model".
	 */
	public @Nullable InvalidRequestException bodyUnreadable() {
		return this.bodyUnreadable;
	}

	public void bodyUnreadable(InvalidRequestException why) {
		this.bodyUnreadable = why;
	}

	/**
	 * Keeps the decoded form of a compressed body ({@code gzip}, {@code deflate},
	 * {@code zstd}, {@code br}) the {@code Model} predicate read, until
	 * {@link PromptRoutingFilter} takes it to parse.
	 */
	public void decodedBody(byte[] decoded) {
		this.decodedBody = decoded;
	}

	/** The decoded body the predicate kept, once: later calls return null. */
	public synchronized byte @Nullable [] takeDecodedBody() {
		byte[] taken = this.decodedBody;
		this.decodedBody = null;
		return taken;
	}

	/**
	 * What the decoded form of a compressed body says of its completion cap, read by
	 * {@link PromptRoutingFilter} while it had it, for {@link TenantBudgetFilter}'s
	 * estimate.
	 */
	public @Nullable RequestTokens decodedTokens() {
		return this.decodedTokens;
	}

	public void decodedTokens(RequestTokens tokens) {
		this.decodedTokens = tokens;
	}

	/**
	 * Keeps the decoded form of a compressed body that streams a chat or text completion
	 * without asking for its usage (within the body limit), so that
	 * {@link TenantBudgetFilter} can send it, decoded, with
	 * {@code stream_options.include_usage}.
	 */
	public void decodedStreamBody(byte[] decoded) {
		this.decodedStreamBody = decoded;
	}

	/** The decoded streaming body kept for the budget filter, once. */
	public synchronized byte @Nullable [] takeDecodedStreamBody() {
		byte[] taken = this.decodedStreamBody;
		this.decodedStreamBody = null;
		return taken;
	}

	/** The parsed body ({@link PromptRoutingFilter}). */
	public @Nullable ParsedRequest parsedRequest() {
		return this.parsedRequest;
	}

	public void parsedRequest(ParsedRequest parsed) {
		this.parsedRequest = parsed;
	}

	/**
	 * What the load balancer places: built from the body by {@link PromptRoutingFilter},
	 * given its tenant by {@link TenantBudgetFilter}. Null for a request no body filter
	 * saw, which is routed by load.
	 */
	public @Nullable RoutingRequest routingRequest() {
		return this.routingRequest;
	}

	public void routingRequest(RoutingRequest request) {
		this.routingRequest = request;
	}

	/**
	 * The request's SLO class (see {@link SloResolver.Slo}), for attainment per class.
	 */
	public @Nullable String sloClass() {
		return this.sloClass;
	}

	public void sloClass(String sloClass) {
		this.sloClass = sloClass;
	}

	/**
	 * The id of the instance holding the stored response the request continues
	 * ({@code previous_response_id}), when this gateway saw that instance answer it.
	 */
	public @Nullable String pinnedInstance() {
		return this.pinnedInstance;
	}

	public void pinnedInstance(String instanceId) {
		this.pinnedInstance = instanceId;
	}

	/**
	 * The request's admission against its tenant's budgets and what is known of its
	 * usage, settled by {@link TokenUsageFilter} when it ends.
	 */
	public @Nullable TokenAccount tokenAccount() {
		return this.tokenAccount;
	}

	public void tokenAccount(TokenAccount account) {
		this.tokenAccount = account;
	}

	/**
	 * The instances this request must not be sent to again (they failed to connect,
	 * stopped answering or refused it); a live, thread-safe set.
	 */
	public Set<String> excludedInstances() {
		return this.excludedInstances;
	}

	/**
	 * Records that the load balancer placed the request, and says whether it had already
	 * (a retry): a later choice for the same exchange must not count the request again in
	 * the hot-prefix table and continues the queue wait of the tries before it.
	 */
	public synchronized boolean markPlaced() {
		boolean before = this.placed;
		this.placed = true;
		return before;
	}

	/**
	 * Nanoseconds the request has spent in the dispatch queues over its tries so far
	 * ({@link RoutedAttempt#queueWaitNanos()} of the latest): a try after a failure
	 * continues that wait instead of starting one over.
	 */
	public long queueWaitNanos() {
		return this.queueWaitNanos;
	}

	public void queueWaitNanos(long nanos) {
		this.queueWaitNanos = nanos;
	}

	/**
	 * Completed by the current try's {@link RoutedAttempt} when the gateway stops waiting
	 * for its instance's answer ({@link RoutedAttempt#whenAbandoned}).
	 */
	public Sinks.@Nullable Empty<Void> abandonment() {
		return this.abandonment;
	}

	public void abandonment(Sinks.Empty<Void> abandonment) {
		this.abandonment = abandonment;
	}

	/**
	 * The current try: decision, dispatch and breaker; null before placement and after a
	 * failed try.
	 */
	public @Nullable RoutedAttempt attempt() {
		return this.attempt;
	}

	/** Sets the current try and returns the one it replaces. */
	public synchronized @Nullable RoutedAttempt attempt(RoutedAttempt attempt) {
		RoutedAttempt previous = this.attempt;
		this.attempt = attempt;
		return previous;
	}

	/** Ends the current try (it failed and the request goes to another instance). */
	public void clearAttempt() {
		this.attempt = null;
	}

}

package io.github.dualmap.tenant;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * One tenant as {@code /actuator/dualmap} shows it.
 *
 * @param weight its fair-queuing weight
 * @param priority its fair-queuing priority band
 * @param budgets its budgets, as this gateway last saw them, refilled to now (with a
 * shared store, other replicas' charges since then are not in them)
 * @param usage what its requests did since this gateway started
 * @param shares its share of each pool's recent service by service id, as this gateway's
 * dispatch queues released it, with the other replicas' service when the pool's fairness
 * account is shared through Redis (empty with fairness off or before it was served)
 */
public record TenantView(double weight, int priority, List<Budget> budgets, Counts usage, Map<String, Share> shares) {

	/** A view without shares. */
	public TenantView(double weight, int priority, List<Budget> budgets, Counts usage) {
		this(weight, priority, budgets, usage, Map.of());
	}

	/** This view with {@code shares}. */
	public TenantView withShares(Map<String, Share> shares) {
		return new TenantView(weight, priority, budgets, usage, Map.copyOf(shares));
	}

	/**
	 * A tenant's part of one pool's service over the dispatch queues' recent window
	 * ({@code dualmap.tenants.fairness}; one minute).
	 *
	 * @param servedTokens the service released for it in the window, in weighted tokens
	 * (uncached prompt tokens 1, cached ones 0.1, output tokens 2; output corrected to
	 * the actual count as requests end)
	 * @param share its served tokens over the pool's, in [0, 1]
	 * @param fairShare its weight over the summed weights of the tenants served or
	 * waiting in the window: its share while they all want more
	 * @param queued its requests waiting for the pool now
	 */
	public record Share(double servedTokens, double share, double fairShare, int queued) {

	}

	/**
	 * One budget.
	 *
	 * @param model the model it is for; {@code null}: every model
	 * @param window {@code minute} or {@code day}
	 * @param limit tokens per window
	 * @param remaining tokens left now (negative: in debt)
	 * @param reset time until it is full again, in OpenAI's duration format
	 */
	public record Budget(@Nullable String model, String window, long limit, long remaining, String reset) {

	}

	/**
	 * Requests and tokens.
	 *
	 * @param requests requests admitted or refused
	 * @param refused requests refused with 429
	 * @param overInShadow requests over budget served in shadow mode
	 * @param unchecked requests the budget store could not check
	 * @param promptTokens prompt tokens of requests that ended
	 * @param cachedPromptTokens of which served from an engine's prefix cache
	 * @param completionTokens completion tokens of requests that ended
	 * @param cost weighted cost charged
	 */
	public record Counts(long requests, long refused, long overInShadow, long unchecked, long promptTokens,
			long cachedPromptTokens, long completionTokens, long cost) {

	}

}

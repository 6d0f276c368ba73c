package io.github.dualmap.tenant;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One tenant as {@code /actuator/dualmap} shows it.
 *
 * @param weight its fair-queuing weight (not read by the dispatch queues yet)
 * @param priority its fair-queuing priority band (not read by the dispatch queues yet)
 * @param budgets its budgets, as this gateway last saw them, refilled to now (with a
 * shared store, other replicas' charges since then are not in them)
 * @param usage what its requests did since this gateway started
 */
public record TenantView(double weight, int priority, List<Budget> budgets, Counts usage) {

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

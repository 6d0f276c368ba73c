package io.github.dualmap.tenant;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The tokens one request used, as the engine reports them in {@code usage}: chat and text
 * completions and embeddings ({@code prompt_tokens}, {@code completion_tokens},
 * {@code prompt_tokens_details.cached_tokens}) or the Responses API
 * ({@code input_tokens}, {@code output_tokens},
 * {@code input_tokens_details.cached_tokens}).
 *
 * @param promptTokens prompt (input) tokens, cached ones included
 * @param cachedTokens of which the engine served from its prefix cache
 * @param completionTokens completion (output) tokens
 */
public record TokenUsage(long promptTokens, long cachedTokens, long completionTokens) {

	public TokenUsage {
		promptTokens = Math.max(0, promptTokens);
		cachedTokens = Math.max(0, Math.min(cachedTokens, promptTokens));
		completionTokens = Math.max(0, completionTokens);
	}

	/** Its weighted cost, rounded up to whole tokens. */
	public long cost(TenantProperties.Cost weights) {
		double cost = (this.promptTokens - this.cachedTokens) * weights.getPromptWeight()
				+ this.cachedTokens * weights.getCachedPromptWeight()
				+ this.completionTokens * weights.getCompletionWeight();
		return (long) Math.ceil(cost);
	}

	/**
	 * The usage in {@code usage}, an engine's {@code usage} object; {@code null} when it
	 * is none (absent, {@code null}, or without token counts).
	 */
	public static @Nullable TokenUsage of(@Nullable JsonNode usage) {
		if (usage == null || !usage.isObject()) {
			return null;
		}
		JsonNode prompt = usage.has("prompt_tokens") ? usage.get("prompt_tokens") : usage.get("input_tokens");
		JsonNode completion = usage.has("completion_tokens") ? usage.get("completion_tokens")
				: usage.get("output_tokens");
		if ((prompt == null || !prompt.isNumber()) && (completion == null || !completion.isNumber())) {
			return null;
		}
		JsonNode details = usage.has("prompt_tokens_details") ? usage.get("prompt_tokens_details")
				: usage.get("input_tokens_details");
		JsonNode cached = details == null ? null : details.get("cached_tokens");
		return new TokenUsage(count(prompt), count(cached), count(completion));
	}

	private static long count(@Nullable JsonNode n) {
		return n != null && n.isNumber() ? n.asLong() : 0;
	}

}

package io.github.dualmap.core;

/**
 * A policy's choice for one request.
 *
 * @param instanceId the chosen instance
 * @param reason why it was chosen
 * @param cachedTokens estimated prompt tokens already cached there
 * @param uncachedTokens estimated prompt tokens the instance must prefill
 * @param ttftEstimateNanos estimated time to first token there, or -1 when the policy has
 * no model
 */
public record Decision(String instanceId, Reason reason, int cachedTokens, int uncachedTokens, long ttftEstimateNanos) {

	public static Decision of(String instanceId, Reason reason, RoutingRequest request) {
		return new Decision(instanceId, reason, 0, request.promptTokens(), -1);
	}

}

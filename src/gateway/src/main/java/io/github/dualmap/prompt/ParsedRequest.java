package io.github.dualmap.prompt;

import io.github.dualmap.core.PromptBlocks;
import org.jspecify.annotations.Nullable;

/**
 * What the router needs from one request body.
 *
 * @param model the requested model, {@code null} when absent (or not readable for
 * {@link RequestKind#OTHER})
 * @param stream whether the client asked for a server-sent event stream
 * @param blocks the canonical prompt's block chain, {@code null} for
 * {@link RequestKind#OTHER}
 * @param kind which endpoint the request targets
 * @param previousResponseId the stored response a {@link RequestKind#RESPONSES} request
 * continues ({@code previous_response_id}), else {@code null}
 */
public record ParsedRequest(@Nullable String model, boolean stream, @Nullable PromptBlocks blocks, RequestKind kind,
		@Nullable String previousResponseId) {

	public ParsedRequest(@Nullable String model, boolean stream, @Nullable PromptBlocks blocks, RequestKind kind) {
		this(model, stream, blocks, kind, null);
	}

	/** A request without a prompt, routed by load alone. */
	public static ParsedRequest other(@Nullable String model, boolean stream) {
		return new ParsedRequest(model, stream, null, RequestKind.OTHER);
	}

}

package io.github.dualmap.prompt;

import io.github.dualmap.core.PromptBlocks;
import org.jspecify.annotations.Nullable;

/**
 * What routing needs from a request body.
 *
 * @param model the {@code model} field, when present
 * @param stream whether the client asked for a server-sent event stream
 * @param blocks the canonical prompt's block chain, {@code null} for other endpoints
 * @param kind the endpoint kind
 */
public record ParsedRequest(@Nullable String model, boolean stream, @Nullable PromptBlocks blocks, RequestKind kind) {
}

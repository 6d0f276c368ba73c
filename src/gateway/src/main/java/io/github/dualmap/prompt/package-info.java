/**
 * OpenAI-compatible request bodies ({@code /v1/completions},
 * {@code /v1/chat/completions}) turned into canonical prompt text and then into
 * {@link io.github.dualmap.core.PromptBlocks}, plus the OpenAI error body the gateway and
 * the emulator answer with.
 */
@NullMarked
package io.github.dualmap.prompt;

import org.jspecify.annotations.NullMarked;

/**
 * The engine model behind a real HTTP server that speaks the vLLM OpenAI-compatible API:
 * completions and chat completions (streaming SSE or not), models, health and vLLM-format
 * (or SGLang-format) Prometheus metrics, in scaled real time.
 */
@NullMarked
package io.github.dualmap.emulator;

import org.jspecify.annotations.NullMarked;

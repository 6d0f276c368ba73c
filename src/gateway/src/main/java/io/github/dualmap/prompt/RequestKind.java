package io.github.dualmap.prompt;

/**
 * Which OpenAI endpoint a request targets; completions, chat completions and responses
 * carry a prompt to route on.
 */
public enum RequestKind {

	/** {@code /v1/completions}. */
	COMPLETION,

	/** {@code /v1/chat/completions}. */
	CHAT,

	/** {@code /v1/responses} (the OpenAI Responses API, served by vLLM and SGLang). */
	RESPONSES,

	/**
	 * Anything else ({@code /v1/embeddings}, {@code /v1/models}, ...): routed by load.
	 */
	OTHER

}

package io.github.dualmap.prompt;

/**
 * Which OpenAI endpoint a request targets; only completions and chat completions carry a
 * prompt to route on.
 */
public enum RequestKind {

	/** {@code /v1/completions}. */
	COMPLETION,

	/** {@code /v1/chat/completions}. */
	CHAT,

	/**
	 * Anything else ({@code /v1/embeddings}, {@code /v1/models}, ...): routed by load.
	 */
	OTHER

}

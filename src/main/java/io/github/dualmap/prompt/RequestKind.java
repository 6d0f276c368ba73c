package io.github.dualmap.prompt;

/** Which OpenAI endpoint a request addresses, as far as routing cares. */
public enum RequestKind {

	/** {@code /v1/completions}. */
	COMPLETION,
	/** {@code /v1/chat/completions}. */
	CHAT,
	/** Anything else: routed by load alone. */
	OTHER

}

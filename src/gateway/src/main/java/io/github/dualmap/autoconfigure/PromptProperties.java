package io.github.dualmap.autoconfigure;

import io.github.dualmap.prompt.PromptParser;
import io.github.dualmap.core.SchedulerSettings;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Min;

/** {@code dualmap.prompt.*}: how prompts are cut into blocks. */
public class PromptProperties {

	/** Characters of canonical prompt text per block. */
	@Min(value = 1, message = "dualmap.prompt.block-chars must be >= 1")
	private int blockChars = 256;

	/** Characters per token, to estimate token counts from text. */
	@DecimalMin(value = "0", inclusive = false, message = "dualmap.prompt.chars-per-token must be > 0")
	private double charsPerToken = 4.0;

	/** Token ids per block when the prompt is given as token ids. */
	@Min(value = 1, message = "dualmap.prompt.block-tokens must be >= 1")
	private int blockTokens = SchedulerSettings.DEFAULT_BLOCK_TOKENS;

	/**
	 * Deepest nesting of arrays and objects in a request body the gateway reads (a tool's
	 * or a structured output's JSON schema nests deepest); deeper bodies get 400.
	 */
	@Min(value = 4, message = "dualmap.prompt.max-nesting-depth must be >= 4")
	private int maxNestingDepth = PromptParser.DEFAULT_MAX_NESTING_DEPTH;

	/**
	 * Most JSON tokens (values, names, brackets) in a request body the gateway reads;
	 * more get 400. Bounds the work and memory of parsing one body.
	 */
	@Min(value = 1, message = "dualmap.prompt.max-json-tokens must be >= 1")
	private long maxJsonTokens = PromptParser.DEFAULT_MAX_TOKEN_COUNT;

	public int getBlockChars() {
		return this.blockChars;
	}

	public void setBlockChars(int blockChars) {
		this.blockChars = blockChars;
	}

	public double getCharsPerToken() {
		return this.charsPerToken;
	}

	public void setCharsPerToken(double charsPerToken) {
		this.charsPerToken = charsPerToken;
	}

	public int getBlockTokens() {
		return this.blockTokens;
	}

	public void setBlockTokens(int blockTokens) {
		this.blockTokens = blockTokens;
	}

	public int getMaxNestingDepth() {
		return this.maxNestingDepth;
	}

	public void setMaxNestingDepth(int maxNestingDepth) {
		this.maxNestingDepth = maxNestingDepth;
	}

	public long getMaxJsonTokens() {
		return this.maxJsonTokens;
	}

	public void setMaxJsonTokens(long maxJsonTokens) {
		this.maxJsonTokens = maxJsonTokens;
	}

}

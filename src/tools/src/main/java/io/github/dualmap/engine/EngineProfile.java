package io.github.dualmap.engine;

/**
 * Hardware and model constants of one serving instance: the step latency coefficients and
 * the scheduler limits. Step latency in seconds is
 * {@code t0 + cLin*(new prefill tokens + decoding seqs) + cAttn*sum(n*(p + n/2)) + cKv*decoder context tokens}
 * with {@code cAttn = 4*layers*hidden/attentionFlops} (Mooncake's attention FLOPs per
 * token pair).
 *
 * @param name profile name ({@code h100-8b}, {@code h100-8b-fp8}, {@code a100-8b} or a
 * custom one)
 * @param t0Seconds fixed cost of one iteration
 * @param cLinSeconds linear cost per new token (weights, MLP, projections)
 * @param attentionFlops sustained attention throughput in FLOP/s
 * @param layers transformer layers
 * @param hidden hidden size
 * @param cKvSeconds cost per context token read by a decoding sequence
 * @param tokenBudget tokens scheduled per step ({@code max_num_batched_tokens})
 * @param maxRunningSeqs sequences running at once ({@code max_num_seqs})
 * @param blockTokens tokens per KV block
 * @param kvCapacityTokens KV cache capacity in tokens (rounded down to blocks)
 * @param maxModelLen context length: prompt plus output tokens
 * @param jitter relative step time noise, uniform in {@code [-jitter, +jitter]}, 0 for
 * none
 * @param seed seed of the jitter
 * @param longPrefillTokenThreshold most prompt tokens one request is scheduled in a step
 * ({@code long_prefill_token_threshold}), 0 for no cap but the token budget (vLLM's
 * default)
 */
public record EngineProfile(String name, double t0Seconds, double cLinSeconds, double attentionFlops, int layers,
		int hidden, double cKvSeconds, int tokenBudget, int maxRunningSeqs, int blockTokens, long kvCapacityTokens,
		int maxModelLen, double jitter, long seed, int longPrefillTokenThreshold) {

	/** The default profile name. */
	public static final String DEFAULT = "h100-8b";

	public EngineProfile {
		requireNonNegative("t0Seconds", t0Seconds);
		requireNonNegative("cLinSeconds", cLinSeconds);
		requireNonNegative("cKvSeconds", cKvSeconds);
		if (!(attentionFlops > 0)) {
			throw new IllegalArgumentException("attentionFlops must be > 0 but was " + attentionFlops);
		}
		requirePositive("layers", layers);
		requirePositive("hidden", hidden);
		requirePositive("tokenBudget", tokenBudget);
		requirePositive("maxRunningSeqs", maxRunningSeqs);
		requirePositive("blockTokens", blockTokens);
		requirePositive("maxModelLen", maxModelLen);
		if (kvCapacityTokens < blockTokens || kvCapacityTokens / blockTokens > Integer.MAX_VALUE) {
			throw new IllegalArgumentException(
					"kvCapacityTokens must hold between 1 and 2^31-1 blocks but was " + kvCapacityTokens);
		}
		if (!(jitter >= 0 && jitter < 1)) {
			throw new IllegalArgumentException("jitter must be in [0, 1) but was " + jitter);
		}
		if (longPrefillTokenThreshold < 0) {
			throw new IllegalArgumentException(
					"longPrefillTokenThreshold must be >= 0 but was " + longPrefillTokenThreshold);
		}
	}

	/**
	 * KV cache of vLLM's default deployment of a Llama-3.1-8B-class model on one 80 GB
	 * H100, in tokens: the model's 16-bit KV at {@code --gpu-memory-utilization 0.9}. The
	 * H100 80 GB exposes 79.6 GiB; 0.9 of it is 71.6 GiB; the bf16 weights (8.03 B
	 * parameters x 2 bytes) take 15.0 GiB and the profiled activation peak at 8192
	 * batched tokens, the CUDA graphs and non-torch memory about 2.9 GiB, which leaves
	 * 53.7 GiB of KV. A token's KV is 32 layers x 2 (K and V) x 8 KV heads x 128 x 2
	 * bytes = 128 KiB, so 53.7 GiB hold 53.7 x 8192 = 440,000 tokens (rounded down to
	 * whole 16-token blocks), the size vLLM logs at start-up as its KV cache.
	 */
	public static final long KV_TOKENS_16BIT = 440_000;

	/**
	 * The same memory with an fp8 KV cache ({@code --kv-cache-dtype fp8}, 64 KiB a token)
	 * and the same reserve: about twice the tokens, 0.9 M.
	 */
	public static final long KV_TOKENS_FP8 = 900_000;

	/**
	 * Llama-3-8B class model on one H100 as vLLM deploys it by default: t0 7 ms, 20
	 * us/token, attention at 400 TFLOPS, 20 ns per decoder context token, 8192 tokens and
	 * 1024 sequences per step, {@link #KV_TOKENS_16BIT} tokens of 16-bit KV, 128k
	 * context.
	 */
	public static EngineProfile h100_8b() {
		return new EngineProfile("h100-8b", 0.007, 20e-6, 400e12, 32, 4096, 20e-9, 8192, 1024, 16, KV_TOKENS_16BIT,
				131_072, 0, 0, 0);
	}

	/**
	 * {@link #h100_8b()} with an fp8 KV cache: {@link #KV_TOKENS_FP8} tokens, the same
	 * step costs.
	 */
	public static EngineProfile h100_8b_fp8() {
		return new EngineProfile("h100-8b-fp8", 0.007, 20e-6, 400e12, 32, 4096, 20e-9, 8192, 1024, 16, KV_TOKENS_FP8,
				131_072, 0, 0, 0);
	}

	/**
	 * The same model on one 80 GB A100 as vLLM deploys it by default (16-bit KV, the same
	 * memory as {@link #h100_8b()}: {@link #KV_TOKENS_16BIT} tokens): t0 10 ms, 65
	 * us/token, attention at 170 TFLOPS, 2048 tokens and 256 sequences per step.
	 */
	public static EngineProfile a100_8b() {
		return new EngineProfile("a100-8b", 0.010, 65e-6, 170e12, 32, 4096, 20e-9, 2048, 256, 16, KV_TOKENS_16BIT,
				131_072, 0, 0, 0);
	}

	/** The built-in profile called {@code name}. */
	public static EngineProfile named(String name) {
		return switch (name) {
			case "h100-8b" -> h100_8b();
			case "h100-8b-fp8" -> h100_8b_fp8();
			case "a100-8b" -> a100_8b();
			default -> throw new IllegalArgumentException(
					"unknown engine profile '" + name + "' (known: h100-8b, h100-8b-fp8, a100-8b)");
		};
	}

	/** Attention seconds per (query token x context token) pair. */
	public double cAttnSeconds() {
		return 4.0 * layers * hidden / attentionFlops;
	}

	/** KV cache capacity in blocks. */
	public int capacityBlocks() {
		return (int) (kvCapacityTokens / blockTokens);
	}

	/**
	 * Analytic step time in seconds without jitter.
	 * @param newTokens prefill tokens plus decoding sequences scheduled in the step
	 * @param attentionPairs {@code sum(n*(p + n/2))} over prefill chunks
	 * @param decodeContextTokens context tokens read by decoding sequences
	 */
	public double stepSeconds(long newTokens, double attentionPairs, long decodeContextTokens) {
		return t0Seconds + cLinSeconds * newTokens + cAttnSeconds() * attentionPairs + cKvSeconds * decodeContextTokens;
	}

	/**
	 * Idle time to first token of a cold prompt of {@code promptTokens}: its chunks run
	 * back to back, each a full step.
	 */
	public double coldTtftSeconds(int promptTokens) {
		return idleTtftSeconds(promptTokens, 0);
	}

	/**
	 * Most prompt tokens one request is scheduled in a step: the token budget, or the
	 * long prefill threshold when that is set and smaller.
	 */
	public int chunkTokens() {
		return longPrefillTokenThreshold > 0 ? Math.min(tokenBudget, longPrefillTokenThreshold) : tokenBudget;
	}

	/**
	 * Idle time to first token of a prompt of {@code promptTokens} whose first
	 * {@code cachedTokens} are in the prefix cache: the rest's chunks run back to back,
	 * each a full step attending to everything before it.
	 */
	public double idleTtftSeconds(int promptTokens, int cachedTokens) {
		int chunk = chunkTokens();
		double total = 0;
		for (int done = Math.max(0, cachedTokens); done < promptTokens; done += chunk) {
			int n = Math.min(chunk, promptTokens - done);
			total += stepSeconds(n, n * (done + n / 2.0), 0);
		}
		return total;
	}

	public EngineProfile withKvCapacityTokens(long tokens) {
		return new EngineProfile(name, t0Seconds, cLinSeconds, attentionFlops, layers, hidden, cKvSeconds, tokenBudget,
				maxRunningSeqs, blockTokens, tokens, maxModelLen, jitter, seed, longPrefillTokenThreshold);
	}

	public EngineProfile withScheduling(int tokenBudget, int maxRunningSeqs) {
		return new EngineProfile(name, t0Seconds, cLinSeconds, attentionFlops, layers, hidden, cKvSeconds, tokenBudget,
				maxRunningSeqs, blockTokens, kvCapacityTokens, maxModelLen, jitter, seed, longPrefillTokenThreshold);
	}

	public EngineProfile withMaxModelLen(int maxModelLen) {
		return new EngineProfile(name, t0Seconds, cLinSeconds, attentionFlops, layers, hidden, cKvSeconds, tokenBudget,
				maxRunningSeqs, blockTokens, kvCapacityTokens, maxModelLen, jitter, seed, longPrefillTokenThreshold);
	}

	/**
	 * This profile with vLLM's {@code long_prefill_token_threshold}: no request is
	 * scheduled more than {@code tokens} prompt tokens in a step, so the rest of the
	 * budget goes to other prompts (0: no cap).
	 */
	public EngineProfile withLongPrefillTokenThreshold(int tokens) {
		return new EngineProfile(name, t0Seconds, cLinSeconds, attentionFlops, layers, hidden, cKvSeconds, tokenBudget,
				maxRunningSeqs, blockTokens, kvCapacityTokens, maxModelLen, jitter, seed, tokens);
	}

	public EngineProfile withJitter(double jitter, long seed) {
		return new EngineProfile(name, t0Seconds, cLinSeconds, attentionFlops, layers, hidden, cKvSeconds, tokenBudget,
				maxRunningSeqs, blockTokens, kvCapacityTokens, maxModelLen, jitter, seed, longPrefillTokenThreshold);
	}

	public EngineProfile withLatency(double t0Seconds, double cLinSeconds, double attentionFlops, double cKvSeconds) {
		return new EngineProfile(name, t0Seconds, cLinSeconds, attentionFlops, layers, hidden, cKvSeconds, tokenBudget,
				maxRunningSeqs, blockTokens, kvCapacityTokens, maxModelLen, jitter, seed, longPrefillTokenThreshold);
	}

	private static void requireNonNegative(String what, double v) {
		if (!(v >= 0)) {
			throw new IllegalArgumentException(what + " must be >= 0 but was " + v);
		}
	}

	private static void requirePositive(String what, long v) {
		if (v <= 0) {
			throw new IllegalArgumentException(what + " must be > 0 but was " + v);
		}
	}

}

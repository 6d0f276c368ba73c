package io.github.dualmap.engine;

/**
 * Engine state for metrics, taken at one instant: what vLLM exposes on {@code /metrics}.
 *
 * @param waiting requests waiting (new or preempted)
 * @param running requests running (prefill or decode)
 * @param kvUsage fraction of KV blocks referenced by requests, 0..1
 * @param prefixQueryTokens tokens looked up in the prefix cache (monotonic)
 * @param prefixHitTokens tokens found in the prefix cache (monotonic)
 * @param promptTokens prompt tokens of admitted requests (monotonic)
 * @param generationTokens tokens generated (monotonic)
 * @param preemptions preemptions (monotonic)
 * @param finished requests finished (monotonic)
 * @param evictedBlocks cached blocks evicted for reuse (monotonic)
 * @param capacityBlocks KV cache capacity in blocks
 * @param blockTokens tokens per block
 * @param ttft time to first token, seconds
 * @param itl inter-token latency, seconds
 * @param e2e request latency from arrival to last token, seconds
 */
public record EngineStats(int waiting, int running, double kvUsage, long prefixQueryTokens, long prefixHitTokens,
		long promptTokens, long generationTokens, long preemptions, long finished, long evictedBlocks,
		int capacityBlocks, int blockTokens, LatencyHistogram.Snapshot ttft, LatencyHistogram.Snapshot itl,
		LatencyHistogram.Snapshot e2e) {

	/** KV capacity in tokens. */
	public long capacityTokens() {
		return (long) capacityBlocks * blockTokens;
	}

}

package io.github.dualmap.bench;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import io.github.dualmap.core.PrefixDirectory;
import io.github.dualmap.core.ShadowKvIndex;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a release costs the router's bookkeeping: recording a prompt's chain of
 * {@code blocks} block hashes into an instance's shadow index (every DualMap release) and
 * into the pool's prefix directory ({@code dualmap-directory} only), both full, so that
 * records evict as they do in a pool that has run a while. Half the chains repeat an
 * earlier prompt's blocks with a new tail, as a conversation's next turn does. 390 blocks
 * is a 100,000-character prompt at the gateway's 256 characters per block. Not run by the
 * test suite; see {@code docs/benchmarks.md} for the command.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RecordCostBenchmark {

	// One instance's KV cache in the h100-8b profile, in blocks; the directory is bounded
	// by eight of them.
	private static final int SHADOW_BLOCKS = 56_000;

	private static final int DIRECTORY_BLOCKS = 8 * SHADOW_BLOCKS;

	@Param({ "16", "390", "1500" })
	int blocks;

	private ShadowKvIndex shadow;

	private PrefixDirectory directory;

	private long[][] chains;

	private int next;

	@Setup(Level.Trial)
	public void setUp() {
		SplittableRandom random = new SplittableRandom(7);
		// Enough distinct blocks to overflow the directory twice, so records keep
		// evicting.
		int count = Math.max(64, 2 * DIRECTORY_BLOCKS / blocks);
		chains = new long[count][];
		for (int i = 0; i < count; i++) {
			long[] chain = new long[blocks];
			int shared = (i > 0 && random.nextBoolean()) ? random.nextInt(blocks) : 0;
			long[] earlier = i > 0 ? chains[random.nextInt(i)] : chain;
			for (int k = 0; k < blocks; k++) {
				chain[k] = k < shared ? earlier[k] : random.nextLong();
			}
			chains[i] = chain;
		}
		shadow = new ShadowKvIndex(SHADOW_BLOCKS);
		directory = new PrefixDirectory(DIRECTORY_BLOCKS);
		for (long[] chain : chains) {
			shadow.record(chain);
			directory.record(chain, "engine-001");
		}
	}

	private long[] nextChain() {
		long[] chain = chains[next];
		next = (next + 1) % chains.length;
		return chain;
	}

	@Benchmark
	public ShadowKvIndex shadowRecord() {
		shadow.record(nextChain());
		return shadow;
	}

	@Benchmark
	public PrefixDirectory directoryRecord() {
		directory.record(nextChain(), "engine-002");
		return directory;
	}

}

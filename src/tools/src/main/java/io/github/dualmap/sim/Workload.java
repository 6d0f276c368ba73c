package io.github.dualmap.sim;

import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.sim.trace.Trace;

/**
 * A trace prepared for replay: each request's prompt blocks as the router sees them,
 * hashed once and shared read-only by every run.
 */
public final class Workload {

	/** Model name that seeds the router's prefix hashes. */
	public static final String MODEL = "sim-model";

	private final Trace trace;

	private final PromptBlocks[] blocks;

	private Workload(Trace trace) {
		this.trace = trace;
		PrefixHasher hasher = PrefixHasher.ofDefaults();
		this.blocks = new PromptBlocks[trace.size()];
		for (int i = 0; i < blocks.length; i++) {
			var r = trace.requests().get(i);
			blocks[i] = hasher.ofHashIds(MODEL, r.hashIds(), trace.blockTokens(), r.inputTokens());
		}
	}

	public static Workload of(Trace trace) {
		return new Workload(trace);
	}

	public Trace trace() {
		return trace;
	}

	public int size() {
		return blocks.length;
	}

	/** The router's view of request {@code index}. */
	public PromptBlocks blocks(int index) {
		return blocks[index];
	}

}

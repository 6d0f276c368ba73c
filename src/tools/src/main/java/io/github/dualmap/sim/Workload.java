package io.github.dualmap.sim;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.sim.trace.Trace;
import io.github.dualmap.sim.trace.TraceRequest;
import org.jspecify.annotations.Nullable;

/**
 * A trace prepared for replay: each request's prompt blocks as the router sees them,
 * hashed once and shared read-only by every run.
 */
public final class Workload {

	/** Model name that seeds the router's prefix hashes. */
	public static final String MODEL = "sim-model";

	private final Trace trace;

	private final PromptBlocks[] blocks;

	// Worked out on first use: only runs that spread by session read it.
	private int @Nullable [] sessions;

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

	/**
	 * The conversation of each request, as the index of the conversation's first request
	 * (shared, not to be written). A follow-up turn sends the whole history again (the
	 * earlier prompt, its answer, the new message), so a request whose prompt holds every
	 * full block of an earlier turn's prompt continues that turn's conversation (of the
	 * turn with the longest such prompt); any other request opens a conversation. A turn
	 * is a prompt of at least two full blocks whose full blocks are its own: no other
	 * prompt's full blocks are exactly those. A prefix that whole prompts share (a system
	 * prompt, a document, with a message shorter than a block after it) is where many
	 * conversations open, not one conversation's history. Where the workload records
	 * sessions ({@link TraceRequest#session()}: the synthetic sessions do), those
	 * instead; a trace file records none, so its blocks stand for what its client would
	 * send a load balancer.
	 */
	synchronized int[] sessions() {
		if (sessions == null) {
			sessions = trace.requests().stream().anyMatch(r -> r.session() != TraceRequest.NO_SESSION)
					? recordedSessions(trace.requests()) : sessionsOf(blocks);
		}
		return sessions;
	}

	/**
	 * The conversations a workload recorded ({@link TraceRequest#session()}), each as the
	 * index of its first request; a request without one is a conversation of its own.
	 */
	static int[] recordedSessions(List<TraceRequest> requests) {
		int[] out = new int[requests.size()];
		Map<Long, Integer> first = new HashMap<>();
		for (int i = 0; i < out.length; i++) {
			long session = requests.get(i).session();
			if (session == TraceRequest.NO_SESSION) {
				out[i] = i;
				continue;
			}
			Integer opened = first.putIfAbsent(session, i);
			out[i] = opened == null ? i : opened;
		}
		return out;
	}

	static int[] sessionsOf(PromptBlocks[] prompts) {
		// Chain hash of a prompt's last full block (of two or more) -> how many prompts
		// end their full blocks there.
		Map<Long, Integer> promptsPerFullPrefix = new HashMap<>();
		for (PromptBlocks p : prompts) {
			int full = fullBlocks(p);
			if (full >= 2) {
				promptsPerFullPrefix.merge(p.chain()[full - 1], 1, Integer::sum);
			}
		}
		int[] out = new int[prompts.length];
		// Chain hash of a turn's last full block -> that turn.
		Map<Long, Integer> turns = new HashMap<>();
		for (int i = 0; i < prompts.length; i++) {
			PromptBlocks p = prompts[i];
			long[] chain = p.chain();
			out[i] = i;
			for (int d = chain.length - 1; d >= 1; d--) {
				Integer earlier = turns.get(chain[d]);
				if (earlier != null) {
					out[i] = out[earlier];
					break;
				}
			}
			int full = fullBlocks(p);
			if (full >= 2 && promptsPerFullPrefix.get(chain[full - 1]) == 1) {
				turns.put(chain[full - 1], i);
			}
		}
		return out;
	}

	private static int fullBlocks(PromptBlocks p) {
		return Math.min(p.chain().length, p.promptTokens() / p.blockTokens());
	}

}

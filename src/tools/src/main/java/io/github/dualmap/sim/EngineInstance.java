package io.github.dualmap.sim;

import java.util.List;

import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.engine.Engine;
import io.github.dualmap.engine.EngineProfile;
import io.github.dualmap.engine.EngineRequest;
import io.github.dualmap.engine.EngineStats;
import io.github.dualmap.engine.HashIdExpander;
import io.github.dualmap.engine.KvEventListener;
import io.github.dualmap.engine.RequestProgress;
import io.github.dualmap.engine.StepResult;
import io.github.dualmap.sim.trace.TraceRequest;

/**
 * The engine model the emulator serves over HTTP, behind the simulator's
 * {@link InstanceModel} seam. Trace hash ids are expanded into the engine's own blocks,
 * so prefix reuse in the trace becomes prefix-cache hits in the engine.
 */
public final class EngineInstance implements InstanceModel {

	private final Engine engine;

	private final HashIdExpander expander;

	private final double ringWeight;

	public EngineInstance(EngineProfile profile, int traceBlockTokens) {
		this(profile, traceBlockTokens, 1.0);
	}

	/** An instance whose operator gives it {@code ringWeight} on the rings. */
	public EngineInstance(EngineProfile profile, int traceBlockTokens, double ringWeight) {
		this.engine = new Engine(profile);
		this.expander = new HashIdExpander(traceBlockTokens, profile.blockTokens());
		this.ringWeight = ringWeight;
	}

	/**
	 * Instances of {@code profile}, each with its own jitter seed, for traces of
	 * {@code traceBlockTokens}-token hash ids.
	 */
	public static InstanceModel.Factory factory(EngineProfile profile, int traceBlockTokens) {
		return factory(PoolProfiles.of(profile, 1), traceBlockTokens);
	}

	/**
	 * Instances of {@code pool}'s profiles, instance {@code k} of
	 * {@link PoolProfiles#profileOf(int) its profile} and ring weight, each with its own
	 * jitter seed.
	 */
	public static InstanceModel.Factory factory(PoolProfiles pool, int traceBlockTokens) {
		// Fail on a bad block size now, not in the first run.
		new HashIdExpander(traceBlockTokens, pool.first().blockTokens());
		return (index, seed) -> {
			EngineProfile profile = pool.profileOf(index);
			return new EngineInstance(profile.withJitter(profile.jitter(), seed), traceBlockTokens,
					pool.weightOf(index));
		};
	}

	@Override
	public void setStepTimeFactor(double factor) {
		this.engine.setStepTimeFactor(factor);
	}

	@Override
	public double ringWeight() {
		return this.ringWeight;
	}

	/** The profile this instance's engine runs, with its jitter seed. */
	public EngineProfile profile() {
		return this.engine.profile();
	}

	@Override
	public boolean submit(int index, TraceRequest request, long nowNanos) {
		try {
			engine.submit(EngineRequest.ofHashIds(Integer.toString(index), request.hashIds(), request.inputTokens(),
					request.outputTokens(), expander), nowNanos);
			return true;
		}
		catch (IllegalArgumentException ex) {
			// Longer than the context or the KV cache: vLLM answers 400, the request is
			// lost.
			return false;
		}
	}

	@Override
	public KvEventSource kvEventSource() {
		return new KvEventSource() {
			@Override
			public void listen(KvEventListener listener) {
				engine.kvEvents(listener);
			}

			@Override
			public long[] blockHashes(TraceRequest request) {
				return expander.expand(request.hashIds(), request.inputTokens());
			}

			@Override
			public int blockTokens() {
				return engine.profile().blockTokens();
			}

			@Override
			public int maxBatchedTokens() {
				return engine.profile().tokenBudget();
			}
		};
	}

	@Override
	public boolean hasWork() {
		return engine.hasWork();
	}

	@Override
	public StepOutcome step(long nowNanos) {
		StepResult r = engine.step(nowNanos);
		List<RequestProgress> emitted = r.emitted();
		int firsts = 0;
		for (RequestProgress p : emitted) {
			if (p.outputTokens() == 1) {
				firsts++;
			}
		}
		int[] first = new int[firsts];
		int[] cached = new int[firsts];
		int j = 0;
		for (RequestProgress p : emitted) {
			if (p.outputTokens() == 1) {
				first[j] = Integer.parseInt(p.id());
				cached[j] = p.cachedTokens();
				j++;
			}
		}
		int[] finished = new int[r.finished().size()];
		for (int i = 0; i < finished.length; i++) {
			finished[i] = Integer.parseInt(r.finished().get(i).id());
		}
		return new StepOutcome(r.endNanos(), first, cached, finished);
	}

	@Override
	public EngineSnapshot scrape(long nowNanos) {
		EngineStats s = engine.stats();
		return new EngineSnapshot(nowNanos, s.waiting(), s.running(), s.kvUsage(), s.prefixQueryTokens(),
				s.prefixHitTokens(), s.capacityTokens());
	}

	@Override
	public long preemptions() {
		return engine.stats().preemptions();
	}

	@Override
	public long evictedBlocks() {
		return engine.stats().evictedBlocks();
	}

	@Override
	public int load() {
		return engine.running() + engine.waiting();
	}

}

package io.github.dualmap.sim;

import java.util.ArrayDeque;

import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.sim.trace.TraceRequest;

/**
 * An analysable stand-in for an engine: one request at a time, first come first served,
 * each taking a fixed service time (times the slowdown's factor) and finishing with its
 * first token. Its capacity is exactly one request per service time.
 */
final class FifoInstance implements InstanceModel {

	private final long serviceNanos;

	private double factor = 1;

	private final ArrayDeque<Integer> waiting = new ArrayDeque<>();

	private int inService;

	FifoInstance(long serviceNanos) {
		this.serviceNanos = serviceNanos;
	}

	@Override
	public boolean submit(int index, TraceRequest request, long nowNanos) {
		waiting.addLast(index);
		return true;
	}

	@Override
	public boolean hasWork() {
		return !waiting.isEmpty();
	}

	@Override
	public StepOutcome step(long nowNanos) {
		int i = waiting.pollFirst();
		inService = 1;
		return new StepOutcome(nowNanos + Math.round(serviceNanos * factor), new int[] { i }, new int[] { 0 },
				new int[] { i });
	}

	@Override
	public EngineSnapshot scrape(long nowNanos) {
		return new EngineSnapshot(nowNanos, waiting.size(), inService, 0, 0, 0, 1_000_000);
	}

	@Override
	public void setStepTimeFactor(double factor) {
		this.factor = factor;
	}

	@Override
	public int load() {
		return waiting.size() + inService;
	}

}

package io.github.dualmap.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * One serving instance as vLLM V1 schedules it. Each {@link #step(long)} is one
 * iteration: running requests first (each gets the rest of its prompt, chunked to the
 * token budget and to the long prefill threshold when one is set, or one decode token),
 * then waiting requests first come first served while budget, sequence slots and KV
 * blocks last. A running request that cannot get a block preempts the last running
 * request (recompute: its KV is dropped and it goes back to the front of the queue).
 * Waiting requests reuse the cached prefix of their block chain, capped at prompt length
 * minus one.
 * <p>
 * Time is passed in: the emulator calls {@code step} in scaled real time, the simulator
 * in virtual time. Not thread-safe; one owner drives it.
 */
public final class Engine {

	private final EngineProfile profile;

	private final int blockTokens;

	private final int chunkTokens;

	private final KvBlockCache cache;

	private final ArrayDeque<Sequence> waiting = new ArrayDeque<>();

	private final ArrayList<Sequence> running = new ArrayList<>();

	private final Map<String, Sequence> byId = new HashMap<>();

	private final SplittableRandom jitter;

	private final LatencyHistogram ttft = new LatencyHistogram(LatencyHistogram.TTFT_BOUNDS);

	private final LatencyHistogram itl = new LatencyHistogram(LatencyHistogram.ITL_BOUNDS);

	private final LatencyHistogram e2e = new LatencyHistogram(LatencyHistogram.E2E_BOUNDS);

	private long busyUntilNanos = Long.MIN_VALUE;

	private long prefixQueryTokens;

	private long prefixHitTokens;

	private long promptTokens;

	private long generationTokens;

	private long preemptions;

	private long finishedRequests;

	// Every step's modelled time is multiplied by this (setStepTimeFactor).
	private double stepTimeFactor = 1.0;

	public Engine(EngineProfile profile) {
		this.profile = profile;
		this.blockTokens = profile.blockTokens();
		this.chunkTokens = profile.chunkTokens();
		this.cache = new KvBlockCache(profile.capacityBlocks());
		this.jitter = new SplittableRandom(profile.seed());
	}

	public EngineProfile profile() {
		return profile;
	}

	/**
	 * Every step from the next on takes {@code factor} times its modelled time: a GPU
	 * that throttles, or a job that shares it; 1 (the start) restores the profile's.
	 * @throws IllegalArgumentException when {@code factor} is not above 0 and finite
	 */
	public void setStepTimeFactor(double factor) {
		if (!(factor > 0) || Double.isInfinite(factor)) {
			throw new IllegalArgumentException("factor must be above 0 and finite but was " + factor);
		}
		this.stepTimeFactor = factor;
	}

	/**
	 * Reports every block the prefix cache stores or evicts to {@code listener} (vLLM's
	 * KV events); {@link KvEventListener#NONE} stops it.
	 */
	public void kvEvents(KvEventListener listener) {
		cache.events(listener);
	}

	/**
	 * Queues {@code request}, arrived at {@code nowNanos}.
	 * @throws IllegalArgumentException when the id is in use, the request exceeds the
	 * context length, or it could never fit in the KV cache
	 */
	public void submit(EngineRequest request, long nowNanos) {
		long total = (long) request.promptTokens() + request.maxOutputTokens();
		if (total > profile.maxModelLen()) {
			throw new IllegalArgumentException("request " + request.id() + " needs " + total
					+ " tokens, more than the context length " + profile.maxModelLen());
		}
		if (blocksFor(total) > cache.capacity()) {
			throw new IllegalArgumentException("request " + request.id() + " needs " + blocksFor(total)
					+ " KV blocks, more than the cache holds (" + cache.capacity() + ")");
		}
		if (request.blockHashes().length > request.promptTokens() / blockTokens) {
			throw new IllegalArgumentException(
					"request " + request.id() + " has " + request.blockHashes().length + " block hashes for "
							+ request.promptTokens() + " prompt tokens of " + blockTokens + " per block");
		}
		if (byId.containsKey(request.id())) {
			throw new IllegalArgumentException("request id '" + request.id() + "' is already in the engine");
		}
		Sequence s = new Sequence(request, nowNanos, (int) blocksFor(total));
		byId.put(request.id(), s);
		waiting.addLast(s);
	}

	/** Drops a request (client gone); its blocks return to the free queue. */
	public boolean abort(String id) {
		Sequence s = byId.remove(id);
		if (s == null) {
			return false;
		}
		if (!waiting.remove(s)) {
			running.remove(s);
			cache.release(s.blocks, s.numBlocks);
			s.numBlocks = 0;
		}
		return true;
	}

	public boolean hasWork() {
		return !running.isEmpty() || !waiting.isEmpty();
	}

	/**
	 * Earliest time the next step may start (the end of the previous one), or
	 * {@code Long.MAX_VALUE} when there is nothing to do.
	 */
	public long nextStepStartNanos() {
		return hasWork() ? busyUntilNanos : Long.MAX_VALUE;
	}

	/**
	 * Runs one iteration starting at {@code nowNanos}; its effects are applied at once
	 * and its events are stamped with its end time.
	 * @throws IllegalStateException when there is no work or the previous step has not
	 * ended at {@code nowNanos}
	 */
	public StepResult step(long nowNanos) {
		if (!hasWork()) {
			throw new IllegalStateException("no work to step");
		}
		if (nowNanos < busyUntilNanos) {
			throw new IllegalStateException(
					"step at " + nowNanos + " starts before the previous step ends at " + busyUntilNanos);
		}
		List<RequestProgress> preempted = new ArrayList<>(0);
		int budget = scheduleRunning(profile.tokenBudget(), preempted);
		if (preempted.isEmpty()) {
			scheduleWaiting(budget);
		}
		int prefill = 0;
		int decodes = 0;
		double attention = 0;
		long decodeContext = 0;
		for (Sequence s : running) {
			int n = s.scheduled;
			if (n == 1 && s.output > 0 && s.computed >= s.request.promptTokens()) {
				decodes++;
				decodeContext += s.computed + 1L;
			}
			else {
				prefill += n;
				attention += n * (s.computed + n / 2.0);
			}
		}
		double seconds = profile.stepSeconds((long) prefill + decodes, attention, decodeContext);
		if (profile.jitter() > 0) {
			seconds *= 1 + profile.jitter() * (2 * jitter.nextDouble() - 1);
		}
		seconds *= stepTimeFactor;
		long end = nowNanos + Math.round(seconds * 1e9);
		busyUntilNanos = end;
		List<RequestProgress> emitted = new ArrayList<>(running.size());
		List<RequestProgress> finished = new ArrayList<>();
		for (Sequence s : running) {
			advance(s, end, emitted, finished);
		}
		if (!finished.isEmpty()) {
			running.removeIf(Sequence::finished);
		}
		return new StepResult(nowNanos, end, prefill, decodes, emitted, finished, preempted);
	}

	private int scheduleRunning(int budget, List<RequestProgress> preempted) {
		int i = 0;
		while (i < running.size() && budget > 0) {
			Sequence s = running.get(i);
			int n = Math.min(Math.min(s.numTokens() - s.computed, chunkTokens), budget);
			boolean granted = grow(s, s.computed + n);
			while (!granted) {
				Sequence victim = running.remove(running.size() - 1);
				preempt(victim);
				preempted.add(victim);
				if (victim == s) {
					break;
				}
				granted = grow(s, s.computed + n);
			}
			if (!granted) {
				break;
			}
			s.scheduled = n;
			commit(s, s.computed + n);
			budget -= n;
			i++;
		}
		return budget;
	}

	private void scheduleWaiting(int budget) {
		while (budget > 0 && !waiting.isEmpty() && running.size() < profile.maxRunningSeqs()) {
			Sequence s = waiting.peekFirst();
			long[] chain = s.request.blockHashes();
			int numTokens = s.numTokens();
			// vLLM recomputes at least the last token to produce logits.
			int hitBlocks = cache.cachedPrefix(chain, (numTokens - 1) / blockTokens);
			int hitTokens = hitBlocks * blockTokens;
			int n = Math.min(Math.min(numTokens - hitTokens, chunkTokens), budget);
			int fresh = (int) blocksFor(hitTokens + n) - hitBlocks;
			if (fresh + cache.evictableAmong(chain, hitBlocks) > cache.freeBlocks()) {
				return;
			}
			waiting.pollFirst();
			for (int k = 0; k < hitBlocks; k++) {
				s.blocks[k] = cache.touch(chain[k]);
			}
			s.numBlocks = hitBlocks;
			s.committed = hitBlocks;
			s.computed = hitTokens;
			s.cachedTokens = hitTokens;
			grow(s, hitTokens + n);
			prefixQueryTokens += numTokens;
			prefixHitTokens += hitTokens;
			if (!s.admitted) {
				s.admitted = true;
				promptTokens += s.request.promptTokens();
			}
			s.scheduled = n;
			commit(s, hitTokens + n);
			budget -= n;
			running.add(s);
		}
	}

	/**
	 * Registers the full prompt blocks of {@code s} up to {@code tokens}, the tokens it
	 * has computed once this step ends. vLLM V1 caches a block when the step that
	 * computes it is scheduled ({@code KVCacheManager.allocate_slots}), so a request
	 * admitted later in the same step finds it; the attention of that step writes every
	 * layer's keys and values before it reads them.
	 */
	private void commit(Sequence s, int tokens) {
		long[] chain = s.request.blockHashes();
		int full = Math.min(chain.length, tokens / blockTokens);
		for (int k = s.committed; k < full; k++) {
			cache.register(s.blocks[k], chain[k]);
		}
		s.committed = Math.max(s.committed, full);
	}

	private boolean grow(Sequence s, int tokens) {
		int need = (int) blocksFor(tokens) - s.numBlocks;
		if (need > cache.freeBlocks()) {
			return false;
		}
		for (int k = 0; k < need; k++) {
			s.blocks[s.numBlocks++] = cache.allocate();
		}
		return true;
	}

	private void preempt(Sequence s) {
		cache.release(s.blocks, s.numBlocks);
		s.numBlocks = 0;
		s.committed = 0;
		s.computed = 0;
		s.scheduled = 0;
		preemptions++;
		waiting.addFirst(s);
	}

	private void advance(Sequence s, long end, List<RequestProgress> emitted, List<RequestProgress> finished) {
		s.computed += s.scheduled;
		s.scheduled = 0;
		if (s.computed < s.numTokens()) {
			return;
		}
		s.output++;
		generationTokens++;
		if (s.output == 1) {
			s.firstTokenNanos = end;
			ttft.record((end - s.arrivalNanos) / 1e9);
		}
		else {
			itl.record((end - s.lastTokenNanos) / 1e9);
		}
		s.lastTokenNanos = end;
		emitted.add(s);
		if (s.output >= s.request.maxOutputTokens()) {
			s.finished = true;
			finished.add(s);
			e2e.record((end - s.arrivalNanos) / 1e9);
			finishedRequests++;
			cache.release(s.blocks, s.numBlocks);
			s.numBlocks = 0;
			byId.remove(s.request.id());
		}
	}

	private long blocksFor(long tokens) {
		return (tokens + blockTokens - 1) / blockTokens;
	}

	public int waiting() {
		return waiting.size();
	}

	public int running() {
		return running.size();
	}

	/** A consistent view of the counters and histograms now. */
	public EngineStats stats() {
		return new EngineStats(waiting.size(), running.size(), (double) cache.usedBlocks() / cache.capacity(),
				prefixQueryTokens, prefixHitTokens, promptTokens, generationTokens, preemptions, finishedRequests,
				cache.evictions(), cache.capacity(), blockTokens, ttft.snapshot(), itl.snapshot(), e2e.snapshot());
	}

	private static final class Sequence implements RequestProgress {

		final EngineRequest request;

		final long arrivalNanos;

		final int[] blocks;

		int numBlocks;

		// Chain blocks registered in the prefix cache.
		int committed;

		// Tokens whose KV is in the cache.
		int computed;

		int scheduled;

		int cachedTokens;

		int output;

		long firstTokenNanos = -1;

		long lastTokenNanos;

		boolean admitted;

		boolean finished;

		Sequence(EngineRequest request, long arrivalNanos, int maxBlocks) {
			this.request = request;
			this.arrivalNanos = arrivalNanos;
			this.blocks = new int[maxBlocks];
		}

		// Prompt plus generated tokens: what a (re)computation must cover before the
		// next token can be sampled.
		int numTokens() {
			return request.promptTokens() + output;
		}

		@Override
		public EngineRequest request() {
			return request;
		}

		@Override
		public long arrivalNanos() {
			return arrivalNanos;
		}

		@Override
		public int cachedTokens() {
			return cachedTokens;
		}

		@Override
		public int outputTokens() {
			return output;
		}

		@Override
		public long firstTokenNanos() {
			return firstTokenNanos;
		}

		@Override
		public boolean finished() {
			return finished;
		}

		@Override
		public String toString() {
			return "Request[" + request.id() + ", computed=" + computed + ", output=" + output + "]";
		}

	}

}

package io.github.dualmap.core;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Adaptive prefix depth. A sliding window of recent requests counts, for every routing
 * key on each request's path, how many requests carried it. A key whose share of the
 * window exceeds the hot ratio is expanded: requests carrying it route on one more block.
 * An expansion is dropped when the key's share falls below the drop ratio. Counting every
 * depth along the path (not only the routed one) keeps a parent's share truthful after it
 * was expanded, so expansions do not oscillate. Shares are counted against the full
 * window size even before the window has filled, so a warming table is conservative
 * rather than noisy. Memory is bounded by the window times the maximum depth plus the
 * bound on expanded keys. Thread-safe.
 */
public final class HotPrefixTable {

	private final SchedulerSettings settings;

	private final ArrayDeque<long[]> window = new ArrayDeque<>();

	private final Map<Long, Integer> counts = new HashMap<>();

	private final Set<Long> expanded = new HashSet<>();

	public HotPrefixTable(SchedulerSettings settings) {
		this.settings = settings;
	}

	/**
	 * Chooses the routing depth for {@code blocks} and records the request in the window.
	 * @return depth in blocks (1-based), at most the chain's length
	 */
	public synchronized int routeDepth(PromptBlocks blocks) {
		int depth = Math.min(settings.minPrefixDepth(), blocks.depth());
		int max = Math.min(settings.maxPrefixDepth(), blocks.depth());
		while (depth < max && expanded.contains(blocks.keyAt(depth))) {
			depth++;
		}
		long[] path = new long[depth];
		for (int d = 1; d <= depth; d++) {
			path[d - 1] = blocks.keyAt(d);
		}
		record(path);
		return depth;
	}

	/** The depth that would be used, without recording anything. */
	public synchronized int peekDepth(PromptBlocks blocks) {
		int depth = Math.min(settings.minPrefixDepth(), blocks.depth());
		int max = Math.min(settings.maxPrefixDepth(), blocks.depth());
		while (depth < max && expanded.contains(blocks.keyAt(depth))) {
			depth++;
		}
		return depth;
	}

	private void record(long[] path) {
		window.addLast(path);
		for (long k : path) {
			counts.merge(k, 1, Integer::sum);
		}
		if (window.size() > settings.hotWindow()) {
			for (long k : window.removeFirst()) {
				int c = counts.merge(k, -1, Integer::sum);
				if (c <= 0) {
					counts.remove(k);
					expanded.remove(k);
				}
				else if (expanded.contains(k) && share(c) < settings.hotDropRatio()) {
					expanded.remove(k);
				}
			}
		}
		if (window.size() < settings.hotMinSamples()) {
			return;
		}
		for (long k : path) {
			double s = share(counts.getOrDefault(k, 0));
			if (s > settings.hotRatio()) {
				if (expanded.size() < settings.maxHotPrefixes()) {
					expanded.add(k);
				}
			}
			else if (s < settings.hotDropRatio()) {
				expanded.remove(k);
			}
		}
	}

	// Shares are of the full window even while it fills: over a partial window two
	// requests in twenty-one look hot, and the hysteresis would then keep a 5 % prefix
	// expanded for good.
	private double share(int count) {
		return (double) count / Math.max(window.size(), settings.hotWindow());
	}

	/** Hashes of the currently expanded (hot) prefixes with their share of the window. */
	public synchronized List<HotPrefix> hotPrefixes() {
		return expanded.stream()
			.map(k -> new HotPrefix(k, share(counts.getOrDefault(k, 0))))
			.sorted((a, b) -> Double.compare(b.share(), a.share()))
			.toList();
	}

	/** Whether {@code key} is currently expanded. */
	public synchronized boolean isHot(long key) {
		return expanded.contains(key);
	}

	/**
	 * How many keys have a count: for tests of the memory bound (a key leaves with the
	 * last request in the window that carried it).
	 */
	synchronized int countedKeys() {
		return counts.size();
	}

	/** One hot prefix: its chain hash (never prompt text) and its share of the window. */
	public record HotPrefix(long hash, double share) {
	}

}

package io.github.dualmap.tenant;

import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import reactor.core.publisher.Mono;

/**
 * Budgets in this gateway's memory: at most {@code maxBuckets} buckets, least recently
 * used evicted first (an evicted bucket starts full again), and none kept a day past its
 * last use, when it would be full anyway.
 */
public final class LocalBudgetStore implements BudgetStore {

	private final Cache<String, double[]> buckets;

	private final LongSupplier clock;

	/**
	 * @param maxBuckets most buckets kept
	 * @param clock milliseconds, of any origin
	 */
	public LocalBudgetStore(long maxBuckets, LongSupplier clock) {
		this.buckets = Caffeine.newBuilder()
			.maximumSize(maxBuckets)
			.expireAfterAccess(Duration.ofMillis(BudgetLine.DAY_MILLIS))
			.build();
		this.clock = clock;
	}

	@Override
	public Mono<Levels> charge(List<BudgetLine> lines, double cost, Charge charge) {
		return Mono.fromSupplier(() -> chargeNow(lines, cost, charge));
	}

	/** {@link #charge} at once. */
	public synchronized Levels chargeNow(List<BudgetLine> lines, double cost, Charge charge) {
		long now = this.clock.getAsLong();
		double[] levels = new double[lines.size()];
		boolean admitted = true;
		for (int i = 0; i < levels.length; i++) {
			BudgetLine line = lines.get(i);
			double[] state = this.buckets.getIfPresent(line.key());
			// state: {level, at}
			levels[i] = state == null ? line.limit() : line.refilled(state[0], now - (long) state[1]);
			admitted &= levels[i] >= line.needed(cost);
		}
		boolean take = charge != Charge.IF_ADMITTED || admitted;
		for (int i = 0; i < levels.length; i++) {
			if (take) {
				levels[i] = Math.min(lines.get(i).limit(), levels[i] - cost);
			}
			this.buckets.put(lines.get(i).key(), new double[] { levels[i], now });
		}
		return new Levels(admitted, levels, now);
	}

	/** Buckets kept now. */
	public long size() {
		return this.buckets.estimatedSize();
	}

}

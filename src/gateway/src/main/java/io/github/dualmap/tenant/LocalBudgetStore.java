package io.github.dualmap.tenant;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import reactor.core.publisher.Mono;

/**
 * Budgets in this gateway's memory. The buckets of configured tenants (and of tenant
 * {@code default}) are always kept; those of the names clients send are at most
 * {@code maxBuckets}, the least used evicted first (Caffeine's eviction weighs how often
 * and how recently a name was charged, so a name charged steadily keeps its bucket
 * through a burst of names sent once; an evicted bucket starts full again), so a client
 * sending ever new names can neither grow the memory nor evict a configured tenant's
 * budget. None is kept a day past its last use, when it would be full anyway.
 */
public final class LocalBudgetStore implements BudgetStore {

	private final Cache<String, double[]> buckets;

	private final Map<String, double[]> kept = new ConcurrentHashMap<>();

	private final Predicate<String> keep;

	private final LongSupplier clock;

	/**
	 * @param maxBuckets most buckets of unlisted tenants kept
	 * @param clock milliseconds, of any origin
	 * @param keep which bucket keys are never evicted (a configured tenant's)
	 */
	public LocalBudgetStore(long maxBuckets, LongSupplier clock, Predicate<String> keep) {
		this.keep = keep;
		this.buckets = Caffeine.newBuilder()
			.maximumSize(maxBuckets)
			.expireAfterAccess(Duration.ofMillis(BudgetLine.DAY_MILLIS))
			.build();
		this.clock = clock;
	}

	@Override
	public String kind() {
		return "local";
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
			double[] state = this.keep.test(line.key()) ? this.kept.get(line.key())
					: this.buckets.getIfPresent(line.key());
			// state: {level, at}
			levels[i] = state == null ? line.limit() : line.refilled(state[0], now - (long) state[1]);
			admitted &= levels[i] >= line.needed(cost);
		}
		boolean take = charge != Charge.IF_ADMITTED || admitted;
		for (int i = 0; i < levels.length; i++) {
			if (take) {
				levels[i] = Math.min(lines.get(i).limit(), levels[i] - cost);
			}
			String key = lines.get(i).key();
			if (this.keep.test(key)) {
				this.kept.put(key, new double[] { levels[i], now });
			}
			else {
				this.buckets.put(key, new double[] { levels[i], now });
			}
		}
		return new Levels(admitted, levels, now);
	}

	/** Buckets of unlisted tenants kept now. */
	public long size() {
		this.buckets.cleanUp();
		return this.buckets.estimatedSize();
	}

}

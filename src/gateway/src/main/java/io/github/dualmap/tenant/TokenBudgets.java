package io.github.dualmap.tenant;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.NestedExceptionUtils;

/**
 * Admits requests against their tenant's token budgets on an estimate, settles them on
 * the usage they actually had, and keeps per-tenant usage for the actuator. A store that
 * fails or does not answer within its timeout never holds a request: admission fails open
 * or closed as configured, the failure is counted and logged (at most one line every
 * {@value #LOG_INTERVAL_SECONDS} seconds), and a settlement that fails is dropped. A
 * request served unchecked while the store failed open is not forgotten: its cost is kept
 * in this gateway's memory (per budget, at most {@value #MAX_PENDING} budgets) and
 * charged once the store answers again.
 */
public final class TokenBudgets {

	private static final Log logger = LogFactory.getLog(TokenBudgets.class);

	static final long LOG_INTERVAL_SECONDS = 10;

	/**
	 * Most sets of budget lines whose unchecked cost is kept for the store's return;
	 * beyond, the cost of further ones is dropped (and logged).
	 */
	static final int MAX_PENDING = 10_000;

	/** Unchecked costs owed to the store, per set of budget lines. */
	private final Map<List<String>, Pending> pending = new ConcurrentHashMap<>();

	private final java.util.concurrent.atomic.AtomicBoolean flushing = new java.util.concurrent.atomic.AtomicBoolean();

	private final TenantDirectory directory;

	private final BudgetStore store;

	private final TenantProperties.TenantMode mode;

	private final Duration timeout;

	private final TenantProperties.FailureMode failureMode;

	private final TenantProperties.Cost weights;

	private final GenAiMeters meters;

	private final LongSupplier clock;

	/** The last levels seen per budget line, of reported tenants only (bounded). */
	private final Map<String, double[]> lastLevels = new ConcurrentHashMap<>();

	/** Usage per reported tenant (configured, default, other). */
	private final Map<String, Usage> usage = new ConcurrentHashMap<>();

	private final AtomicLong lastFailureLog = new AtomicLong(Long.MIN_VALUE);

	private final AtomicLong failuresNotLogged = new AtomicLong();

	/** This gateway's prefix of the charges' names: other replicas share the store. */
	private final String chargeIds = Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36) + "-";

	private final AtomicLong chargeSequence = new AtomicLong();

	/**
	 * @param timeout longest wait for the store
	 * @param clock milliseconds since the epoch (to age the levels shown)
	 */
	public TokenBudgets(TenantDirectory directory, BudgetStore store, TenantProperties.TenantMode mode,
			Duration timeout, TenantProperties.FailureMode failureMode, TenantProperties.Cost weights,
			GenAiMeters meters, LongSupplier clock) {
		this.directory = directory;
		this.store = store;
		this.mode = mode;
		this.timeout = timeout;
		this.failureMode = failureMode;
		this.weights = weights;
		this.meters = meters;
		this.clock = clock;
	}

	public TenantDirectory directory() {
		return this.directory;
	}

	public TenantProperties.Cost weights() {
		return this.weights;
	}

	public TenantProperties.TenantMode mode() {
		return this.mode;
	}

	/** Where the budgets are kept: {@code local} or {@code redis}. */
	public String storeKind() {
		return this.store.kind();
	}

	/**
	 * Checks and charges {@code estimate} tokens to {@code tenant}'s budgets (and its
	 * budgets for {@code model}). Never fails; completes within the store timeout.
	 */
	public Mono<Admission> admit(String tenant, @Nullable String model, long estimate) {
		List<BudgetLine> lines = this.directory.lines(tenant, model);
		if (lines.isEmpty()) {
			return Mono.just(counted(new Admission(tenant, model, lines, 0, Admission.Outcome.ADMITTED, null)));
		}
		BudgetStore.Charge charge = this.mode == TenantProperties.TenantMode.SHADOW ? BudgetStore.Charge.SHADOW
				: BudgetStore.Charge.IF_ADMITTED;
		String id = nextChargeId();
		return this.store.charge(lines, estimate, charge, id).timeout(this.timeout).map(levels -> {
			remember(tenant, lines, levels);
			flushPending();
			Admission.Outcome outcome = levels.admitted() ? Admission.Outcome.ADMITTED
					: charge == BudgetStore.Charge.SHADOW ? Admission.Outcome.OVER_IN_SHADOW
							: Admission.Outcome.REFUSED;
			long charged = outcome == Admission.Outcome.REFUSED ? 0 : estimate;
			return counted(new Admission(tenant, model, lines, charged, outcome, levels));
		}).onErrorResume(ex -> {
			failed("admit", ex);
			// The store may yet apply it: then it is given back, so that a request served
			// unchecked (and charged its usage later) or refused is not charged its
			// estimate too.
			revoke(lines, id);
			Admission.Outcome outcome = this.failureMode == TenantProperties.FailureMode.OPEN
					? Admission.Outcome.UNCHECKED : Admission.Outcome.UNAVAILABLE;
			return Mono.just(counted(new Admission(tenant, model, lines, 0, outcome, null)));
		});
	}

	private Admission counted(Admission admission) {
		String reported = this.directory.reported(admission.tenant());
		this.meters.admission(reported, admission.outcome());
		Usage u = usage(reported);
		u.requests.increment();
		switch (admission.outcome()) {
			case REFUSED -> u.refused.increment();
			case OVER_IN_SHADOW -> u.overInShadow.increment();
			case UNCHECKED, UNAVAILABLE -> u.unchecked.increment();
			default -> {
			}
		}
		return admission;
	}

	/**
	 * Charges the difference between what {@code admission} took and {@code cost}, what
	 * the request actually cost, and counts its usage. Does not wait for the store.
	 * @param used the tokens the request used, as reported or estimated
	 */
	public void settle(Admission admission, long cost, TokenUsage used) {
		String reported = this.directory.reported(admission.tenant());
		Usage u = usage(reported);
		u.promptTokens.add(used.promptTokens());
		u.cachedTokens.add(used.cachedTokens());
		u.completionTokens.add(used.completionTokens());
		u.cost.add(cost);
		this.meters.charged(reported, cost);
		long adjustment = cost - admission.charged();
		if (adjustment == 0 || admission.lines().isEmpty()) {
			return;
		}
		if (admission.outcome() == Admission.Outcome.UNCHECKED) {
			// Nothing was taken, and the store failed a moment ago: charging now would
			// only
			// pile calls onto a store that is down. Owed until it answers again.
			owe(admission.lines(), adjustment);
			return;
		}
		this.store.charge(admission.lines(), adjustment, BudgetStore.Charge.ALWAYS)
			.timeout(this.timeout)
			.subscribe(levels -> remember(admission.tenant(), admission.lines(), levels), ex -> failed("settle", ex));
	}

	/** Costs of requests served unchecked, not yet charged to the store. */
	public long pendingTokens() {
		return this.pending.values().stream().mapToLong(p -> p.cost.get()).sum();
	}

	private void owe(List<BudgetLine> lines, long cost) {
		List<String> key = lines.stream().map(BudgetLine::key).toList();
		if (!this.pending.containsKey(key) && this.pending.size() >= MAX_PENDING) {
			failed("keep an unchecked charge", new IllegalStateException(
					MAX_PENDING + " budgets already owe unchecked charges; " + cost + " tokens dropped"));
			return;
		}
		// Atomic per key with the flush's remove: no cost lands on a removed entry.
		this.pending.compute(key, (k, p) -> {
			Pending owed = p != null ? p : new Pending(lines);
			owed.cost.addAndGet(cost);
			return owed;
		});
	}

	/**
	 * Charges what requests served unchecked owe, now that the store answered; one flush
	 * at a time, and what fails is owed again.
	 */
	private void flushPending() {
		if (this.pending.isEmpty() || !this.flushing.compareAndSet(false, true)) {
			return;
		}
		try {
			for (List<String> key : List.copyOf(this.pending.keySet())) {
				Pending p = this.pending.remove(key);
				long cost = p == null ? 0 : p.cost.get();
				if (cost == 0) {
					continue;
				}
				String id = nextChargeId();
				this.store.charge(p.lines, cost, BudgetStore.Charge.ALWAYS, id)
					.timeout(this.timeout)
					.subscribe(levels -> {
					}, ex -> {
						failed("charge unchecked usage", ex);
						// Owed again, and taken back should the store still apply it.
						revoke(p.lines, id);
						owe(p.lines, cost);
					});
			}
		}
		finally {
			this.flushing.set(false);
		}
	}

	/** A name for a charge the store may apply after this gateway stopped waiting. */
	private String nextChargeId() {
		return this.chargeIds + Long.toString(this.chargeSequence.incrementAndGet(), 36);
	}

	/**
	 * Takes back the charge {@code id}, which this gateway stopped waiting for; not
	 * waited for either (a store that failed a moment ago may take its time).
	 */
	private void revoke(List<BudgetLine> lines, String id) {
		this.store.revoke(lines, id).subscribe(null, ex -> failed("revoke", ex));
	}

	/** Cost owed to one set of budget lines. */
	private static final class Pending {

		final List<BudgetLine> lines;

		final AtomicLong cost = new AtomicLong();

		Pending(List<BudgetLine> lines) {
			this.lines = lines;
		}

	}

	private void remember(String tenant, List<BudgetLine> lines, BudgetStore.Levels levels) {
		if (TenantDirectory.OTHER.equals(this.directory.reported(tenant))) {
			return;
		}
		long now = this.clock.getAsLong();
		for (int i = 0; i < lines.size(); i++) {
			this.lastLevels.put(lines.get(i).key(), new double[] { levels.levels()[i], now });
		}
	}

	private Usage usage(String reported) {
		return this.usage.computeIfAbsent(reported, k -> new Usage());
	}

	private void failed(String operation, Throwable ex) {
		this.meters.storeFailure(operation, this.failureMode.name().toLowerCase(java.util.Locale.ROOT));
		long now = System.nanoTime();
		long last = this.lastFailureLog.get();
		if (last != Long.MIN_VALUE && now - last < Duration.ofSeconds(LOG_INTERVAL_SECONDS).toNanos()
				|| !this.lastFailureLog.compareAndSet(last, now)) {
			this.failuresNotLogged.incrementAndGet();
			return;
		}
		long more = this.failuresNotLogged.getAndSet(0);
		logger.warn("Token budget store failed to " + operation + " (failing "
				+ this.failureMode.name().toLowerCase(java.util.Locale.ROOT) + "): "
				+ NestedExceptionUtils.getMostSpecificCause(ex)
				+ (more > 0 ? " (and " + more + " more failures in the last " + LOG_INTERVAL_SECONDS + " s)" : ""));
	}

	/** Each reported tenant's settings, budgets (as last seen here) and usage. */
	public Map<String, TenantView> view() {
		Map<String, TenantView> view = new LinkedHashMap<>();
		this.directory.named().forEach((name, s) -> view.put(name, view(name, s)));
		view.put(TenantDirectory.DEFAULT, view(TenantDirectory.DEFAULT, this.directory.defaults()));
		Usage others = this.usage.get(TenantDirectory.OTHER);
		if (others != null) {
			view.put(TenantDirectory.OTHER, new TenantView(this.directory.defaults().weight(),
					this.directory.defaults().priority(), List.of(), others.snapshot()));
		}
		return view;
	}

	private TenantView view(String tenant, TenantSettings settings) {
		List<TenantView.Budget> budgets = new ArrayList<>();
		long now = this.clock.getAsLong();
		for (BudgetLine line : this.directory.lines(tenant, null)) {
			budgets.add(budget(line, null, now));
		}
		for (String model : settings.models().keySet()) {
			for (BudgetLine line : this.directory.lines(tenant, model)) {
				if (line.key().contains("}:model:")) {
					budgets.add(budget(line, model, now));
				}
			}
		}
		Usage u = this.usage.get(tenant);
		return new TenantView(settings.weight(), settings.priority(), budgets,
				u == null ? new TenantView.Counts(0, 0, 0, 0, 0, 0, 0, 0) : u.snapshot());
	}

	private TenantView.Budget budget(BudgetLine line, @Nullable String model, long now) {
		double[] last = this.lastLevels.get(line.key());
		double level = last == null ? line.limit() : line.refilled(last[0], now - (long) last[1]);
		return new TenantView.Budget(model, line.windowMillis() == BudgetLine.MINUTE_MILLIS ? "minute" : "day",
				line.limit(), (long) Math.floor(level), RateLimitHeaders.duration(line.millisUntilFull(level)));
	}

	/** One reported tenant's counts. */
	private static final class Usage {

		final LongAdder requests = new LongAdder();

		final LongAdder refused = new LongAdder();

		final LongAdder overInShadow = new LongAdder();

		final LongAdder unchecked = new LongAdder();

		final LongAdder promptTokens = new LongAdder();

		final LongAdder cachedTokens = new LongAdder();

		final LongAdder completionTokens = new LongAdder();

		final LongAdder cost = new LongAdder();

		TenantView.Counts snapshot() {
			return new TenantView.Counts(this.requests.sum(), this.refused.sum(), this.overInShadow.sum(),
					this.unchecked.sum(), this.promptTokens.sum(), this.cachedTokens.sum(), this.completionTokens.sum(),
					this.cost.sum());
		}

	}

}

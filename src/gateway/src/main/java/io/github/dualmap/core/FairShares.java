package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

/**
 * The tenants' accounts of one {@link DispatchQueues}, in the manner of the Virtual Token
 * Counter (Sheng et al., OSDI 2024): each tenant has a counter of the service released
 * for it divided by its weight, and an instance with room serves, of the tenants waiting
 * for it, the one of the highest priority band with the smallest counter; within that
 * tenant the queues' own order holds (longest cached prefix first, aged requests ahead),
 * so cache affinity and SLO classes work within each share. A tenant that starts waiting
 * has its counter lifted to the smallest of the waiting tenants of its band (to the last
 * served counter of its band when none waits), so time spent idle banks no credit. Every
 * instance serves whoever waits for it: the pool stays work-conserving.
 * <p>
 * A request's band is its own ({@link RoutingRequest#priority()}: its SLO class's, else
 * its tenant's), so one tenant may wait in several bands. An account is kept per tenant
 * and band, as the Kubernetes Inference Gateway's flow control keys its queues by
 * fairness id and priority: a tenant competes in each band with its service in that band,
 * and its batch traffic neither spends nor banks the credit of its interactive traffic.
 * <p>
 * Output tokens are known only at the end: a release charges the running mean of the
 * tenant's requests in its band (the pool's for a new account; at most the request's cap)
 * and {@link #correct} charges the difference. Not thread-safe: guarded by the queues'
 * lock.
 */
final class FairShares {

	/** Slots of the share window. */
	static final int BUCKETS = 12;

	/**
	 * Accounts kept; beyond this, accounts with nothing queued are dropped (oldest
	 * first), which lifts a returning tenant like any other that starts waiting.
	 */
	static final int MAX_ACCOUNTS = 4096;

	/** Weight of the newest output in a tenant's running mean of output tokens. */
	static final double OUTPUT_MEAN_ALPHA = 0.1;

	private final FairnessSettings settings;

	private final Comparator<RequestTicket> priorityOrder;

	private final Comparator<RequestTicket> agedOrder;

	private final long bucketNanos;

	// Keyed by tenant and band: a lookup by tenant name alone finds nothing.
	private final Map<Flow, Account> byFlow = new LinkedHashMap<>();

	// The accounts with requests waiting, so lifting and shedding look at these only.
	private final Set<Account> backlogged = new LinkedHashSet<>();

	// The same accounts by band, each band's by counter (then age), so a lift finds its
	// floor in O(log n).
	private final Map<Integer, TreeSet<Account>> backloggedByBand = new HashMap<>();

	private static final Comparator<Account> BY_COUNTER = (a, b) -> {
		int c = compareCounters(a, b);
		return c != 0 ? c : Long.compare(a.id, b.id);
	};

	// Numbers the accounts in the order they are made.
	private long accounts;

	// Per instance queue, its waiting requests by tenant and the order it serves them in.
	private final Map<InstanceQueue, QueueLanes> lanes = new LinkedHashMap<>();

	// Which lane an instance serves next: the highest band, then the smallest counter,
	// then the head that has waited longest (sequences are unique, so no two lanes tie).
	private static final Comparator<Lane> SERVICE_ORDER = (x, y) -> {
		Account a = x.account;
		Account b = y.account;
		if (a.priority != b.priority) {
			return a.priority > b.priority ? -1 : 1;
		}
		int c = compareCounters(a, b);
		return c != 0 ? c : Long.compare(x.byAged.first().sequence(), y.byAged.first().sequence());
	};

	// Smaller counter first; equal (0.0 and -0.0 alike) as the lift and the pass compare
	// them, where Double.compare would not be.
	private static int compareCounters(Account a, Account b) {
		return a.counter < b.counter ? -1 : a.counter > b.counter ? 1 : 0;
	}

	// Running mean of every tenant's output tokens; negative until a request finished.
	private double outputMean = -1;

	// Per priority band, the counter of the tenant served last.
	private final Map<Integer, Double> lastServed = new HashMap<>();

	// A queue keeps its lanes in SERVICE_ORDER from this many tenants waiting there until
	// fewer than half as many do; below, next passes over them.
	private final int orderFrom;

	// Whether a lift takes its floor from backloggedByBand (else from a pass over every
	// backlogged account).
	private final boolean orderedFloor;

	FairShares(FairnessSettings settings, Comparator<RequestTicket> priorityOrder, Comparator<RequestTicket> agedOrder,
			int orderFrom, boolean orderedFloor) {
		this.orderFrom = Math.max(1, orderFrom);
		this.orderedFloor = orderedFloor;
		this.settings = settings;
		this.priorityOrder = priorityOrder;
		this.agedOrder = agedOrder;
		this.bucketNanos = Math.max(1, settings.windowNanos() / BUCKETS);
	}

	FairnessSettings settings() {
		return settings;
	}

	boolean enabled() {
		return settings.enabled();
	}

	/** {@code q} joins the queue {@code iq}. */
	void add(RequestTicket q, InstanceQueue iq, long now) {
		Account a = account(q.request());
		q.account = a;
		if (a.queued == 0 && now > a.idleSinceNanos) {
			// Starts waiting (not merely moved between queues within one event).
			lift(a);
		}
		if (a.queued++ == 0) {
			backlogged.add(a);
			backloggedByBand.computeIfAbsent(a.priority, k -> new TreeSet<>(BY_COUNTER)).add(a);
		}
		if (settings.enabled()) {
			QueueLanes waiting = lanes.computeIfAbsent(iq, k -> new QueueLanes());
			Lane lane = waiting.byAccount.get(a);
			if (lane == null) {
				lane = new Lane(a, waiting);
				lane.add(q);
				waiting.byAccount.put(a, lane);
				if (waiting.order != null) {
					waiting.order.add(lane);
					a.ordered.add(lane);
				}
				else if (waiting.byAccount.size() >= orderFrom) {
					startOrder(waiting);
				}
				return;
			}
			// The lane's place in the order depends on its head.
			boolean newHead = waiting.order != null && agedOrder.compare(q, lane.byAged.first()) < 0;
			if (newHead) {
				waiting.order.remove(lane);
			}
			lane.add(q);
			if (newHead) {
				waiting.order.add(lane);
			}
		}
	}

	// Puts every lane of the queue in its order.
	private void startOrder(QueueLanes waiting) {
		TreeSet<Lane> order = new TreeSet<>(SERVICE_ORDER);
		for (Lane l : waiting.byAccount.values()) {
			order.add(l);
			l.account.ordered.add(l);
		}
		waiting.order = order;
	}

	// Leaves the queue's lanes unordered: next passes over them.
	private void stopOrder(QueueLanes waiting) {
		for (Lane l : waiting.byAccount.values()) {
			l.account.ordered.remove(l);
		}
		waiting.order = null;
	}

	/**
	 * {@code q} is released as it arrives, without waiting in a queue
	 * ({@link ReleasePass#releaseAtOnce}): its tenant's account as after joining a queue
	 * and leaving it at {@code now} ({@link #add}, {@link #remove}).
	 */
	void passThrough(RequestTicket q, long now) {
		Account a = account(q.request());
		q.account = a;
		if (a.queued == 0) {
			if (now > a.idleSinceNanos) {
				lift(a);
			}
			a.idleSinceNanos = now;
		}
	}

	/** {@code q} leaves the queue {@code iq}. */
	void remove(RequestTicket q, InstanceQueue iq, long now) {
		Account a = q.account;
		if (a == null) {
			return;
		}
		if (--a.queued == 0) {
			a.idleSinceNanos = now;
			backlogged.remove(a);
			TreeSet<Account> band = backloggedByBand.get(a.priority);
			band.remove(a);
			if (band.isEmpty()) {
				backloggedByBand.remove(a.priority);
			}
		}
		if (!settings.enabled()) {
			return;
		}
		QueueLanes waiting = lanes.get(iq);
		Lane lane = waiting == null ? null : waiting.byAccount.get(a);
		if (lane == null) {
			return;
		}
		TreeSet<Lane> order = waiting.order;
		boolean head = order != null && lane.byAged.first() == q;
		if (head) {
			order.remove(lane);
		}
		lane.remove(q);
		if (lane.byPriority.isEmpty()) {
			waiting.byAccount.remove(a);
			if (order != null) {
				a.ordered.remove(lane);
				if (waiting.byAccount.size() < orderFrom / 2) {
					stopOrder(waiting);
				}
			}
			if (waiting.byAccount.isEmpty()) {
				lanes.remove(iq);
			}
		}
		else if (head) {
			order.add(lane);
		}
	}

	/**
	 * How many tenant accounts have requests waiting in {@code iq} (0 without fair
	 * shares). With one, {@link #next} is that tenant's aged request, else its longest
	 * cached prefix: it depends on the queue's requests and the time alone.
	 */
	int tenantsWaiting(InstanceQueue iq) {
		QueueLanes waiting = lanes.get(iq);
		return waiting == null ? 0 : waiting.byAccount.size();
	}

	/**
	 * The request {@code iq} releases next: of the tenants waiting there, the highest
	 * band, then the smallest counter (the longest waiting head on a tie); of that
	 * tenant's requests, an aged one first, else the longest cached prefix.
	 */
	RequestTicket next(InstanceQueue iq, long now) {
		QueueLanes waiting = lanes.get(iq);
		if (waiting == null || waiting.byAccount.isEmpty()) {
			throw new IllegalStateException("no request of any tenant waits for " + iq.state.id());
		}
		TreeSet<Lane> order = waiting.order;
		Lane best = order != null ? order.first() : scan(waiting);
		RequestTicket aged = best.byAged.first();
		return now >= aged.agedAtNanos ? aged : best.byPriority.first();
	}

	// The first lane in SERVICE_ORDER, by a pass over them all.
	private static Lane scan(QueueLanes waiting) {
		Lane best = null;
		for (Lane l : waiting.byAccount.values()) {
			if (best == null || SERVICE_ORDER.compare(l, best) < 0) {
				best = l;
			}
		}
		return best;
	}

	/**
	 * Charges {@code q}'s tenant for its release: its prompt as placed (uncached and
	 * cached) and its output estimate.
	 */
	void charge(RequestTicket q, long now) {
		Account a = q.account;
		if (a == null) {
			// Released without waiting (pass-through, or at once): it arrived while its
			// tenant waited for nothing.
			a = account(q.request());
			q.account = a;
			if (a.queued == 0) {
				lift(a);
			}
		}
		int output = outputEstimate(a, q.request().maxOutputTokens());
		double service = q.uncachedTokens + q.cachedTokens * settings.cachedPromptWeight()
				+ output * settings.outputWeight();
		q.chargedOutput = output;
		setCounter(a, a.counter + service / a.weight);
		a.unshared += service;
		a.record(service, now, bucketNanos);
		lastServed.put(a.priority, a.counter);
	}

	/**
	 * {@code q} finished with {@code outputTokens}: charges its tenant the difference to
	 * the estimate charged at release, once; nothing for a request never released.
	 */
	void correct(RequestTicket q, int outputTokens, long now) {
		Account a = q.account;
		if (a == null || q.state() != RequestTicket.State.RELEASED || q.outputCorrected) {
			return;
		}
		q.outputCorrected = true;
		int actual = Math.max(0, outputTokens);
		double delta = (actual - q.chargedOutput) * settings.outputWeight();
		setCounter(a, a.counter + delta / a.weight);
		a.unshared += delta;
		a.record(delta, now, bucketNanos);
		a.outputMean = a.outputMean < 0 ? actual : a.outputMean + OUTPUT_MEAN_ALPHA * (actual - a.outputMean);
		outputMean = outputMean < 0 ? actual : outputMean + OUTPUT_MEAN_ALPHA * (actual - outputMean);
	}

	/**
	 * The service charged here ({@link #charge} and {@link #correct}) since the last
	 * call, by account (a tenant in a band, keyed as {@link Flow#key()} writes it), and
	 * starts counting anew: what this replica adds to the pool's account shared with the
	 * other replicas. Every account is in it, 0 when it was not served (at most
	 * {@link #MAX_ACCOUNTS}); the service of an account dropped as idle is lost.
	 */
	Map<String, Double> takeLocalService() {
		Map<String, Double> out = new LinkedHashMap<>();
		byFlow.forEach((flow, a) -> {
			out.put(flow.key(), a.unshared);
			a.unshared = 0;
		});
		return out;
	}

	/**
	 * Credits the account {@code key} ({@link Flow#key()}) with {@code service} released
	 * for it elsewhere (by other replicas for the same pool): its counter grows by the
	 * service over the tenant's weight, and the service counts in its share of the
	 * window, as if released here. An account this replica does not have is not credited:
	 * it is lifted like any other once it starts waiting; nor is a key that names no
	 * band.
	 * @return whether an account was credited
	 */
	boolean credit(String key, double service, long now) {
		Flow flow = Flow.parse(key);
		Account a = flow == null ? null : byFlow.get(flow);
		if (a == null || service == 0 || !Double.isFinite(service)) {
			return false;
		}
		setCounter(a, a.counter + service / a.weight);
		a.record(service, now, bucketNanos);
		return true;
	}

	/**
	 * Output tokens charged at release: the tenant's running mean (the pool's for a
	 * tenant none of whose requests finished, the settings' initial estimate before any
	 * did), at most the cap.
	 */
	private int outputEstimate(Account a, int cap) {
		double mean = a.outputMean >= 0 ? a.outputMean : outputMean >= 0 ? outputMean : settings.initialOutputTokens();
		long estimate = Math.round(mean);
		return (int) (cap > 0 ? Math.min(cap, estimate) : estimate);
	}

	/** The priority band of {@code q} ({@link RoutingRequest#priority()}). */
	int priority(RequestTicket q) {
		return q.account != null ? q.account.priority : q.request().priority();
	}

	/**
	 * {@code q}'s tenant's backlog in {@code q}'s band: its requests waiting there in the
	 * pool over its weight, {@code q} included (an arrival not yet queued counts itself).
	 */
	double backlog(RequestTicket q) {
		Account a = q.account;
		if (a != null && q.state() == RequestTicket.State.QUEUED && q.queue != null) {
			return a.queued / a.weight;
		}
		Tenant t = q.request().tenantOrDefault();
		Account known = byFlow.get(new Flow(t.name(), q.request().priority()));
		return ((known == null ? 0 : known.queued) + 1) / t.weight();
	}

	/** Whether {@code arrival}'s tenant is the same as {@code queued}'s. */
	boolean sameTenant(RequestTicket arrival, RequestTicket queued) {
		return queued.account != null && queued.account.name.equals(arrival.request().tenantOrDefault().name());
	}

	/**
	 * Whether some request waits in a lower band than {@code arrival}'s (of any tenant),
	 * or another tenant waits in its band with a larger backlog for its weight: whether
	 * shedding for it has a candidate at all.
	 */
	boolean mayDisplace(RequestTicket arrival) {
		if (!settings.enabled()) {
			return false;
		}
		String name = arrival.request().tenantOrDefault().name();
		int p = priority(arrival);
		double mine = backlog(arrival);
		for (Account a : backlogged) {
			if (a.priority < p || (a.priority == p && !a.name.equals(name) && a.queued / a.weight > mine)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Every tenant with recent service or waiting requests, largest share first; a tenant
	 * active in several bands once, with its service and waiting requests summed over
	 * them, the highest of them as its band and that band's counter.
	 */
	List<TenantShare> shares(long now) {
		double total = 0;
		Map<String, Account> top = new LinkedHashMap<>();
		Map<String, double[]> sums = new HashMap<>();
		for (Account a : byFlow.values()) {
			double served = a.served(now, bucketNanos);
			if (served > 0 || a.queued > 0) {
				total += served;
				top.merge(a.name, a, (x, y) -> y.priority > x.priority ? y : x);
				double[] sum = sums.computeIfAbsent(a.name, k -> new double[2]);
				sum[0] += served;
				sum[1] += a.queued;
			}
		}
		double weights = 0;
		for (Account a : top.values()) {
			weights += a.weight;
		}
		List<TenantShare> out = new ArrayList<>();
		for (Account a : top.values()) {
			double[] sum = sums.get(a.name);
			out.add(new TenantShare(a.name, a.weight, a.priority, (int) sum[1], sum[0], total > 0 ? sum[0] / total : 0,
					a.weight / weights, a.counter));
		}
		out.sort(Comparator.comparingDouble(TenantShare::share).reversed().thenComparing(TenantShare::tenant));
		return out;
	}

	/** The account of {@code r}'s tenant in {@code r}'s band. */
	private Account account(RoutingRequest r) {
		Tenant t = r.tenantOrDefault();
		Flow flow = new Flow(t.name(), r.priority());
		Account a = byFlow.get(flow);
		if (a == null) {
			if (byFlow.size() >= MAX_ACCOUNTS) {
				dropIdle();
			}
			a = new Account(t.name(), flow.priority(), accounts++);
			byFlow.put(flow, a);
		}
		a.weight = t.weight();
		return a;
	}

	private void dropIdle() {
		Iterator<Account> it = byFlow.values().iterator();
		int drop = MAX_ACCOUNTS / 8;
		while (it.hasNext() && drop > 0) {
			if (it.next().queued == 0) {
				it.remove();
				drop--;
			}
		}
	}

	/** Lifts {@code a}, which starts waiting, to the floor of its band. */
	private void lift(Account a) {
		double floor = floor(a, a.priority);
		if (!Double.isNaN(floor)) {
			setCounter(a, Math.max(a.counter, floor));
		}
	}

	/**
	 * Sets {@code a}'s counter, keeping its lanes in their places in the orders of the
	 * queues it waits in that keep one, and itself in its band's backlogged accounts.
	 */
	private void setCounter(Account a, double counter) {
		if (counter == a.counter) {
			return;
		}
		for (Lane l : a.ordered) {
			l.queue.order().remove(l);
		}
		TreeSet<Account> band = a.queued > 0 ? backloggedByBand.get(a.priority) : null;
		if (band != null) {
			band.remove(a);
		}
		a.counter = counter;
		if (band != null) {
			band.add(a);
		}
		for (Lane l : a.ordered) {
			l.queue.order().add(l);
		}
	}

	/**
	 * The smallest counter of the tenants other than {@code self} waiting in band
	 * {@code priority}; when none waits, the counter of the band's last served tenant;
	 * NaN when the band has served nobody.
	 */
	private double floor(@Nullable Account self, int priority) {
		double min = orderedFloor ? smallestInOrder(self, priority) : smallestByPass(self, priority);
		if (!Double.isNaN(min)) {
			return min;
		}
		Double last = lastServed.get(priority);
		return last == null ? Double.NaN : last;
	}

	// The smallest counter of the band's waiting tenants other than self, NaN for none:
	// the first of them kept by counter.
	private double smallestInOrder(@Nullable Account self, int priority) {
		TreeSet<Account> band = backloggedByBand.get(priority);
		if (band != null) {
			for (Account b : band) {
				if (b != self) {
					return b.counter;
				}
			}
		}
		return Double.NaN;
	}

	// The same by a pass over every waiting tenant.
	private double smallestByPass(@Nullable Account self, int priority) {
		double min = Double.NaN;
		for (Account b : backlogged) {
			if (b != self && b.priority == priority && !(b.counter >= min)) {
				min = b.counter;
			}
		}
		return min;
	}

	/** What an account is kept for: a tenant in one priority band. */
	private record Flow(String tenant, int priority) {

		/**
		 * Its key as replicas share it: {@code <band>:<tenant>} (the band first, so a
		 * tenant name may hold any character).
		 */
		String key() {
			return priority + ":" + tenant;
		}

		/** The flow {@code key} names, {@code null} when it names no band. */
		static @Nullable Flow parse(String key) {
			int colon = key.indexOf(':');
			if (colon <= 0) {
				return null;
			}
			try {
				return new Flow(key.substring(colon + 1), Integer.parseInt(key.substring(0, colon)));
			}
			catch (NumberFormatException ex) {
				return null;
			}
		}

	}

	/** One tenant's account in one priority band. */
	static final class Account {

		final String name;

		final int priority;

		// Made before every account with a larger id.
		final long id;

		double weight = 1;

		double counter;

		// Requests of the tenant in this band waiting in any queue of the pool.
		int queued;

		// When the tenant last stopped waiting.
		long idleSinceNanos = Long.MIN_VALUE;

		// Running mean of the output tokens of the tenant's requests in this band;
		// negative until one finished.
		double outputMean = -1;

		// Service charged here and not yet taken by takeLocalService.
		double unshared;

		// Its lanes (its requests waiting in one queue) in the queues that keep theirs in
		// order: each is put back in place when the counter changes.
		final List<Lane> ordered = new ArrayList<>(1);

		private final double[] served = new double[BUCKETS];

		private final long[] slot = new long[BUCKETS];

		Account(String name, int priority, long id) {
			this.name = name;
			this.priority = priority;
			this.id = id;
			Arrays.fill(slot, Long.MIN_VALUE);
		}

		void record(double service, long now, long bucketNanos) {
			long index = Math.floorDiv(now, bucketNanos);
			int i = (int) Math.floorMod(index, (long) BUCKETS);
			if (slot[i] != index) {
				slot[i] = index;
				served[i] = 0;
			}
			served[i] += service;
		}

		double served(long now, long bucketNanos) {
			long index = Math.floorDiv(now, bucketNanos);
			double sum = 0;
			for (int i = 0; i < BUCKETS; i++) {
				if (slot[i] != Long.MIN_VALUE && slot[i] > index - BUCKETS && slot[i] <= index) {
					sum += served[i];
				}
			}
			return Math.max(0, sum);
		}

	}

	/** The tenants waiting in one instance queue. */
	private static final class QueueLanes {

		// Insertion order keeps simulations reproducible.
		final Map<Account, Lane> byAccount = new LinkedHashMap<>();

		// Every lane of byAccount, the one served next first (SERVICE_ORDER), while many
		// tenants wait here; null while few do.
		@Nullable TreeSet<Lane> order;

		// The order of a queue one of whose lanes is in an account's ordered list.
		TreeSet<Lane> order() {
			TreeSet<Lane> o = this.order;
			if (o == null) {
				throw new IllegalStateException("a lane of an unordered queue is listed as ordered");
			}
			return o;
		}

	}

	/**
	 * One tenant's requests waiting for one instance, in the queues' two orders. Its
	 * place in its queue's order follows its account's counter and its head, so it is
	 * taken out of that order before either changes and put back after.
	 */
	private final class Lane {

		final Account account;

		final QueueLanes queue;

		final TreeSet<RequestTicket> byPriority = new TreeSet<>(priorityOrder);

		final TreeSet<RequestTicket> byAged = new TreeSet<>(agedOrder);

		Lane(Account account, QueueLanes queue) {
			this.account = account;
			this.queue = queue;
		}

		void add(RequestTicket q) {
			byPriority.add(q);
			byAged.add(q);
		}

		void remove(RequestTicket q) {
			byPriority.remove(q);
			byAged.remove(q);
		}

	}

}

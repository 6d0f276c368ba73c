package io.github.dualmap.tenant;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dualmap.core.DispatchQueues;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.context.SmartLifecycle;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * One fairness account per pool for every gateway replica, through Redis: every
 * {@code dualmap.tenants.redis.fairness-sync-interval} a background task adds the service
 * this replica's dispatch queues charged each tenant since its last sync
 * ({@link DispatchQueues#takeLocalService()}) into a Redis hash per pool, reads back the
 * pool's totals, and credits each tenant with what the other replicas served it since
 * ({@link DispatchQueues#creditRemoteService}): the virtual token counters of every
 * replica then count the whole pool's service, so a tenant served on one replica waits on
 * another behind tenants that were not.
 * <p>
 * The task never runs on a request's path and holds no queue lock during Redis I/O. When
 * Redis fails or does not answer within the interval, each replica keeps its own account
 * (logged once per outage, counted in {@code dualmap.tenants.fairness.sync.failures},
 * {@code dualmap.tenants.fairness.shared} 0) and keeps what it charged meanwhile, added
 * once Redis answers again. Each batch carries this replica's sequence number, kept in
 * the hash, so a batch that timed out after Redis applied it is not added twice.
 * <p>
 * Bounded: a sync names at most {@value DispatchQueues#MAX_TENANT_ACCOUNTS} tenants (the
 * queues' accounts); a hash grown past {@value #MAX_FIELDS} fields (tenant names churned
 * by clients) is dropped and starts anew, which every replica notices by the hash's epoch
 * and counts from there; a hash no replica touched for {@value #TTL_MILLIS} ms expires.
 */
public final class RedisFairnessSync implements SmartLifecycle, FairnessAccounts {

	/** Fields a pool's hash may hold before it is dropped and starts anew. */
	static final int MAX_FIELDS = 4 * DispatchQueues.MAX_TENANT_ACCOUNTS + 64;

	/** How long a pool's hash lives after its last sync. */
	static final long TTL_MILLIS = 3_600_000;

	/**
	 * KEYS[1]: the pool's hash. ARGV: TTL in ms, most fields, this replica's sequence
	 * field, the batch's sequence number, then account (`<band>:<tenant>`) and service
	 * pairs. Adds the service unless this batch was applied already, and answers the
	 * hash's epoch then each account's total ('' for none). Account keys never start with
	 * '#'.
	 */
	static final String SCRIPT = """
			local key = KEYS[1]
			if redis.call('HLEN', key) > tonumber(ARGV[2]) then
			  redis.call('DEL', key)
			end
			local epoch = redis.call('HGET', key, '#epoch')
			if not epoch then
			  local t = redis.call('TIME')
			  epoch = t[1] .. '.' .. t[2]
			  redis.call('HSET', key, '#epoch', epoch)
			end
			local applied = redis.call('HGET', key, ARGV[3])
			local apply = (not applied) or tonumber(applied) < tonumber(ARGV[4])
			if apply then
			  redis.call('HSET', key, ARGV[3], ARGV[4])
			end
			local out = { epoch }
			for i = 5, #ARGV, 2 do
			  local total
			  if apply and tonumber(ARGV[i + 1]) ~= 0 then
			    total = redis.call('HINCRBYFLOAT', key, ARGV[i], ARGV[i + 1])
			  else
			    total = redis.call('HGET', key, ARGV[i])
			  end
			  out[#out + 1] = total or ''
			end
			redis.call('PEXPIRE', key, ARGV[1])
			return out
			""";

	private static final Log logger = LogFactory.getLog(RedisFairnessSync.class);

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> REDIS_SCRIPT = RedisScript.of(SCRIPT, List.class);

	private final ReactiveStringRedisTemplate redis;

	private final Duration interval;

	private final Map<String, PoolAccount> accounts = new LinkedHashMap<>();

	// Whether the last sync of some pool failed: the outage being logged.
	private volatile boolean outage;

	private volatile @Nullable Disposable task;

	/**
	 * @param pools each pool's dispatch queues by service id
	 * @param keyPrefix prefix of every key ({@code dualmap.tenants.redis.key-prefix}); a
	 * pool's hash is {@code <prefix>fairness:{<service>}}
	 * @param interval time between syncs, and the longest wait for Redis's answer
	 */
	public RedisFairnessSync(ReactiveStringRedisTemplate redis, Map<String, DispatchQueues> pools, String keyPrefix,
			Duration interval, MeterRegistry meters) {
		if (interval.isNegative() || interval.isZero()) {
			throw new IllegalArgumentException("the fairness sync interval must be > 0 but was " + interval);
		}
		this.redis = redis;
		this.interval = interval;
		String replica = UUID.randomUUID().toString();
		pools.forEach((service, queues) -> {
			PoolAccount p = new PoolAccount(service, queues, keyPrefix + "fairness:{" + service + "}", "#r:" + replica);
			this.accounts.put(service, p);
			FunctionCounter.builder("dualmap.tenants.fairness.syncs", p, a -> a.syncs.get())
				.description("Syncs of the pool's fairness account with the other replicas through Redis")
				.tag("pool", service)
				.register(meters);
			FunctionCounter.builder("dualmap.tenants.fairness.sync.failures", p, a -> a.failures.get())
				.description("Syncs of the pool's fairness account that failed or timed out (the replica then "
						+ "releases by its own account)")
				.tag("pool", service)
				.register(meters);
			Gauge.builder("dualmap.tenants.fairness.shared", p, a -> a.inSync ? 1 : 0)
				.description("1 while the pool's fairness account is shared with the other replicas (last sync "
						+ "succeeded), 0 while this replica releases by its own")
				.tag("pool", service)
				.register(meters);
		});
	}

	@Override
	public void start() {
		if (this.task != null) {
			return;
		}
		this.task = Flux.interval(this.interval)
			.onBackpressureDrop()
			.concatMap(tick -> syncOnce(), 1)
			.subscribe(null, ex -> logger.error("Fairness account sync stopped", ex));
	}

	@Override
	public void stop() {
		Disposable t = this.task;
		this.task = null;
		if (t != null) {
			t.dispose();
		}
	}

	@Override
	public boolean isRunning() {
		return this.task != null;
	}

	/** Syncs every pool once, one after the other; never fails. */
	Mono<Void> syncOnce() {
		return Flux.fromIterable(this.accounts.values()).concatMap(p -> Mono.defer(() -> sync(p)).onErrorResume(ex -> {
			// Not Redis (its failures are handled where they occur): counted, logged
			// like one, and the next tick tries again.
			p.failed(ex, !this.outage);
			this.outage = true;
			return Mono.just(Boolean.FALSE);
		})).reduce(Boolean.TRUE, Boolean::logicalAnd).doOnNext(ok -> {
			if (!ok) {
				this.outage = true;
			}
			else if (this.outage) {
				this.outage = false;
				logger.info("Fairness accounts shared through Redis again");
			}
		}).then();
	}

	private Mono<Boolean> sync(PoolAccount p) {
		p.add(p.queues.takeLocalService());
		Mono<Boolean> retry = p.unconfirmed == null ? Mono.just(Boolean.TRUE) : send(p, p.unconfirmed);
		return retry.flatMap(ok -> {
			if (!ok) {
				return Mono.just(Boolean.FALSE);
			}
			Batch batch = p.next();
			return send(p, batch);
		});
	}

	/** Sends {@code batch}, credits the other replicas' service; never fails. */
	private Mono<Boolean> send(PoolAccount p, Batch batch) {
		p.unconfirmed = batch;
		List<String> args = new ArrayList<>(4 + 2 * batch.service.size());
		args.add(Long.toString(TTL_MILLIS));
		args.add(Integer.toString(MAX_FIELDS));
		args.add(p.replicaField);
		args.add(Long.toString(batch.sequence));
		batch.service.forEach((tenant, service) -> {
			args.add(tenant);
			args.add(BigDecimal.valueOf(service).toPlainString());
		});
		return Mono.defer(() -> this.redis.execute(REDIS_SCRIPT, List.of(p.key), args).next())
			.timeout(this.interval)
			.map(result -> {
				p.confirmed(batch, result);
				return Boolean.TRUE;
			})
			.onErrorResume(ex -> {
				p.failed(ex, !this.outage);
				this.outage = true;
				return Mono.just(Boolean.FALSE);
			});
	}

	@Override
	public FairnessAccounts.@Nullable Status status(String service) {
		PoolAccount p = this.accounts.get(service);
		if (p == null) {
			return null;
		}
		long last = p.lastSyncMillis;
		return new Status(true, p.inSync,
				last == Long.MIN_VALUE ? null : Math.max(0, System.currentTimeMillis() - last), p.syncs.get(),
				p.failures.get());
	}

	/** One batch of a replica's service, by tenant. */
	private record Batch(long sequence, Map<String, Double> service) {

	}

	/** One pool's side of the shared account. Touched by one sync at a time. */
	private static final class PoolAccount {

		final String service;

		final DispatchQueues queues;

		final String key;

		final String replicaField;

		// Service charged here and not sent yet, by tenant.
		private Map<String, Double> pending = new LinkedHashMap<>();

		// A batch sent whose outcome is unknown (failed or timed out): sent again first.
		@Nullable Batch unconfirmed;

		private long sequence;

		// The hash's epoch and each tenant's total as last read.
		private @Nullable String epoch;

		private Map<String, Double> seen = new HashMap<>();

		volatile boolean inSync;

		volatile long lastSyncMillis = Long.MIN_VALUE;

		final AtomicLong syncs = new AtomicLong();

		final AtomicLong failures = new AtomicLong();

		PoolAccount(String service, DispatchQueues queues, String key, String replicaField) {
			this.service = service;
			this.queues = queues;
			this.key = key;
			this.replicaField = replicaField;
		}

		/** Adds what the queues charged; tenants past the bound are not kept. */
		void add(Map<String, Double> local) {
			local.forEach((tenant, service) -> {
				if (this.pending.containsKey(tenant) || this.pending.size() < DispatchQueues.MAX_TENANT_ACCOUNTS) {
					this.pending.merge(tenant, service, Double::sum);
				}
			});
		}

		Batch next() {
			Batch b = new Batch(++this.sequence, this.pending);
			this.pending = new LinkedHashMap<>();
			return b;
		}

		/**
		 * Redis applied {@code batch} (now or before) and answered {@code result}:
		 * credits each tenant the change of its total that is not this replica's.
		 */
		void confirmed(Batch batch, List<?> result) {
			if (result.size() != batch.service.size() + 1) {
				throw new IllegalStateException("fairness script answered " + result.size() + " values for "
						+ batch.service.size() + " tenants");
			}
			String epoch = String.valueOf(result.get(0));
			boolean same = epoch.equals(this.epoch);
			boolean first = this.epoch == null;
			Map<String, Double> seen = new HashMap<>();
			Map<String, Double> credit = new LinkedHashMap<>();
			int i = 1;
			for (Map.Entry<String, Double> e : batch.service.entrySet()) {
				String value = String.valueOf(result.get(i++));
				double total = value.isEmpty() ? 0 : Double.parseDouble(value);
				seen.put(e.getKey(), total);
				double own = e.getValue();
				Double last = this.seen.get(e.getKey());
				double remote;
				if (first) {
					// Nothing read yet: what came before is no recent service.
					remote = 0;
				}
				else if (!same) {
					// A new hash (Redis restarted, the hash expired or was dropped): what
					// it holds besides this batch came since.
					remote = Math.max(0, total - own);
				}
				else if (last != null) {
					remote = total - last - own;
				}
				else {
					// A tenant first named here: its total so far is its past.
					remote = 0;
				}
				if (remote != 0 && Double.isFinite(remote)) {
					credit.put(e.getKey(), remote);
				}
			}
			this.epoch = epoch;
			this.seen = seen;
			this.unconfirmed = null;
			if (!credit.isEmpty()) {
				this.queues.creditRemoteService(credit);
			}
			this.syncs.incrementAndGet();
			this.lastSyncMillis = System.currentTimeMillis();
			this.inSync = true;
		}

		void failed(Throwable ex, boolean log) {
			this.failures.incrementAndGet();
			this.inSync = false;
			if (log) {
				logger.warn("Fairness account of pool '" + this.service + "' not shared through Redis ("
						+ NestedExceptionUtils.getMostSpecificCause(ex)
						+ "): releases follow this replica's own account until Redis answers again, "
						+ "and the service charged meanwhile is added then");
			}
		}

	}

}

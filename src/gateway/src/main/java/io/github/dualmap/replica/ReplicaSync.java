package io.github.dualmap.replica;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import io.github.dualmap.core.Decision;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.NanoClock;
import io.github.dualmap.core.PromptBlocks;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.gateway.DualMapListener;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.ServicePool;
import io.github.dualmap.gateway.StoredResponses;
import org.jspecify.annotations.Nullable;

/**
 * This replica's side of replica sync: buffers every release (a decision's prompt chain
 * and instance) for the {@link ReplicaPublisher}, and applies the batches its peers
 * publish to the shadow indexes of its own pools. With load sharing on, it also gives the
 * publisher this replica's load per instance ({@link #localLoad()}) and keeps each peer's
 * last published load, summed per instance into {@link InstanceState#peerLoad}, so that
 * the dispatch queues' release limit and the load estimates count what every replica
 * sent; a peer's load is forgotten when nothing came from it for the load TTL.
 * Thread-safe; {@link #onDecision} is on the request path and never blocks.
 */
public final class ReplicaSync implements DualMapListener {

	private final DualMapRegistry registry;

	private final String replicaId;

	private final String hashing;

	private final int maxBuffered;

	private final ConcurrentLinkedQueue<ReleaseBatch.Release> buffer = new ConcurrentLinkedQueue<>();

	private final AtomicInteger buffered = new AtomicInteger();

	private final LongAdder dropped = new LongAdder();

	private final LongAdder sent = new LongAdder();

	private final LongAdder applied = new LongAdder();

	private final LongAdder ignored = new LongAdder();

	private final LongAdder refusedBatches = new LongAdder();

	private final LongAdder failedPublications = new LongAdder();

	/** Each peer's last published load and when it arrived; guarded by itself. */
	private final Map<String, PeerLoad> peerLoads = new HashMap<>();

	/**
	 * Peers whose last release batch carried no load, and when; guarded by peerLoads.
	 */
	private final Map<String, Long> withoutLoad = new HashMap<>();

	/** The sum of {@link #peerLoads} per instance, kept in step; guarded by peerLoads. */
	private final Map<InstanceKey, long[]> totals = new HashMap<>();

	/** How long a peer's load counts after its last publication; 0: load not shared. */
	private volatile long loadTtlNanos;

	private final NanoClock clock;

	/** Where peers' stored responses go; null: they are ignored. */
	private volatile @Nullable StoredResponses storedResponses;

	/**
	 * @param registry the pools whose shadow indexes peers' releases enter
	 * @param hashing this replica's {@link #hashingFingerprint}
	 * @param maxBuffered most releases waiting to be published
	 */
	public ReplicaSync(DualMapRegistry registry, String hashing, int maxBuffered) {
		this(registry, UUID.randomUUID().toString(), hashing, maxBuffered);
	}

	ReplicaSync(DualMapRegistry registry, String replicaId, String hashing, int maxBuffered) {
		this(registry, replicaId, hashing, maxBuffered, NanoClock.SYSTEM);
	}

	ReplicaSync(DualMapRegistry registry, String replicaId, String hashing, int maxBuffered, NanoClock clock) {
		if (maxBuffered <= 0) {
			throw new IllegalArgumentException("maxBuffered must be > 0 but was " + maxBuffered);
		}
		this.registry = registry;
		this.replicaId = replicaId;
		this.hashing = hashing;
		this.maxBuffered = maxBuffered;
		this.clock = clock;
	}

	/**
	 * Shares load too: this replica's load goes out with its publications, and its peers'
	 * count here until {@code ttl} after the last publication from each.
	 * @return this
	 */
	public ReplicaSync shareLoad(Duration ttl) {
		if (ttl.toNanos() <= 0) {
			throw new IllegalArgumentException("load TTL must be > 0 but was " + ttl);
		}
		this.loadTtlNanos = ttl.toNanos();
		return this;
	}

	/** Whether this replica shares its load with its peers. */
	public boolean sharesLoad() {
		return this.loadTtlNanos > 0;
	}

	/**
	 * Names the prompt hashing parameters: replicas match each other's chains only when
	 * they hash prompts alike.
	 */
	public static String hashingFingerprint(int blockChars, double charsPerToken, int blockTokens) {
		return String.format(Locale.ROOT, "xxh3-chain;block-chars=%d;chars-per-token=%s;block-tokens=%d", blockChars,
				Double.toString(charsPerToken), blockTokens);
	}

	/**
	 * Shares stored responses too: which instance answered which Responses API response
	 * is published with the releases, and peers' ones enter {@code stored}, so a
	 * continuation reaching any replica is pinned to the instance holding its response.
	 * @return this
	 */
	public ReplicaSync shareStoredResponses(StoredResponses stored) {
		this.storedResponses = stored;
		return this;
	}

	@Override
	public void onDecision(String service, RoutingRequest request, Decision decision) {
		PromptBlocks blocks = request.blocks();
		if (blocks != null) {
			buffer(new ReleaseBatch.Release(service, decision.instanceId(), blocks.chain()));
		}
	}

	@Override
	public void onResponseStored(String service, String instanceId, String responseId) {
		if (this.storedResponses != null) {
			buffer(new ReleaseBatch.Release(service, instanceId, NO_BLOCKS, responseId));
		}
	}

	private static final long[] NO_BLOCKS = new long[0];

	private void buffer(ReleaseBatch.Release release) {
		if (this.buffered.incrementAndGet() > this.maxBuffered) {
			this.buffered.decrementAndGet();
			this.dropped.increment();
			return;
		}
		this.buffer.add(release);
	}

	/** Takes up to {@code max} buffered releases, oldest first. */
	List<ReleaseBatch.Release> take(int max) {
		List<ReleaseBatch.Release> out = new ArrayList<>(Math.min(max, Math.max(0, this.buffered.get())));
		ReleaseBatch.Release r;
		while (out.size() < max && (r = this.buffer.poll()) != null) {
			this.buffered.decrementAndGet();
			out.add(r);
		}
		return out;
	}

	/**
	 * Applies a peer's batch: every release of a known service and instance enters that
	 * instance's shadow index; the others (an instance this replica has not discovered
	 * yet, or has seen leave) are ignored. A batch from this replica itself is ignored
	 * whole.
	 * @throws HashingMismatchException when the peer hashes prompts differently
	 */
	public Applied apply(ReleaseBatch batch) {
		return apply(batch, true);
	}

	/**
	 * {@link #apply} for a peer's start-up snapshot ({@link #snapshot}), which carries
	 * its cached blocks and never its load: the peer is not taken for one that publishes
	 * releases without its load.
	 */
	public Applied applySnapshot(ReleaseBatch batch) {
		return apply(batch, false);
	}

	private Applied apply(ReleaseBatch batch, boolean publication) {
		if (this.replicaId.equals(batch.replica())) {
			return new Applied(0, batch.releases().size(), 0);
		}
		if (!this.hashing.equals(batch.hashing())) {
			this.refusedBatches.increment();
			throw new HashingMismatchException("replica " + batch.replica() + " hashes prompts as '" + batch.hashing()
					+ "' but this replica as '" + this.hashing + "'; replicas must share dualmap.prompt.*");
		}
		if (sharesLoad()) {
			if (batch.load() != null) {
				applyLoad(batch.replica(), batch.load());
			}
			else if (publication && !batch.releases().isEmpty()) {
				noteWithoutLoad(batch.replica());
			}
		}
		int ok = 0;
		int responses = 0;
		StoredResponses stored = this.storedResponses;
		for (ReleaseBatch.Release r : batch.releases()) {
			ServicePool service = this.registry.service(r.service());
			InstanceState state = service == null ? null : service.instancePool().instance(r.instance());
			if (state == null || (r.response() != null && stored == null)) {
				continue;
			}
			if (r.chain().length > 0) {
				service.instancePool().recordElsewhere(state, r.chain());
			}
			if (r.response() != null) {
				stored.record(r.service(), r.response(), r.instance());
				responses++;
			}
			ok++;
		}
		int skipped = batch.releases().size() - ok;
		this.applied.add(ok);
		this.ignored.add(skipped);
		return new Applied(ok, skipped, responses);
	}

	/**
	 * This replica's load on every instance that has some: requests and uncached tokens
	 * in prefill, uncached tokens queued. Empty when there is none (or load is not
	 * shared).
	 */
	public List<ReleaseBatch.Load> localLoad() {
		if (!sharesLoad()) {
			return List.of();
		}
		List<ReleaseBatch.Load> load = new ArrayList<>();
		for (ServicePool service : this.registry.services().values()) {
			for (InstanceState s : service.instancePool().instances()) {
				int requests = s.prefillRequests();
				long prefill = s.prefillTokens();
				long queued = s.queuedTokens();
				if (requests > 0 || prefill > 0 || queued > 0) {
					load.add(new ReleaseBatch.Load(service.serviceId(), s.id(), requests, prefill, queued,
							s.prefillPairs()));
				}
			}
		}
		return load;
	}

	/**
	 * Largest tokens or requests one peer's entry counts for: sums of any number of peers
	 * stay far from overflowing.
	 */
	private static final long MAX_LOAD_VALUE = 1L << 40;

	/**
	 * Largest attention pairs one peer's entry counts for (a prompt's pairs grow with its
	 * tokens squared): sums over a thousand peers stay below {@code Long.MAX_VALUE}.
	 */
	private static final long MAX_LOAD_PAIRS = 1L << 52;

	/**
	 * Per instance: requests, tokens in prefill, tokens queued, the pairs of the prefill
	 * of peers that publish them, and those peers' tokens in prefill.
	 */
	private static final int LOAD_FIELDS = 5;

	private void applyLoad(String peer, List<ReleaseBatch.Load> load) {
		Map<InstanceKey, long[]> entries = new HashMap<>();
		for (ReleaseBatch.Load l : load) {
			// Only instances known here: a peer's view of membership may run ahead (its
			// next publication tells again) and nothing unknown is kept.
			ServicePool service = this.registry.service(l.service());
			if (service == null || service.instancePool().instance(l.instance()) == null) {
				continue;
			}
			long[] sum = entries.computeIfAbsent(new InstanceKey(l.service(), l.instance()),
					k -> new long[LOAD_FIELDS]);
			long tokens = Math.min(MAX_LOAD_VALUE, l.prefillTokens());
			sum[0] = Math.min(MAX_LOAD_VALUE, sum[0] + l.prefillRequests());
			sum[1] = Math.min(MAX_LOAD_VALUE, sum[1] + tokens);
			sum[2] = Math.min(MAX_LOAD_VALUE, sum[2] + Math.min(MAX_LOAD_VALUE, l.queuedTokens()));
			if (l.prefillPairs() != null) {
				sum[3] = Math.min(MAX_LOAD_PAIRS, sum[3] + Math.min(MAX_LOAD_PAIRS, l.prefillPairs()));
				sum[4] = Math.min(MAX_LOAD_VALUE, sum[4] + tokens);
			}
		}
		Collection<ServicePool> changed;
		synchronized (this.peerLoads) {
			Set<InstanceKey> touched = new HashSet<>();
			this.withoutLoad.remove(peer);
			PeerLoad before = this.peerLoads.put(peer, new PeerLoad(this.clock.nanos(), entries));
			if (before != null) {
				addToTotals(before.entries(), -1, touched);
			}
			addToTotals(entries, 1, touched);
			changed = setPeerLoads(touched);
		}
		release(changed);
	}

	/**
	 * Forgets the load of peers that published nothing for the load TTL (stopped, or
	 * cannot reach this replica); the publisher calls it with every flush.
	 */
	public void expirePeerLoads() {
		Collection<ServicePool> changed = List.of();
		synchronized (this.peerLoads) {
			long now = this.clock.nanos();
			Set<InstanceKey> touched = new HashSet<>();
			for (Iterator<PeerLoad> it = this.peerLoads.values().iterator(); it.hasNext();) {
				PeerLoad p = it.next();
				if (now - p.receivedAtNanos() >= this.loadTtlNanos) {
					it.remove();
					addToTotals(p.entries(), -1, touched);
				}
			}
			if (!touched.isEmpty()) {
				changed = setPeerLoads(touched);
			}
		}
		release(changed);
	}

	/**
	 * Lets the dispatch queues of {@code pools} release what now fits (outside the lock:
	 * a release runs the request's listeners).
	 */
	private static void release(Collection<ServicePool> pools) {
		for (ServicePool service : pools) {
			service.queues().tick(service.instancePool().now());
		}
	}

	/** Peers whose published load counts here now. */
	public int loadPeers() {
		synchronized (this.peerLoads) {
			return this.peerLoads.size();
		}
	}

	/** How long a peer that published releases without its load is reported. */
	static final Duration WITHOUT_LOAD_REPORTED = Duration.ofMinutes(1);

	/**
	 * Most peers kept as publishing without their load: the ids are the peers' own, so
	 * the map is bounded whatever they send (a real deployment has a handful).
	 */
	static final int MAX_WITHOUT_LOAD = 64;

	private void noteWithoutLoad(String peer) {
		synchronized (this.peerLoads) {
			long now = this.clock.nanos();
			if (this.withoutLoad.size() >= MAX_WITHOUT_LOAD && !this.withoutLoad.containsKey(peer)) {
				this.withoutLoad.values().removeIf(at -> now - at >= WITHOUT_LOAD_REPORTED.toNanos());
				if (this.withoutLoad.size() >= MAX_WITHOUT_LOAD) {
					// The one heard from longest ago makes room.
					this.withoutLoad.entrySet()
						.stream()
						.min(Map.Entry.comparingByValue())
						.ifPresent(oldest -> this.withoutLoad.remove(oldest.getKey()));
				}
			}
			this.withoutLoad.put(peer, now);
		}
	}

	/**
	 * Peers that published releases without their load within the last minute, while this
	 * replica shares load (their {@code share-load} is off, or they are of a build before
	 * it): their traffic counts here only through the scraped engine queues.
	 */
	public List<String> peersWithoutLoad() {
		synchronized (this.peerLoads) {
			long now = this.clock.nanos();
			this.withoutLoad.values().removeIf(at -> now - at >= WITHOUT_LOAD_REPORTED.toNanos());
			return this.withoutLoad.keySet().stream().sorted().toList();
		}
	}

	/** Instances some peer has load on. */
	int peerLoadedInstances() {
		synchronized (this.peerLoads) {
			return this.totals.size();
		}
	}

	/** Adds ({@code sign} 1) or takes away (-1) one peer's entries from the totals. */
	private void addToTotals(Map<InstanceKey, long[]> entries, int sign, Set<InstanceKey> touched) {
		for (Map.Entry<InstanceKey, long[]> e : entries.entrySet()) {
			long[] total = this.totals.computeIfAbsent(e.getKey(), k -> new long[LOAD_FIELDS]);
			long[] v = e.getValue();
			boolean empty = true;
			for (int i = 0; i < LOAD_FIELDS; i++) {
				total[i] += sign * v[i];
				empty &= total[i] == 0;
			}
			if (empty) {
				this.totals.remove(e.getKey());
			}
			touched.add(e.getKey());
		}
	}

	/**
	 * Sets the peer load of the {@code touched} instances this replica knows to the
	 * peers' totals.
	 * @return the pools whose peer load changed
	 */
	private Collection<ServicePool> setPeerLoads(Set<InstanceKey> touched) {
		Set<ServicePool> changed = new LinkedHashSet<>();
		for (InstanceKey key : touched) {
			ServicePool service = this.registry.service(key.service());
			InstanceState s = service == null ? null : service.instancePool().instance(key.instance());
			if (s == null) {
				continue;
			}
			long[] t = this.totals.getOrDefault(key, NO_LOAD);
			int requests = (int) Math.min(Integer.MAX_VALUE, t[0]);
			if (requests != s.peerPrefillRequests() || t[1] != s.peerPrefillTokens() || t[2] != s.peerQueuedTokens()
					|| t[3] != s.peerPrefillPairs() || t[4] != s.peerPairedTokens()) {
				s.peerLoad(requests, t[1], t[2], t[3], t[4]);
				changed.add(service);
			}
		}
		return changed;
	}

	private static final long[] NO_LOAD = new long[LOAD_FIELDS];

	/** An instance of a service, as peers name it. */
	private record InstanceKey(String service, String instance) {

	}

	/**
	 * A peer's last published load per instance (requests and tokens in prefill, queued
	 * tokens) and when it arrived.
	 */
	private record PeerLoad(long receivedAtNanos, Map<InstanceKey, long[]> entries) {

	}

	/**
	 * What this replica believes every instance holds, as a batch a peer can
	 * {@link #apply}: one release per instance whose chain is its shadow index's most
	 * recently used blocks, at most {@code maxBlocks} in all (shared evenly among the
	 * instances). A replica that starts asks a peer for this.
	 */
	public ReleaseBatch snapshot(int maxBlocks) {
		StoredResponses stored = this.storedResponses;
		List<ReleaseBatch.Release> responses = new ArrayList<>();
		if (stored != null) {
			// The most recent stored responses, oldest first so they apply in order, in
			// an
			// eighth of the budget (a response weighs about as much as eight blocks).
			for (StoredResponses.Stored r : stored.recent(maxBlocks / 64)) {
				responses.add(0, new ReleaseBatch.Release(r.service(), r.instanceId(), NO_BLOCKS, r.responseId()));
			}
			maxBlocks -= responses.size() * 8;
		}
		int instances = this.registry.services().values().stream().mapToInt(p -> p.instancePool().size()).sum();
		int each = Math.max(1, maxBlocks / Math.max(1, instances));
		// Fewer blocks than instances: one each for as many as there are blocks.
		int left = Math.max(1, maxBlocks);
		List<ReleaseBatch.Release> releases = new ArrayList<>();
		for (ServicePool service : this.registry.services().values()) {
			for (InstanceState s : service.instancePool().instances()) {
				if (left <= 0) {
					break;
				}
				long[] blocks = s.shadow().recent(Math.min(each, left));
				left -= blocks.length;
				if (blocks.length > 0) {
					releases.add(new ReleaseBatch.Release(service.serviceId(), s.id(), blocks));
				}
			}
		}
		releases.addAll(responses);
		return new ReleaseBatch(this.replicaId, this.hashing, releases);
	}

	/** Whether every pool knows its instances (a snapshot applied before is lost). */
	public boolean membershipKnown() {
		return this.registry.services().values().stream().allMatch(p -> p.instancePool().size() > 0);
	}

	public String replicaId() {
		return this.replicaId;
	}

	public String hashing() {
		return this.hashing;
	}

	/** Releases waiting to be published. */
	public int buffered() {
		return Math.max(0, this.buffered.get());
	}

	/**
	 * Releases not published: the buffer was full, or a peer's pending list overflowed
	 * while it did not answer (counted once per peer).
	 */
	public long dropped() {
		return this.dropped.sum();
	}

	/** Releases delivered to a peer, counted once per peer. */
	public long sent() {
		return this.sent.sum();
	}

	/** Peers' releases that entered a shadow index (or the stored responses) here. */
	public long applied() {
		return this.applied.sum();
	}

	/** Peers' releases for a service or instance unknown here. */
	public long ignored() {
		return this.ignored.sum();
	}

	/** Peers' batches refused for different prompt hashing. */
	public long refusedBatches() {
		return this.refusedBatches.sum();
	}

	/** Publications to one peer that failed (error status, I/O error or timeout). */
	public long failedPublications() {
		return this.failedPublications.sum();
	}

	void countSent(int releases) {
		this.sent.add(releases);
	}

	void countDropped() {
		this.dropped.increment();
	}

	void countFailedPublication() {
		this.failedPublications.increment();
	}

	/**
	 * What {@link #apply} did with a batch.
	 *
	 * @param applied releases entered here
	 * @param ignored releases for a service or instance unknown here (or stored responses
	 * when this replica does not share them)
	 * @param responses of the applied ones, stored responses
	 */
	public record Applied(int applied, int ignored, int responses) {

	}

	/** A peer's batch whose chains were hashed with other parameters. */
	public static final class HashingMismatchException extends RuntimeException {

		HashingMismatchException(String message) {
			super(message);
		}

	}

}

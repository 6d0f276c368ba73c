package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

/**
 * Which instance answered which Responses API response ({@code /v1/responses}), so that a
 * request continuing it ({@code previous_response_id}) goes back there: vLLM and SGLang
 * keep stored responses in the memory of the server that made them, and another instance
 * would answer 404. Bounded in entries and age: once full, the oldest is forgotten first,
 * so the responses clients are still continuing, the newest, stay. (Caffeine's bound
 * admits a new entry only when it has been read more often than the one it would evict:
 * with every response written once and read about once, a full map kept its oldest
 * entries and forgot 95 % of the newest.) A {@link DualMapListener}: the gateway tells it
 * every response an instance answered; replica sync shares what it holds with the other
 * gateway replicas. Thread-safe: one lock, held for a map operation (a Responses API
 * request reads or writes one entry).
 */
public final class StoredResponses implements DualMapListener {

	/** Longest response id remembered. */
	static final int MAX_ID_LENGTH = 256;

	private record Entry(String instanceId, long writtenAtNanos) {
	}

	private final long maxEntries;

	private final long ttlNanos;

	private final LongSupplier nanos;

	// In order of writing, oldest first; guarded by this.
	private final LinkedHashMap<String, Entry> instances = new LinkedHashMap<>();

	/**
	 * @param maxEntries most responses remembered (beyond, the oldest are forgotten)
	 * @param ttl how long a response is remembered after it was answered
	 */
	public StoredResponses(long maxEntries, Duration ttl) {
		this(maxEntries, ttl, System::nanoTime);
	}

	StoredResponses(long maxEntries, Duration ttl, LongSupplier nanos) {
		if (maxEntries <= 0) {
			throw new IllegalArgumentException("maxEntries must be > 0 but was " + maxEntries);
		}
		if (ttl.isNegative() || ttl.isZero()) {
			throw new IllegalArgumentException("ttl must be > 0 but was " + ttl);
		}
		this.maxEntries = maxEntries;
		this.ttlNanos = ttl.toNanos();
		this.nanos = nanos;
	}

	@Override
	public void onResponseStored(String service, String instanceId, String responseId) {
		record(service, responseId, instanceId);
	}

	/** {@code instanceId} of {@code service} answered {@code responseId}. */
	public synchronized void record(String service, String responseId, String instanceId) {
		if (responseId.isEmpty() || responseId.length() > MAX_ID_LENGTH) {
			return;
		}
		long now = this.nanos.getAsLong();
		String key = key(service, responseId);
		// Written again (a peer's copy): it counts from now, as the newest.
		this.instances.remove(key);
		this.instances.put(key, new Entry(instanceId, now));
		expire(now);
		while (this.instances.size() > this.maxEntries) {
			removeOldest();
		}
	}

	/** The instance of {@code service} that answered {@code responseId}, if known. */
	public synchronized @Nullable String instanceOf(String service, String responseId) {
		Entry e = this.instances.get(key(service, responseId));
		if (e == null) {
			return null;
		}
		long now = this.nanos.getAsLong();
		if (now - e.writtenAtNanos() >= this.ttlNanos) {
			expire(now);
			return null;
		}
		return e.instanceId();
	}

	/**
	 * At most {@code max} remembered responses of every service, those the bound would
	 * keep longest first (the most recent), for a starting gateway replica that asks its
	 * peers what they know.
	 */
	public synchronized List<Stored> recent(int max) {
		expire(this.nanos.getAsLong());
		List<Map.Entry<String, Entry>> all = new ArrayList<>(this.instances.entrySet());
		List<Stored> out = new ArrayList<>();
		for (int i = all.size() - 1; i >= 0 && out.size() < max; i--) {
			String key = all.get(i).getKey();
			int cut = key.indexOf('\u0000');
			out.add(new Stored(key.substring(0, cut), key.substring(cut + 1), all.get(i).getValue().instanceId()));
		}
		return out;
	}

	/** One remembered response. */
	public record Stored(String service, String responseId, String instanceId) {

	}

	/** Responses remembered now. */
	public synchronized long size() {
		expire(this.nanos.getAsLong());
		return this.instances.size();
	}

	/** Forgets the responses answered {@code ttl} or longer ago: the oldest first. */
	private void expire(long now) {
		Iterator<Entry> oldestFirst = this.instances.values().iterator();
		while (oldestFirst.hasNext() && now - oldestFirst.next().writtenAtNanos() >= this.ttlNanos) {
			oldestFirst.remove();
		}
	}

	private void removeOldest() {
		Iterator<String> oldestFirst = this.instances.keySet().iterator();
		oldestFirst.next();
		oldestFirst.remove();
	}

	private static String key(String service, String responseId) {
		return service + '\u0000' + responseId;
	}

}

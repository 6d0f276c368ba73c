package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import org.jspecify.annotations.Nullable;

/**
 * Which instance answered which Responses API response ({@code /v1/responses}), so that a
 * request continuing it ({@code previous_response_id}) goes back there: vLLM and SGLang
 * keep stored responses in the memory of the server that made them, and another instance
 * would answer 404. Bounded in entries and age. A {@link DualMapListener}: the gateway
 * tells it every response an instance answered; replica sync shares what it holds with
 * the other gateway replicas.
 */
public final class StoredResponses implements DualMapListener {

	/** Longest response id remembered. */
	static final int MAX_ID_LENGTH = 256;

	private final Cache<String, String> instances;

	/**
	 * @param maxEntries most responses remembered (beyond, Caffeine evicts the least
	 * used)
	 * @param ttl how long a response is remembered after it was answered
	 */
	public StoredResponses(long maxEntries, Duration ttl) {
		this(maxEntries, ttl, Ticker.systemTicker());
	}

	StoredResponses(long maxEntries, Duration ttl, Ticker ticker) {
		if (maxEntries <= 0) {
			throw new IllegalArgumentException("maxEntries must be > 0 but was " + maxEntries);
		}
		if (ttl.isNegative() || ttl.isZero()) {
			throw new IllegalArgumentException("ttl must be > 0 but was " + ttl);
		}
		// Maintenance (eviction) on the writing thread: a small map, and bounds that hold
		// when a write returns.
		this.instances = Caffeine.newBuilder()
			.maximumSize(maxEntries)
			.expireAfterWrite(ttl)
			.ticker(ticker)
			.executor(Runnable::run)
			.build();
	}

	@Override
	public void onResponseStored(String service, String instanceId, String responseId) {
		record(service, responseId, instanceId);
	}

	/** {@code instanceId} of {@code service} answered {@code responseId}. */
	public void record(String service, String responseId, String instanceId) {
		if (!responseId.isEmpty() && responseId.length() <= MAX_ID_LENGTH) {
			this.instances.put(key(service, responseId), instanceId);
		}
	}

	/** The instance of {@code service} that answered {@code responseId}, if known. */
	public @Nullable String instanceOf(String service, String responseId) {
		return this.instances.getIfPresent(key(service, responseId));
	}

	/**
	 * At most {@code max} remembered responses of every service, those the bound would
	 * keep longest first (as each is written once, the most recent), for a starting
	 * gateway replica that asks its peers what they know.
	 */
	public List<Stored> recent(int max) {
		List<Stored> out = new ArrayList<>();
		this.instances.policy().eviction().ifPresent(e -> e.hottest(max).forEach((key, instance) -> {
			int cut = key.indexOf('\u0000');
			out.add(new Stored(key.substring(0, cut), key.substring(cut + 1), instance));
		}));
		return out;
	}

	/** One remembered response. */
	public record Stored(String service, String responseId, String instanceId) {

	}

	/** Responses remembered now (an estimate, as Caffeine's). */
	public long size() {
		return this.instances.estimatedSize();
	}

	private static String key(String service, String responseId) {
		return service + '\u0000' + responseId;
	}

}

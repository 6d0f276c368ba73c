package io.github.dualmap.replica;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.type.LogicalType;
import tools.jackson.databind.json.JsonMapper;

/**
 * One publication from a replica to its peers, as JSON:
 * {@code {"replica":"<id>","hashing":"<fingerprint>","releases":[{"service":"llm",
 * "instance":"10.0.0.5:8000","chain":[<block hash>, ...]}]}}, a stored response as
 * {@code {"service":"llm","instance":"...","chain":[],"response":"resp_..."}}. The
 * hashing fingerprint names the prompt hashing parameters: chains hashed differently
 * cannot be matched, so a batch from a replica configured differently is refused, not
 * applied. A replica that shares its load adds to every publication
 * {@code "load":[{"service":"llm","instance":"...","prefillRequests":3,
 * "prefillTokens":5120,"queuedTokens":20480}]}: its whole load at the time of the
 * publication (an instance left out has none), which replaces what it published before.
 *
 * @param replica the sending replica's id (random per process start)
 * @param hashing the sender's {@link ReplicaSync#hashingFingerprint fingerprint}
 * @param releases what was sent where, oldest first
 * @param load the sender's load per instance, or {@code null} when it does not share it
 * (the member is then left out)
 */
public record ReleaseBatch(String replica, String hashing, List<Release> releases,
		@JsonInclude(JsonInclude.Include.NON_NULL) @Nullable List<Load> load) {

	/** A batch without load. */
	public ReleaseBatch(String replica, String hashing, List<Release> releases) {
		this(replica, hashing, releases, null);
	}

	/** Longest replica id or fingerprint accepted. */
	static final int MAX_ID_LENGTH = 256;

	// Missing members read as null and are refused by parse, by name, except the optional
	// "response".
	private static final JsonMapper MAPPER = JsonMapper.builder()
		.enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
		// A block hash is a JSON integer: no "12" or 1.5 made into one.
		.withCoercionConfig(LogicalType.Integer,
				c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail)
					.setCoercion(CoercionInputShape.Float, CoercionAction.Fail))
		// Nor a string (a service, an instance, a response id) made from a number.
		.withCoercionConfig(LogicalType.Textual,
				c -> c.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
					.setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
					.setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
		.build();

	/**
	 * One release: a prompt whose block-hash chain was sent to {@code instance} of
	 * {@code service}, or a stored Responses API response that instance answered (its id
	 * in {@code response}, the chain then empty). The member is left out when absent, so
	 * a prompt release carries only the fields every replica reads.
	 */
	public record Release(String service, String instance, long[] chain,
			@JsonInclude(JsonInclude.Include.NON_NULL) @Nullable String response) {

		public Release(String service, String instance, long[] chain) {
			this(service, instance, chain, null);
		}

	}

	/**
	 * The sender's load on one instance: requests it sent there whose first byte has not
	 * come back and their uncached tokens, the uncached tokens it holds queued for the
	 * instance, and the attention pairs of its requests in prefill there (the sum over
	 * them of {@code u * (k + u / 2)} for {@code u} uncached and {@code k} cached tokens,
	 * what the attention term of the TTFT model weighs). The pairs are left out by
	 * senders that do not publish them; a receiver then counts those tokens at its pool's
	 * mean pairs per token.
	 */
	public record Load(@JsonProperty(required = true) String service, @JsonProperty(required = true) String instance,
			@JsonProperty(required = true) int prefillRequests, @JsonProperty(required = true) long prefillTokens,
			@JsonProperty(required = true) long queuedTokens,
			@JsonInclude(JsonInclude.Include.NON_NULL) @Nullable Long prefillPairs) {

		public Load(String service, String instance, int prefillRequests, long prefillTokens, long queuedTokens) {
			this(service, instance, prefillRequests, prefillTokens, queuedTokens, null);
		}

	}

	public byte[] toJson() {
		return MAPPER.writeValueAsBytes(this);
	}

	/**
	 * Bytes parsing {@code json} takes while it runs, at most: Jackson builds each chain
	 * in chunks and then copies it into one array, up to 16 bytes per element, and a
	 * chain of small numbers ({@code 1,1,1,...}) has an element every two bytes; the
	 * elements of every array are counted by their separators. The strings (service,
	 * instance, ids) take about the body's size once more.
	 */
	public static long parseWorkingBytes(byte[] json) {
		long elements = 0;
		for (byte b : json) {
			if (b == ',' || b == '[') {
				elements++;
			}
		}
		return 16 * elements + json.length;
	}

	/**
	 * Reads and checks a batch.
	 * @throws IllegalArgumentException with a message naming what is wrong
	 */
	public static ReleaseBatch parse(byte[] json) {
		ReleaseBatch batch;
		try {
			batch = MAPPER.readValue(json, ReleaseBatch.class);
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException("not a release batch: " + ex.getOriginalMessage(), ex);
		}
		if (batch == null) {
			throw new IllegalArgumentException("not a release batch: the body is empty or null");
		}
		requireId("replica", batch.replica());
		requireId("hashing", batch.hashing());
		if (batch.releases() == null) {
			throw new IllegalArgumentException("releases must be an array");
		}
		for (int i = 0; i < batch.releases().size(); i++) {
			Release r = batch.releases().get(i);
			requireInstance("releases[" + i + "]", r, r == null ? null : r.service(), r == null ? null : r.instance());
			if (r.response() != null) {
				if (r.response().isEmpty() || r.response().length() > MAX_ID_LENGTH) {
					throw new IllegalArgumentException("releases[" + i
							+ "].response must be a non-empty string of at most " + MAX_ID_LENGTH + " characters");
				}
				if (r.chain() == null) {
					throw new IllegalArgumentException("releases[" + i + "].chain must be an array of integers");
				}
			}
			else if (r.chain() == null || r.chain().length == 0) {
				throw new IllegalArgumentException("releases[" + i + "].chain must be a non-empty array of integers");
			}
		}
		if (batch.load() != null) {
			for (int i = 0; i < batch.load().size(); i++) {
				checkLoad(i, batch.load().get(i));
			}
		}
		return batch;
	}

	/** An element naming an instance: an object with a non-empty service and instance. */
	private static void requireInstance(String element, @Nullable Object value, @Nullable String service,
			@Nullable String instance) {
		if (value == null) {
			throw new IllegalArgumentException(element + " must be an object");
		}
		if (service == null || service.isBlank()) {
			throw new IllegalArgumentException(element + ".service must be a non-empty string");
		}
		if (instance == null || instance.isBlank()) {
			throw new IllegalArgumentException(element + ".instance must be a non-empty string");
		}
	}

	private static void checkLoad(int i, @Nullable Load l) {
		requireInstance("load[" + i + "]", l, l == null ? null : l.service(), l == null ? null : l.instance());
		if (l.prefillRequests() < 0 || l.prefillTokens() < 0 || l.queuedTokens() < 0) {
			throw new IllegalArgumentException(
					"load[" + i + "]: prefillRequests, prefillTokens and queuedTokens must be >= 0");
		}
		if (l.prefillPairs() != null && l.prefillPairs() < 0) {
			throw new IllegalArgumentException("load[" + i + "].prefillPairs must be >= 0 when present");
		}
	}

	private static void requireId(String field, String value) {
		if (value == null || value.isBlank() || value.length() > MAX_ID_LENGTH) {
			throw new IllegalArgumentException(
					field + " must be a non-empty string of at most " + MAX_ID_LENGTH + " characters");
		}
	}

}

package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.dualmap.prompt.InvalidRequestException;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * The TTFT objective of one request: the {@code x-slo-ttft-ms} header (the llm-d /
 * Gateway API inference extension name) when present, else the class named by the class
 * header, else the default. An unknown class gets the default rather than an error: class
 * names are hints clients send to many gateways, and a typo must not fail traffic.
 */
public final class SloResolver {

	/** The per-request objective header, in whole milliseconds. */
	public static final String TTFT_HEADER = "x-slo-ttft-ms";

	private final long defaultNanos;

	private final String classHeader;

	private final Map<String, Long> classNanos;

	private final Map<String, Long> classMaxWaitNanos;

	private final Map<String, Integer> classPriorities;

	public SloResolver(Duration defaultTtft, String classHeader, Map<String, Duration> classes) {
		this(defaultTtft, classHeader, classes, Map.of());
	}

	public SloResolver(Duration defaultTtft, String classHeader, Map<String, Duration> classes,
			Map<String, Duration> classMaxWaits) {
		this(defaultTtft, classHeader, classes, classMaxWaits, Map.of());
	}

	/**
	 * @param classMaxWaits how long requests of a class may wait in the dispatch queues,
	 * for the classes that set their own bound
	 * @param classPriorities the priority band of a class's requests, for the classes
	 * that set one (the others' requests take their tenant's)
	 */
	public SloResolver(Duration defaultTtft, String classHeader, Map<String, Duration> classes,
			Map<String, Duration> classMaxWaits, Map<String, Integer> classPriorities) {
		if (defaultTtft.isNegative() || defaultTtft.isZero()) {
			throw new IllegalArgumentException("default TTFT SLO must be > 0 but was " + defaultTtft);
		}
		this.defaultNanos = defaultTtft.toNanos();
		this.classHeader = classHeader;
		this.classNanos = nanos(classes);
		classMaxWaits.forEach((name, wait) -> {
			if (!classes.containsKey(name) || wait.isNegative() || wait.isZero()) {
				throw new IllegalArgumentException(
						"max-wait of SLO class '" + name + "' must be > 0 and belong to a class with a ttft");
			}
		});
		this.classMaxWaitNanos = nanos(classMaxWaits);
		classPriorities.keySet().forEach(name -> {
			if (!classes.containsKey(name)) {
				throw new IllegalArgumentException(
						"priority of SLO class '" + name + "' must belong to a class with a ttft");
			}
		});
		this.classPriorities = Map.copyOf(classPriorities);
	}

	private static Map<String, Long> nanos(Map<String, Duration> byClass) {
		return Map.copyOf(byClass.entrySet()
			.stream()
			.collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, e -> e.getValue().toNanos())));
	}

	/** The class of a request that named no known class. */
	public static final String DEFAULT_CLASS = "default";

	/** The class of a request that set {@value #TTFT_HEADER} itself. */
	public static final String HEADER_CLASS = "header";

	/**
	 * A request's objective and the class it came from: a configured class name,
	 * {@value #DEFAULT_CLASS} or {@value #HEADER_CLASS}; a bounded set, fit for a meter
	 * tag.
	 *
	 * @param nanos the TTFT objective
	 * @param sloClass where it came from
	 * @param maxWaitNanos how long it may wait in the dispatch queues, 0 for their own
	 * bound ({@code dualmap.dispatch.max-wait})
	 * @param priority the priority band its class sets, {@code null} when it sets none
	 * (then the request's tenant's band holds)
	 */
	public record Slo(long nanos, String sloClass, long maxWaitNanos, @Nullable Integer priority) {

		public Slo(long nanos, String sloClass) {
			this(nanos, sloClass, 0);
		}

		public Slo(long nanos, String sloClass, long maxWaitNanos) {
			this(nanos, sloClass, maxWaitNanos, null);
		}

	}

	/**
	 * The objective in nanoseconds.
	 * @throws InvalidRequestException when {@code x-slo-ttft-ms} is not a positive
	 * integer, or it or the class header is sent more than once
	 */
	public long resolveNanos(HttpHeaders headers) {
		return resolve(headers).nanos();
	}

	/**
	 * The objective and its class.
	 * @throws InvalidRequestException when {@code x-slo-ttft-ms} is not a positive
	 * integer, or it or the class header is sent more than once
	 */
	public Slo resolve(HttpHeaders headers) {
		return resolve(headers, this.defaultNanos);
	}

	/**
	 * The objective and its class, with {@code defaultNanos} for a request that names no
	 * known class (a pool's own default, {@code dualmap.pools.<service>.slo.ttft}).
	 * @throws InvalidRequestException when {@code x-slo-ttft-ms} is not a positive
	 * integer, or it or the class header is sent more than once
	 */
	public Slo resolve(HttpHeaders headers, long defaultNanos) {
		String explicit = once(headers, TTFT_HEADER);
		if (explicit != null) {
			long ms;
			try {
				ms = Long.parseLong(explicit.strip());
			}
			catch (NumberFormatException ex) {
				ms = -1;
			}
			if (ms <= 0 || ms > Duration.ofDays(1).toMillis()) {
				throw new InvalidRequestException("header " + TTFT_HEADER
						+ " must be a positive integer of milliseconds but was '" + explicit + "'", TTFT_HEADER);
			}
			return new Slo(Duration.ofMillis(ms).toNanos(), HEADER_CLASS);
		}
		String requestClass = once(headers, this.classHeader);
		if (requestClass != null) {
			String name = requestClass.strip();
			Long nanos = this.classNanos.get(name);
			if (nanos != null) {
				return new Slo(nanos, name, this.classMaxWaitNanos.getOrDefault(name, 0L),
						this.classPriorities.get(name));
			}
		}
		return new Slo(defaultNanos, DEFAULT_CLASS);
	}

	/**
	 * The one value of header {@code name}, {@code null} when absent.
	 * @throws InvalidRequestException when it is sent more than once: which would count
	 * would depend on the order of the lines
	 */
	private static @Nullable String once(HttpHeaders headers, String name) {
		List<String> values = headers.getOrEmpty(name);
		if (values.size() > 1) {
			throw new InvalidRequestException(
					"header " + name + " must be sent once but was sent " + values.size() + " times", name);
		}
		return values.isEmpty() ? null : values.get(0);
	}

}

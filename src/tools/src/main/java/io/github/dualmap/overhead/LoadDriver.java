package io.github.dualmap.overhead;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.sun.management.OperatingSystemMXBean;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * Closed-loop load: a fixed number of requests in flight, each request's latency from
 * sending to the last response byte. Paths are measured in turn, one round each in
 * rotating order, so a machine that drifts during the run affects all alike.
 */
final class LoadDriver implements AutoCloseable {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private final List<byte[]> bodies;

	private final int concurrency;

	private final ConnectionProvider connections;

	private final HttpClient client;

	LoadDriver(List<byte[]> bodies, int concurrency) {
		this.bodies = List.copyOf(bodies);
		this.concurrency = concurrency;
		this.connections = ConnectionProvider.builder("dualmap-overhead")
			.maxConnections(Math.max(2 * concurrency, 16))
			.pendingAcquireMaxCount(-1)
			.build();
		this.client = HttpClient.create(this.connections)
			.headers(h -> h.set("Content-Type", "application/json"))
			.responseTimeout(TIMEOUT);
	}

	/** A path under test: its base URLs, used in turn. */
	record Target(String name, List<String> baseUrls) {

	}

	/**
	 * One round of one path. {@code cpuMicrosPerRequest} is the whole process's CPU time
	 * (user and system, every thread: client, gateways, backends, GC, JIT) during the
	 * round divided by its requests; {@code NaN} where the JVM does not report process
	 * CPU time.
	 */
	record Round(int round, int requests, double seconds, double throughput, double p50Micros, double p90Micros,
			double p99Micros, long errors, double cpuMicrosPerRequest) {

	}

	/**
	 * {@code warmupRounds} rounds of every target (not reported: until the JIT has
	 * compiled each path's code, a round's CPU per request falls round after round), then
	 * {@code rounds} measured rounds; the order of the targets rotates by one each round.
	 */
	Map<String, List<Round>> measure(List<Target> targets, int requests, int warmupRounds, int rounds) {
		Map<String, List<Round>> out = new LinkedHashMap<>();
		targets.forEach(t -> out.put(t.name(), new ArrayList<>()));
		// Warm-up rounds are numbered up to 0 and dropped; measured ones from 1.
		for (int r = 1 - warmupRounds; r <= rounds; r++) {
			for (int k = 0; k < targets.size(); k++) {
				Target t = targets.get(Math.floorMod(k + r, targets.size()));
				Round measured = run(t, requests, r);
				if (r > 0) {
					out.get(t.name()).add(measured);
				}
			}
		}
		return out;
	}

	Round run(Target target, int requests, int round) {
		long[] latencies = new long[requests];
		AtomicInteger done = new AtomicInteger();
		AtomicLong errors = new AtomicLong();
		long cpuStart = processCpuNanos();
		long start = System.nanoTime();
		Flux.range(0, requests)
			.flatMap(i -> one(target.baseUrls().get(i % target.baseUrls().size()) + "/v1/chat/completions",
					this.bodies.get(i % this.bodies.size()))
				.doOnNext(nanos -> {
					if (nanos < 0) {
						errors.incrementAndGet();
					}
					latencies[done.getAndIncrement()] = Math.abs(nanos);
				}), this.concurrency)
			.blockLast(TIMEOUT.multipliedBy(Math.max(1, requests / this.concurrency)));
		double seconds = (System.nanoTime() - start) / 1e9;
		long cpuEnd = processCpuNanos();
		double cpuPerRequest = (cpuStart < 0 || cpuEnd < 0) ? Double.NaN : (cpuEnd - cpuStart) / 1000.0 / requests;
		long[] sorted = Arrays.copyOf(latencies, done.get());
		Arrays.sort(sorted);
		return new Round(round, sorted.length, seconds, sorted.length / seconds, percentile(sorted, 0.50),
				percentile(sorted, 0.90), percentile(sorted, 0.99), errors.get() + (requests - sorted.length),
				cpuPerRequest);
	}

	/** CPU time of this process in nanoseconds, or -1 where the JVM does not tell. */
	static long processCpuNanos() {
		if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
			return os.getProcessCpuTime();
		}
		return -1;
	}

	/**
	 * Latency of one request in nanoseconds, negated when it did not answer 200 (or
	 * failed).
	 */
	private Mono<Long> one(String url, byte[] body) {
		return Mono.defer(() -> {
			long t0 = System.nanoTime();
			return this.client.post()
				.uri(url)
				.send((req, out) -> out.sendByteArray(Mono.just(body)))
				.responseSingle((res,
						content) -> content.asByteArray().defaultIfEmpty(new byte[0]).map(bytes -> res.status().code()))
				.map(status -> status == 200 ? System.nanoTime() - t0 : -(System.nanoTime() - t0))
				.onErrorResume(ex -> Mono.just(-(System.nanoTime() - t0)));
		});
	}

	/** Nearest-rank percentile in microseconds; 0 for no samples. */
	static double percentile(long[] sortedNanos, double q) {
		if (sortedNanos.length == 0) {
			return 0;
		}
		int rank = (int) Math.ceil(q * sortedNanos.length);
		return sortedNanos[Math.max(0, Math.min(sortedNanos.length - 1, rank - 1))] / 1000.0;
	}

	@Override
	public void close() {
		this.connections.disposeLater().block(Duration.ofSeconds(10));
	}

}

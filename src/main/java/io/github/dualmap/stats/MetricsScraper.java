package io.github.dualmap.stats;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.dualmap.core.NanoClock;

/**
 * Scrapes every target's metrics endpoint periodically with the JDK HTTP client. Each
 * target runs on its own jittered schedule with at most one scrape in flight, so a slow
 * or dead instance never delays another; every failure goes to the listener.
 */
public final class MetricsScraper implements AutoCloseable {

	private final Duration interval;

	private final Duration timeout;

	private final double jitter;

	private final NanoClock clock;

	private final ScrapeListener listener;

	private final EngineMetricsParser parser = new EngineMetricsParser();

	private final HttpClient client;

	private final ScheduledExecutorService scheduler;

	private final Map<String, Map<String, ScheduledFuture<?>>> tasks = new ConcurrentHashMap<>();

	public MetricsScraper(Duration interval, Duration timeout, double jitter, NanoClock clock,
			ScrapeListener listener) {
		if (interval.isNegative() || interval.isZero()) {
			throw new IllegalArgumentException("interval must be > 0 but was " + interval);
		}
		if (timeout.isNegative() || timeout.isZero()) {
			throw new IllegalArgumentException("timeout must be > 0 but was " + timeout);
		}
		if (!(jitter >= 0 && jitter < 1)) {
			throw new IllegalArgumentException("jitter must be in [0, 1) but was " + jitter);
		}
		this.interval = interval;
		this.timeout = timeout;
		this.jitter = jitter;
		this.clock = clock;
		this.listener = listener;
		this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
			Thread t = new Thread(r, "dualmap-scraper");
			t.setDaemon(true);
			return t;
		});
		this.client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout).build();
	}

	/**
	 * Replaces the targets of {@code pool}: removed ones stop, new ones start at once.
	 */
	public synchronized void targets(String pool, List<ScrapeTarget> targets) {
		Map<String, ScheduledFuture<?>> old = tasks.remove(pool);
		if (old != null) {
			old.values().forEach(f -> f.cancel(false));
		}
		Map<String, ScheduledFuture<?>> next = new ConcurrentHashMap<>();
		long periodMicros = interval.toNanos() / 1000;
		for (ScrapeTarget t : targets) {
			AtomicBoolean inFlight = new AtomicBoolean();
			long delay = (long) (ThreadLocalRandom.current().nextDouble() * jitter * periodMicros);
			next.put(t.instanceId(), scheduler.scheduleAtFixedRate(() -> scrape(pool, t, inFlight), delay, periodMicros,
					TimeUnit.MICROSECONDS));
		}
		tasks.put(pool, next);
	}

	private void scrape(String pool, ScrapeTarget target, AtomicBoolean inFlight) {
		if (!inFlight.compareAndSet(false, true)) {
			return;
		}
		HttpRequest request = HttpRequest.newBuilder(target.metricsUri()).timeout(timeout).GET().build();
		client.sendAsync(request, HttpResponse.BodyHandlers.ofString()).whenComplete((response, failure) -> {
			inFlight.set(false);
			try {
				if (failure != null) {
					listener.onFailure(pool, target.instanceId(), failure);
				}
				else if (response.statusCode() != 200) {
					listener.onFailure(pool, target.instanceId(), new IllegalStateException(
							"metrics endpoint " + target.metricsUri() + " answered " + response.statusCode()));
				}
				else {
					listener.onSnapshot(pool, target.instanceId(), parser.parse(response.body(), clock.nanos()));
				}
			}
			catch (RuntimeException ex) {
				listener.onFailure(pool, target.instanceId(), ex);
			}
		});
	}

	@Override
	public synchronized void close() {
		tasks.values().forEach(m -> m.values().forEach(f -> f.cancel(false)));
		tasks.clear();
		scheduler.shutdownNow();
	}

}

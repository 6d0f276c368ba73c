package io.github.dualmap.stats;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.core.NanoClock;
import org.jspecify.annotations.Nullable;

/**
 * Scrapes the metrics endpoints of every instance of every pool with the JDK
 * {@link HttpClient}, asynchronously. Each target runs its own loop: scrape, report to
 * the {@link ScrapeListener}, wait a jittered interval, scrape again. The next scrape is
 * scheduled only when the previous one has finished, so at most one is in flight per
 * target, and nothing is shared that blocks, so a slow or dead instance never delays
 * another. Owns a daemon scheduler thread and a small daemon pool for the HTTP client;
 * {@link #close()} stops both.
 */
public final class MetricsScraper implements AutoCloseable {

	private static final System.Logger log = System.getLogger(MetricsScraper.class.getName());

	private final ScrapeSettings settings;

	private final NanoClock clock;

	private final ScrapeListener listener;

	private final EngineMetricsParser parser = new EngineMetricsParser();

	private final ScheduledExecutorService scheduler;

	private final ExecutorService httpExecutor;

	private final HttpClient client;

	private final Map<String, Map<String, TargetLoop>> pools = new HashMap<>();

	private boolean closed;

	public MetricsScraper(ScrapeSettings settings, NanoClock clock, ScrapeListener listener) {
		this.settings = settings;
		this.clock = clock;
		this.listener = listener;
		this.scheduler = Executors.newSingleThreadScheduledExecutor(daemon("dualmap-scrape-timer"));
		this.httpExecutor = Executors.newCachedThreadPool(daemon("dualmap-scrape-http"));
		this.client = HttpClient.newBuilder()
			.connectTimeout(settings.timeout())
			.followRedirects(HttpClient.Redirect.NEVER)
			.executor(httpExecutor)
			.build();
	}

	/** Defaults: 500 ms interval, 400 ms timeout, 20 % jitter, 4 MiB bodies. */
	public MetricsScraper(NanoClock clock, ScrapeListener listener) {
		this(ScrapeSettings.defaults(), clock, listener);
	}

	/**
	 * Replaces the targets of {@code pool}: removed targets stop being scraped (an answer
	 * in flight is dropped), new ones and ones whose URI changed start at once, unchanged
	 * ones keep their schedule. An empty list forgets the pool.
	 * @throws IllegalArgumentException when two targets share an instance id
	 * @throws IllegalStateException after {@link #close()}
	 */
	public synchronized void targets(String pool, List<ScrapeTarget> targets) {
		if (closed) {
			throw new IllegalStateException("scraper is closed");
		}
		Map<String, ScrapeTarget> wanted = new HashMap<>();
		for (ScrapeTarget target : targets) {
			if (wanted.put(target.instanceId(), target) != null) {
				throw new IllegalArgumentException(
						"duplicate instanceId '" + target.instanceId() + "' in targets of pool '" + pool + "'");
			}
		}
		Map<String, TargetLoop> current = pools.computeIfAbsent(pool, (p) -> new HashMap<>());
		current.entrySet().removeIf((e) -> {
			ScrapeTarget next = wanted.get(e.getKey());
			if (next == null || !next.equals(e.getValue().target)) {
				e.getValue().stop();
				return true;
			}
			return false;
		});
		for (ScrapeTarget target : wanted.values()) {
			current.computeIfAbsent(target.instanceId(), (id) -> {
				TargetLoop loop = new TargetLoop(pool, target);
				loop.schedule(0);
				return loop;
			});
		}
		if (current.isEmpty()) {
			pools.remove(pool);
		}
	}

	/** Instance ids currently scraped in {@code pool}. */
	public synchronized List<String> targetIds(String pool) {
		Map<String, TargetLoop> current = pools.get(pool);
		return current == null ? List.of() : List.copyOf(current.keySet());
	}

	/** Stops every loop, drops answers in flight and releases the threads. Idempotent. */
	@Override
	public void close() {
		synchronized (this) {
			if (closed) {
				return;
			}
			closed = true;
			pools.values().forEach((targets) -> targets.values().forEach(TargetLoop::stop));
			pools.clear();
		}
		scheduler.shutdownNow();
		httpExecutor.shutdownNow();
	}

	private long jittered() {
		long base = settings.interval().toNanos();
		double factor = 1 + settings.jitter() * (2 * ThreadLocalRandom.current().nextDouble() - 1);
		return Math.max(1, (long) (base * factor));
	}

	/** The scrape loop of one target. */
	private final class TargetLoop {

		private final String pool;

		private final ScrapeTarget target;

		private final HttpRequest request;

		private volatile boolean stopped;

		private volatile @Nullable ScheduledFuture<?> next;

		private volatile @Nullable CompletableFuture<?> inFlight;

		TargetLoop(String pool, ScrapeTarget target) {
			this.pool = pool;
			this.target = target;
			this.request = HttpRequest.newBuilder(target.metricsUri())
				.timeout(settings.timeout())
				.header("Accept", "text/plain;version=0.0.4")
				.GET()
				.build();
		}

		void schedule(long delayNanos) {
			if (stopped) {
				return;
			}
			try {
				next = scheduler.schedule(this::scrape, delayNanos, TimeUnit.NANOSECONDS);
			}
			catch (RejectedExecutionException ex) {
				// The scraper closed between the check and the schedule.
				stopped = true;
			}
		}

		private void scrape() {
			if (stopped) {
				return;
			}
			CompletableFuture<HttpResponse<byte[]>> exchange = client.sendAsync(request, this::bodyHandler);
			inFlight = exchange;
			// The request timeout covers only the wait for headers; this bounds the body
			// too.
			// Cancelling the JDK client's future aborts the exchange and frees its
			// connection.
			AtomicBoolean timedOut = new AtomicBoolean();
			ScheduledFuture<?> deadline = scheduler.schedule(() -> {
				timedOut.set(true);
				exchange.cancel(true);
			}, settings.timeout().toNanos(), TimeUnit.NANOSECONDS);
			exchange.whenComplete((response, error) -> {
				deadline.cancel(false);
				Throwable failure = timedOut.get() ? new HttpTimeoutException("scrape of " + target.metricsUri()
						+ " took longer than " + settings.timeout().toMillis() + " ms") : error;
				if (stopped) {
					return;
				}
				try {
					if (failure != null) {
						report(unwrap(failure));
					}
					else {
						String body = new String(response.body(), StandardCharsets.UTF_8);
						EngineSnapshot snapshot = parser.parse(body, clock.nanos());
						listener.onSnapshot(pool, target.instanceId(), snapshot);
					}
				}
				catch (RuntimeException ex) {
					report(ex);
				}
				finally {
					schedule(jittered());
				}
			});
		}

		private HttpResponse.BodySubscriber<byte[]> bodyHandler(HttpResponse.ResponseInfo info) {
			if (info.statusCode() != 200) {
				return failing(new ScrapeAnsweredException(
						"metrics endpoint " + target.metricsUri() + " answered HTTP " + info.statusCode()));
			}
			long declared = info.headers().firstValueAsLong("Content-Length").orElse(-1);
			if (declared > settings.maxBodyBytes()) {
				return failing(new ScrapeAnsweredException(
						"metrics body of " + declared + " bytes exceeds " + settings.maxBodyBytes() + " bytes"));
			}
			return new BoundedBodySubscriber(settings.maxBodyBytes());
		}

		private void report(Throwable failure) {
			try {
				listener.onFailure(pool, target.instanceId(), failure);
			}
			catch (RuntimeException ex) {
				log.log(System.Logger.Level.WARNING, "scrape listener failed for " + target.instanceId(), ex);
			}
		}

		void stop() {
			stopped = true;
			ScheduledFuture<?> n = next;
			if (n != null) {
				n.cancel(false);
			}
			CompletableFuture<?> f = inFlight;
			if (f != null) {
				f.cancel(true);
			}
		}

	}

	private static HttpResponse.BodySubscriber<byte[]> failing(IOException failure) {
		// Discard the body and fail the exchange with a message that says why.
		return HttpResponse.BodySubscribers.mapping(HttpResponse.BodySubscribers.discarding(), (ignored) -> {
			throw new UncheckedIOException(failure);
		});
	}

	private static Throwable unwrap(Throwable failure) {
		Throwable t = failure;
		while ((t instanceof CompletionException || t instanceof ExecutionException
				|| t instanceof UncheckedIOException) && t.getCause() != null) {
			t = t.getCause();
		}
		return t;
	}

	private static ThreadFactory daemon(String name) {
		AtomicInteger count = new AtomicInteger();
		return (runnable) -> {
			Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

}

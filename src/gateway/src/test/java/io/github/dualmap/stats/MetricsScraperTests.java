package io.github.dualmap.stats;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.core.NanoClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class MetricsScraperTests {

	private static final Duration AWAIT = Duration.ofSeconds(20);

	private static final String VLLM = EngineMetricsParserTests.fixture("vllm-v1.txt");

	private final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();

	private final Recorder recorder = new Recorder();

	private HttpServer server;

	private ExecutorService serverThreads;

	private MetricsScraper scraper;

	@BeforeEach
	void startServer() throws IOException {
		server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		serverThreads = Executors.newCachedThreadPool();
		server.setExecutor(serverThreads);
		for (String path : List.of("/a", "/b", "/c", "/healthy")) {
			server.createContext(path, (exchange) -> respond(exchange, 200, VLLM));
		}
		server.createContext("/error", (exchange) -> respond(exchange, 503, "overloaded"));
		server.createContext("/garbage", (exchange) -> respond(exchange, 200, "<html>not metrics</html>"));
		server.createContext("/big", (exchange) -> respond(exchange, 200, VLLM.repeat(20)));
		server.createContext("/slow", (exchange) -> {
			count(exchange);
			try {
				Thread.sleep(5_000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			exchange.close();
		});
		server.start();
	}

	@AfterEach
	void stop() {
		if (scraper != null) {
			scraper.close();
		}
		server.stop(0);
		serverThreads.shutdownNow();
	}

	private void respond(HttpExchange exchange, int status, String body) throws IOException {
		count(exchange);
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		exchange.sendResponseHeaders(status, bytes.length);
		try (OutputStream out = exchange.getResponseBody()) {
			out.write(bytes);
		}
	}

	private void count(HttpExchange exchange) {
		hits.computeIfAbsent(exchange.getRequestURI().getPath(), (p) -> new AtomicInteger()).incrementAndGet();
	}

	private int hitsOf(String path) {
		AtomicInteger n = hits.get(path);
		return n == null ? 0 : n.get();
	}

	private ScrapeTarget target(String id, String path) {
		return new ScrapeTarget(id, URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path));
	}

	private MetricsScraper scraper(int maxBodyBytes) {
		ScrapeSettings settings = new ScrapeSettings(Duration.ofMillis(50), Duration.ofMillis(300), 0.2, maxBodyBytes);
		return new MetricsScraper(settings, NanoClock.SYSTEM, recorder);
	}

	@Test
	void healthyTargetDeliversSnapshots() throws InterruptedException {
		scraper = scraper(ScrapeSettings.DEFAULT_MAX_BODY_BYTES);
		scraper.targets("pool", List.of(target("i1", "/healthy")));
		recorder.awaitSnapshots("i1", 3);
		EngineSnapshot s = recorder.snapshots.get("i1").get(0);
		assertThat(s.waiting()).isEqualTo(3);
		assertThat(s.running()).isEqualTo(12);
		assertThat(s.kvCapacityTokens()).isEqualTo(29425L * 16);
		assertThat(recorder.pools).containsOnly("pool");
		assertThat(recorder.failures).isEmpty();
	}

	@Test
	void failuresAreReportedAndDoNotDelayTheHealthyTarget() throws Exception {
		int deadPort;
		try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
			deadPort = socket.getLocalPort();
		}
		scraper = scraper(64 * 1024);
		scraper.targets("pool",
				List.of(target("healthy", "/healthy"), target("error", "/error"), target("garbage", "/garbage"),
						target("slow", "/slow"), target("big", "/big"),
						new ScrapeTarget("dead", URI.create("http://127.0.0.1:" + deadPort + "/metrics"))));
		recorder.awaitFailure("slow");
		// The healthy target delivered while the slow one still hung on its timeout.
		assertThat(recorder.count("healthy")).isPositive();
		recorder.awaitSnapshots("healthy", 3);
		for (String id : List.of("error", "garbage", "big", "dead")) {
			recorder.awaitFailure(id);
		}
		assertThat(recorder.failures.get("error").get(0)).isInstanceOf(IOException.class)
			.hasMessageContaining("HTTP 503");
		assertThat(recorder.failures.get("garbage").get(0)).isInstanceOf(MetricsParseException.class);
		assertThat(recorder.failures.get("slow").get(0)).isInstanceOf(HttpTimeoutException.class);
		assertThat(recorder.failures.get("big").get(0)).isInstanceOf(IOException.class).hasMessageContaining("exceeds");
		assertThat(recorder.failures.get("dead").get(0)).isInstanceOf(IOException.class);
		assertThat(recorder.snapshots).containsOnlyKeys("healthy");
		// At most one scrape in flight per target: the slow endpoint is never asked twice
		// at once.
		assertThat(hitsOf("/slow")).isLessThanOrEqualTo(recorder.failures.get("slow").size() + 1);
	}

	@Test
	void replacingTargetsStopsRemovedAndStartsNew() throws InterruptedException {
		scraper = scraper(ScrapeSettings.DEFAULT_MAX_BODY_BYTES);
		scraper.targets("pool", List.of(target("a", "/a"), target("b", "/b")));
		recorder.awaitSnapshots("a", 2);
		recorder.awaitSnapshots("b", 2);
		scraper.targets("pool", List.of(target("b", "/b"), target("c", "/c")));
		assertThat(scraper.targetIds("pool")).containsExactlyInAnyOrder("b", "c");
		int aAfterReplace = hitsOf("/a");
		int bBefore = recorder.count("b");
		recorder.awaitSnapshots("c", 5);
		recorder.awaitSnapshots("b", bBefore + 3);
		// A request to a may have been in flight at the replacement, no more than that.
		assertThat(hitsOf("/a")).isLessThanOrEqualTo(aAfterReplace + 1);
		scraper.targets("pool", List.of());
		assertThat(scraper.targetIds("pool")).isEmpty();
	}

	@Test
	void closeStopsScraping() throws InterruptedException {
		scraper = scraper(ScrapeSettings.DEFAULT_MAX_BODY_BYTES);
		scraper.targets("pool", List.of(target("a", "/a")));
		recorder.awaitSnapshots("a", 2);
		scraper.close();
		int atClose = hitsOf("/a");
		int snapshotsAtClose = recorder.count("a");
		TimeUnit.MILLISECONDS.sleep(500);
		assertThat(hitsOf("/a")).isLessThanOrEqualTo(atClose + 1);
		assertThat(recorder.count("a")).isEqualTo(snapshotsAtClose);
		assertThatIllegalStateException().isThrownBy(() -> scraper.targets("pool", List.of(target("a", "/a"))));
		scraper.close();
	}

	@Test
	void badArgumentsAreRefused() {
		scraper = scraper(ScrapeSettings.DEFAULT_MAX_BODY_BYTES);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> scraper.targets("pool", List.of(target("a", "/a"), target("a", "/b"))))
			.withMessageContaining("duplicate instanceId 'a'");
		assertThatIllegalArgumentException().isThrownBy(() -> new ScrapeTarget("x", URI.create("/metrics")))
			.withMessageContaining("/metrics");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ScrapeSettings(Duration.ZERO, Duration.ofMillis(1), 0.1, 10))
			.withMessageContaining("interval must be > 0 but was PT0S");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ScrapeSettings(Duration.ofMillis(1), Duration.ofMillis(1), 1.5, 10))
			.withMessageContaining("jitter must be in [0, 1) but was 1.5");
	}

	/** Collects what the scraper reports, by instance. */
	static final class Recorder implements ScrapeListener {

		final Map<String, List<EngineSnapshot>> snapshots = new ConcurrentHashMap<>();

		final Map<String, List<Throwable>> failures = new ConcurrentHashMap<>();

		final List<String> pools = new CopyOnWriteArrayList<>();

		@Override
		public void onSnapshot(String pool, String instanceId, EngineSnapshot snapshot) {
			pools.add(pool);
			snapshots.computeIfAbsent(instanceId, (i) -> new CopyOnWriteArrayList<>()).add(snapshot);
		}

		@Override
		public void onFailure(String pool, String instanceId, Throwable failure) {
			pools.add(pool);
			failures.computeIfAbsent(instanceId, (i) -> new CopyOnWriteArrayList<>()).add(failure);
		}

		int count(String id) {
			List<EngineSnapshot> list = snapshots.get(id);
			return list == null ? 0 : list.size();
		}

		void awaitSnapshots(String id, int n) throws InterruptedException {
			long deadline = System.nanoTime() + AWAIT.toNanos();
			while (count(id) < n) {
				assertThat(System.nanoTime()).as("snapshots of " + id + ", failures " + failures.get(id))
					.isLessThan(deadline);
				TimeUnit.MILLISECONDS.sleep(10);
			}
		}

		void awaitFailure(String id) throws InterruptedException {
			long deadline = System.nanoTime() + AWAIT.toNanos();
			while (!failures.containsKey(id)) {
				assertThat(System.nanoTime()).as("failure of " + id).isLessThan(deadline);
				TimeUnit.MILLISECONDS.sleep(10);
			}
		}

	}

}

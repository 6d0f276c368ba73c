package io.github.dualmap.gateway;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Clients that leave in the middle of a stream, the way a load balancer's timeout or a
 * killed client process leaves (a reset, with response bytes still on their way): that
 * says nothing about the instance, whose breaker must not count it as a failure.
 */
@GatewayIntegrationTest(properties = { "dualmap.scrape.enabled=false" })
class ClientDisconnectIntegrationTests {

	@Discovered
	static final List<StubEngine> ENGINES = List.of(new StubEngine("a"));

	@Autowired
	DualMapRegistry registry;

	@LocalServerPort
	int port;

	@BeforeEach
	void endlessStreams() {
		ENGINES.forEach(e -> {
			e.endless.set(true);
			e.firstByteDelay.set(Duration.ofMillis(400));
		});
	}

	/**
	 * Sends a streamed request, reads a little of the stream, then resets the connection.
	 */
	private void leaveMidStream(int i) throws Exception {
		String body = "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"leave " + i
				+ "\"}]}";
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.port), 5000);
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
					+ "Content-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body)
				.getBytes(StandardCharsets.UTF_8));
			out.flush();
			if (i % 2 == 0) {
				// Before the first byte: while the instance prefills.
				Thread.sleep(100);
			}
			else {
				InputStream in = socket.getInputStream();
				byte[] buffer = new byte[64 * 1024];
				int read = 0;
				while (read < 256 * 1024) {
					int n = in.read(buffer);
					assertThat(n).isPositive();
					read += n;
				}
			}
			// A reset, not a FIN: the gateway's next writes fail.
			socket.setSoLinger(true, 0);
		}
	}

	@Test
	void clientsLeavingMidStreamAreNoFailureOfTheInstance() throws Exception {
		// Many at once, as when a load balancer in front times out a burst.
		ExecutorService clients = Executors.newFixedThreadPool(50);
		try {
			List<Future<?>> left = new ArrayList<>();
			for (int i = 0; i < 100; i++) {
				int n = i;
				left.add(clients.submit(() -> {
					leaveMidStream(n);
					return null;
				}));
			}
			for (Future<?> f : left) {
				f.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			clients.shutdownNow();
		}
		ServicePool service = this.registry.service("llm");
		String id = service.instancePool().instances().get(0).id();
		// Every try has ended (the gateway noticed each client leave).
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (service.triesInFlight() > 0 && System.nanoTime() < deadline) {
			Thread.sleep(20);
		}
		assertThat(service.triesInFlight()).isZero();
		CircuitBreaker breaker = service.breakers().breaker(id);
		assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isZero();
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
	}

}

package io.github.dualmap.gateway;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import io.github.dualmap.RawHttp;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code dualmap.server.header-read-timeout} on the gateway's own server, over raw
 * sockets: a client that trickles its request head (slowloris) gets 408 and loses its
 * connection; a client that sends its head at once is served, however long it waits
 * between requests on a kept-alive connection.
 */
@GatewayIntegrationTest(properties = { "server.address=127.0.0.1", "dualmap.scrape.enabled=false",
		"dualmap.server.header-read-timeout=300ms" })
class HeaderReadTimeoutIntegrationTests {

	@Discovered
	static final List<StubEngine> ENGINES = List.of(new StubEngine("a"));

	static final String CHAT = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";

	@LocalServerPort
	int port;

	@Autowired
	MeterRegistry meters;

	private Socket connect() throws IOException {
		return RawHttp.connect(this.port);
	}

	@Test
	void aTrickledHeadIsAnswered408AndItsConnectionClosed() throws Exception {
		ExecutorService trickler = Executors.newSingleThreadExecutor();
		try (Socket socket = connect()) {
			OutputStream out = socket.getOutputStream();
			InputStream in = socket.getInputStream();
			// One byte every 100 ms for 3 s, 10 times the timeout: a head that never ends
			// (a header line that grows).
			Future<?> trickling = RawHttp.trickle(trickler, out,
					"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nX-Slow: ", 29, 100);
			String answer = RawHttp.readResponse(in);
			assertThat(answer).startsWith("HTTP/1.1 408 Request Timeout\r\n")
				.containsIgnoringCase("content-type: application/json")
				.containsIgnoringCase("connection: close")
				.endsWith("\r\n\r\n{\"error\":{\"message\":\"request head not received within "
						+ "dualmap.server.header-read-timeout (300 ms)\",\"type\":\"invalid_request_error\","
						+ "\"param\":null,\"code\":\"request_timeout\"}}");
			assertThat(RawHttp.closed(in)).as("connection closed after the 408").isTrue();
			trickling.get(10, TimeUnit.SECONDS);
			// The 408 never reaches the server's request handling: its own meter counts
			// it.
			assertThat(this.meters.get("dualmap.server.header.read.timeouts").functionCounter().count()).isEqualTo(1.0);
		}
		finally {
			trickler.shutdownNow();
		}
	}

	@Test
	void headsSentAtOnceAreServedHoweverLongTheConnectionIdlesBetweenThem() throws Exception {
		try (Socket socket = connect()) {
			OutputStream out = socket.getOutputStream();
			InputStream in = socket.getInputStream();
			for (int i = 0; i < 2; i++) {
				out.write(RawHttp.post("/v1/chat/completions", CHAT).getBytes(StandardCharsets.US_ASCII));
				out.flush();
				assertThat(RawHttp.readResponse(in)).as("request %d", i)
					.startsWith("HTTP/1.1 200 ")
					.contains("\"served_by\":\"a\"");
				// Idle on a kept-alive connection, well past the head's timeout.
				Thread.sleep(1_000);
			}
			out.write(RawHttp.get("/actuator/health").getBytes(StandardCharsets.US_ASCII));
			out.flush();
			assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 ").doesNotStartWith("HTTP/1.1 408");
		}
	}

}

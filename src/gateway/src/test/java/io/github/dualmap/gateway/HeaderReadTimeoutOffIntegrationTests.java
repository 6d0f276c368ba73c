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
import io.github.dualmap.RawHttp;
import io.github.dualmap.StubEngine;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code dualmap.server.header-read-timeout=0}, over raw sockets: a head may take as long
 * as it likes, and a head the server cannot decode still gets the gateway's OpenAI error
 * body with its status (431, 414, 400), as with a timeout.
 */
@GatewayIntegrationTest(properties = { "server.address=127.0.0.1", "dualmap.scrape.enabled=false",
		"dualmap.server.header-read-timeout=0" })
class HeaderReadTimeoutOffIntegrationTests {

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
	void aHeadTheServerCannotDecodeGetsItsStatusWithTheOpenAiErrorBody() throws Exception {
		for (String[] c : HeaderReadTimeoutTests.UNDECODABLE_HEADS) {
			try (Socket socket = connect()) {
				socket.getOutputStream().write(c[0].getBytes(StandardCharsets.US_ASCII));
				InputStream in = socket.getInputStream();
				String answer = RawHttp.readResponse(in);
				assertThat(answer).as(c[1])
					.startsWith(c[1])
					.containsIgnoringCase("content-type: application/json\r\n")
					.containsIgnoringCase("connection: close\r\n")
					.contains("\r\n\r\n{\"error\":{")
					.contains("\"type\":\"invalid_request_error\"")
					.contains(c[2]);
				assertThat(RawHttp.closed(in)).as("connection closed after " + c[1]).isTrue();
			}
		}
	}

	@Test
	void aHeadThatTakesItsTimeIsServed() throws Exception {
		ExecutorService trickler = Executors.newSingleThreadExecutor();
		try (Socket socket = connect()) {
			OutputStream out = socket.getOutputStream();
			InputStream in = socket.getInputStream();
			// A header trickled over 1.5 s, then the rest of the request at once.
			Future<?> trickling = RawHttp.trickle(trickler, out,
					"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nX-Slow: ", 15, 100);
			trickling.get(10, TimeUnit.SECONDS);
			out.write(RawHttp.post("/v1/chat/completions", CHAT)
				.substring("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost".length())
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200 ").contains("\"served_by\":\"a\"");
		}
		finally {
			trickler.shutdownNow();
		}
		assertThat(this.meters.get("dualmap.server.header.read.timeouts").functionCounter().count()).isZero();
	}

}

package io.github.dualmap.gateway;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.dualmap.RawHttp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.server.HttpServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link HeaderReadTimeout} on a Reactor Netty server on loopback, as the gateway's own
 * server sets it up: HTTP/1.1 alone, and with h2c on (where the codec has another name).
 */
class HeaderReadTimeoutServerTests {

	@ParameterizedTest(name = "h2c: {0}")
	@ValueSource(booleans = { false, true })
	void headsSentAtOnceAreServedAcrossIdleTimeAndATrickledOneIsAnswered408(boolean h2c) throws Exception {
		HttpProtocol[] protocols = h2c ? new HttpProtocol[] { HttpProtocol.HTTP11, HttpProtocol.H2C }
				: new HttpProtocol[] { HttpProtocol.HTTP11 };
		HeaderReadTimeout.Expirations expirations = new HeaderReadTimeout.Expirations();
		DisposableServer server = HeaderReadTimeout
			.install(HttpServer.create().host("127.0.0.1").port(0).protocol(protocols), Duration.ofMillis(300),
					expirations)
			.handle((request, response) -> response.header("content-type", "text/plain").sendString(Mono.just("ok")))
			.bindNow();
		ExecutorService trickler = Executors.newSingleThreadExecutor();
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			InputStream in = socket.getInputStream();
			for (int i = 0; i < 2; i++) {
				out.write(RawHttp.get("/" + i).getBytes(StandardCharsets.US_ASCII));
				out.flush();
				assertThat(RawHttp.readResponse(in)).as("request %d", i).startsWith("HTTP/1.1 200 ").endsWith("ok");
				// Idle on the kept-alive connection, past the timeout.
				Thread.sleep(700);
			}
			// A third head, a byte every 100 ms: the deadline restarts from its first
			// byte.
			Future<?> trickling = RawHttp.trickle(trickler, out, "GET /slow HTTP/1.1\r\nHost: localhost\r\nX-Slow: ",
					29, 100);
			assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 408 Request Timeout\r\n")
				.containsIgnoringCase("connection: close")
				.contains("\"code\":\"request_timeout\"");
			assertThat(RawHttp.closed(in)).as("connection closed after the 408").isTrue();
			assertThat(expirations.count()).as("408s counted").isOne();
			trickling.get(10, TimeUnit.SECONDS);
		}
		finally {
			trickler.shutdownNow();
			server.disposeNow();
		}
	}

	@Test
	void headersTooLargeAreAnswered431WithTheErrorBodyOnTheServer() throws Exception {
		DisposableServer server = HeaderReadTimeout
			.install(HttpServer.create().host("127.0.0.1").port(0), Duration.ofSeconds(30),
					new HeaderReadTimeout.Expirations())
			.handle((request, response) -> response.sendString(Mono.just("ok")))
			.bindNow();
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
			socket.setSoTimeout(10_000);
			socket.getOutputStream()
				.write(("GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: " + "a".repeat(9_000) + "\r\n\r\n")
					.getBytes(StandardCharsets.US_ASCII));
			InputStream in = socket.getInputStream();
			assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 431 ").contains("\"code\":\"headers_too_large\"");
			assertThat(RawHttp.closed(in)).isTrue();
		}
		finally {
			server.disposeNow();
		}
	}

}

package io.github.dualmap.emulator;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import io.github.dualmap.RawHttp;
import io.github.dualmap.engine.EngineProfile;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A keep-alive connection keeps being read after a request that was held behind another
 * one (sent before the previous response ended) is answered at once. Reactor Netty up to
 * at least 1.3.7 stopped reading such a connection (reactor/reactor-netty#4361): a
 * client's next request on it hung, which is how a scrape of {@code /metrics} right after
 * a completion stalled the connection it shared with the gateway's traffic.
 */
class EmulatorKeepAliveTests {

	private static final String COMPLETION = "{\"prompt\":\"hello world\",\"max_tokens\":4}";

	@Test
	void connectionIsReadAfterAnsweringARequestHeldBehindAnotherAtOnce() throws Exception {
		try (EmulatorServer server = EmulatorServer
			.start(EmulatorSettings.of(EngineProfile.h100_8b()).withTimeScale(20), 0); Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(server.settings().host(), server.port()), 5_000);
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			InputStream in = socket.getInputStream();
			// The completion takes a few engine steps; the scrape behind it is answered
			// as soon as it is let through.
			out.write((RawHttp.post("/v1/completions", COMPLETION) + RawHttp.get("/metrics"))
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200");
			assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200").contains("vllm:num_requests_waiting");
			for (String path : new String[] { "/health", "/metrics", "/v1/models", "/nowhere" }) {
				out.write(RawHttp.get(path).getBytes(StandardCharsets.US_ASCII));
				out.flush();
				assertThat(RawHttp.readResponse(in)).as(path).startsWith("HTTP/1.1 ");
			}
		}
	}

}

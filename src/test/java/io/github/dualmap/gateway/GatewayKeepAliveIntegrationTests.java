package io.github.dualmap.gateway;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;

import io.github.dualmap.RawHttp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway keeps reading a keep-alive connection whose pipelined request it answered
 * at once (a 404 held behind a proxied completion): without {@link KeepAliveReads} the
 * third request on the connection is never read (reactor/reactor-netty#4361).
 */
@SpringBootTest(classes = GatewayKeepAliveIntegrationTests.App.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.cloud.gateway.server.webflux.routes[0].id=llm",
				"spring.cloud.gateway.server.webflux.routes[0].uri=lb://llm",
				"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/v1/**",
				"spring.cloud.loadbalancer.cache.enabled=false", "dualmap.services=llm" })
class GatewayKeepAliveIntegrationTests {

	static final List<StubEngine> ENGINES = List.of(new StubEngine("a"));

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void engines(DynamicPropertyRegistry properties) {
		StubEngine.discover(properties, "llm", ENGINES);
	}

	@AfterAll
	static void stopEngines() {
		ENGINES.forEach(StubEngine::stop);
	}

	@Test
	void connectionIsReadAfterAPipelinedRequestAnsweredAtOnce() throws Exception {
		String chat = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.port), 5_000);
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			InputStream in = socket.getInputStream();
			out.write((RawHttp.post("/v1/chat/completions", chat) + RawHttp.get("/nowhere"))
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200").contains("x-dualmap-instance");
			assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 404");
			for (String path : new String[] { "/actuator/health", "/nowhere", "/actuator/health" }) {
				out.write(RawHttp.get(path).getBytes(StandardCharsets.US_ASCII));
				out.flush();
				assertThat(RawHttp.readResponse(in)).as(path).startsWith("HTTP/1.1 ");
			}
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}

package io.github.dualmap.gateway;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.GZIPOutputStream;

import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.RoutingRequest;
import io.github.dualmap.prompt.PromptParser;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.util.ClassUtils;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A gateway without the optional decoders (zstd-jni, brotli4j), run by the build's
 * {@code without-compression-libraries} execution with both left off the classpath:
 * {@code zstd} and {@code br} bodies are left unread and routed by load, gzip still
 * decoded, and nothing fails for the missing classes.
 */
class BodyEncodingsWithoutCompressionLibrariesTests {

	private static final byte[] JSON = "{\"model\":\"m\",\"prompt\":\"hello\"}".getBytes(StandardCharsets.UTF_8);

	@Test
	void theLibrariesAreAbsent() {
		ClassLoader loader = getClass().getClassLoader();
		assertThat(ClassUtils.isPresent("com.github.luben.zstd.ZstdInputStream", loader)).isFalse();
		assertThat(ClassUtils.isPresent("com.aayushatharva.brotli4j.Brotli4jLoader", loader)).isFalse();
	}

	@Test
	void zstdAndBrotliBodiesAreLeftUnreadAndGzipStillDecoded() throws IOException {
		assertThat(BodyEncodings.ZSTD).isFalse();
		assertThat(BodyEncodings.BROTLI).isFalse();
		for (String coding : List.of("zstd", "br", "gzip, zstd")) {
			HttpHeaders headers = new HttpHeaders();
			headers.add(HttpHeaders.CONTENT_ENCODING, coding);
			assertThat(BodyEncodings.decoded(headers, new byte[] { 1, 2, 3 }, 100)).as(coding).isNull();
		}
		HttpHeaders gzip = new HttpHeaders();
		gzip.add(HttpHeaders.CONTENT_ENCODING, "gzip");
		assertThat(BodyEncodings.decoded(gzip, gzip(JSON), 100)).isEqualTo(JSON);
	}

	@Test
	void aZstdBodyIsRoutedByLoad() {
		DualMapRegistry registry = DualMapRegistry.builder().services("llm").build();
		PromptRoutingFilter filter = new PromptRoutingFilter(registry,
				new PromptParser(PrefixHasher.ofDefaults(), JsonMapper.builder().build()),
				new SloResolver(Duration.ofSeconds(5), "x-slo-class", Map.of()), 1 << 20);
		MockServerWebExchange exchange = MockServerWebExchange
			.from(MockServerHttpRequest.post("/v1/completions").header("Content-Encoding", "zstd").body("unused"));
		exchange.getAttributes()
			.put(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR,
					Route.async().id("llm").uri(URI.create("lb://llm")).predicate(e -> true).build());
		DualMapExchange.of(exchange).requestBody(new byte[] { 40, -75, 47, -3, 1 });
		AtomicReference<ServerWebExchange> passed = new AtomicReference<>();
		filter.filter(exchange, e -> {
			passed.set(e);
			return Mono.empty();
		}).block(Duration.ofSeconds(5));
		assertThat(passed.get()).as("passed on, not refused").isNotNull();
		RoutingRequest routing = DualMapExchange.of(exchange).routingRequest();
		assertThat(routing).isNotNull();
		assertThat(routing.blocks()).as("no prompt read: routed by load").isNull();
	}

	private static byte[] gzip(byte[] bytes) throws IOException {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		try (GZIPOutputStream z = new GZIPOutputStream(out)) {
			z.write(bytes);
		}
		return out.toByteArray();
	}

}

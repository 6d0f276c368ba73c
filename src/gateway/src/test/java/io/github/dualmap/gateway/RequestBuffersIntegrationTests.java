package io.github.dualmap.gateway;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPOutputStream;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@code dualmap.max-buffered-size}: a gateway whose budget holds one 80 KB body but not
 * two, in front of one stub engine that takes 3 s to answer. While a request holds its
 * body, the next large one gets 503 {@code gateway_buffers_full} with
 * {@code Retry-After}, whether the {@code Model} predicate or the routing filter reads
 * it; the bytes come back when a request is answered, refused, rejected or cancelled by
 * its client.
 */
@GatewayIntegrationTest(properties = { "spring.cloud.gateway.server.webflux.routes[0].id=by-model",
		"spring.cloud.gateway.server.webflux.routes[0].uri=lb://llm",
		"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/v1/**",
		"spring.cloud.gateway.server.webflux.routes[0].predicates[1]=Header=x-route, model",
		"spring.cloud.gateway.server.webflux.routes[0].predicates[2]=Model=routed-*",
		"spring.cloud.gateway.server.webflux.routes[1].id=llm",
		"spring.cloud.gateway.server.webflux.routes[1].uri=lb://llm",
		"spring.cloud.gateway.server.webflux.routes[1].predicates[0]=Path=/v1/**", "dualmap.scrape.enabled=false",
		"dualmap.max-body-size=100KB", "dualmap.max-buffered-size=150KB", "dualmap.body-read-timeout=1s",
		"management.endpoints.web.exposure.include=prometheus" })
@ExtendWith(OutputCaptureExtension.class)
class RequestBuffersIntegrationTests {

	@Discovered
	static final StubEngine ENGINE = new StubEngine("slow");

	static final int BODY_KB = 80;

	@Autowired
	WebTestClient client;

	@Autowired
	RequestBuffers buffers;

	@Autowired
	MeterRegistry meters;

	@LocalServerPort
	int port;

	@AfterEach
	void nothingIsHeldAfterwards() {
		await().atMost(Duration.ofSeconds(5)).until(() -> this.buffers.used() == 0);
	}

	static String chat(String model, int kilobytes) {
		String filler = "x".repeat(kilobytes * 1024 - 100);
		return "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"" + filler + "\"}]}";
	}

	EntityExchangeResult<String> post(String body, String... headers) {
		return this.client.post().uri("/v1/chat/completions").headers(h -> {
			for (int i = 0; i < headers.length; i += 2) {
				h.add(headers[i], headers[i + 1]);
			}
		}).contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange().expectBody(String.class).returnResult();
	}

	/** A request sent in the background that holds its body while the engine works. */
	CompletableFuture<EntityExchangeResult<String>> holding(String body, String... headers) {
		ENGINE.firstByteDelay.set(Duration.ofMillis(3000));
		CompletableFuture<EntityExchangeResult<String>> first = CompletableFuture
			.supplyAsync(() -> post(body, headers));
		await().atMost(Duration.ofSeconds(5)).until(() -> this.buffers.used() >= (BODY_KB - 1) * 1024);
		return first;
	}

	static void assertBuffersFull(EntityExchangeResult<String> result) {
		assertThat(result.getStatus().value()).isEqualTo(503);
		// Refused before or after the route was chosen, the answer names its request.
		assertThat(result.getResponseHeaders().getFirst("x-request-id")).isNotBlank();
		assertThat(result.getResponseHeaders().getFirst("Retry-After")).isEqualTo("1");
		assertThat(result.getResponseBody()).contains("\"code\":\"gateway_buffers_full\"")
			.contains("dualmap.max-buffered-size");
	}

	@Test
	void aBodyTheBudgetCannotHoldGets503UntilTheHolderIsAnswered() throws Exception {
		CompletableFuture<EntityExchangeResult<String>> first = holding(chat("m", BODY_KB));
		double rejectedBefore = this.meters.get("dualmap.request.buffers.rejections").functionCounter().count();

		// Read by the routing filter.
		assertBuffersFull(post(chat("m", BODY_KB)));
		// Read by the Model predicate, answered on the route that matched after it.
		assertBuffersFull(post(chat("routed-b", BODY_KB), "x-route", "model"));
		// Small bodies still fit beside the held one.
		ENGINE.firstByteDelay.set(Duration.ZERO);
		assertThat(post(chat("m", 10)).getStatus().value()).isEqualTo(200);

		assertThat(first.get(10, TimeUnit.SECONDS).getStatus().value()).isEqualTo(200);
		assertThat(this.meters.get("dualmap.request.buffers.rejections").functionCounter().count())
			.isEqualTo(rejectedBefore + 2);
		await().atMost(Duration.ofSeconds(5)).until(() -> this.buffers.used() == 0);
		assertThat(post(chat("m", BODY_KB)).getStatus().value()).isEqualTo(200);
		assertThat(this.meters.get("dualmap.request.buffers.limit").gauge().value()).isEqualTo(150 * 1024);
		// Every body here was small enough to parse within the budget.
		assertThat(this.meters.get("dualmap.request.buffers.unparsed").functionCounter().count()).isZero();
	}

	/**
	 * A compressed body is held as the gateway decodes it: a few hundred bytes sent may
	 * be 80 KB in memory (a decompression bomb, many of them at once, exhausted the heap
	 * while the budget counted only the bytes on the wire).
	 */
	@Test
	void aCompressedBodyIsHeldAtItsDecodedSize() throws Exception {
		CompletableFuture<EntityExchangeResult<String>> first = holdingGzip(chat("m", BODY_KB));
		assertThat(gzip(chat("m", BODY_KB)).length).isLessThan(1024);
		assertBuffersFull(postGzip(chat("m", BODY_KB)));
		assertBuffersFull(postGzip(chat("routed-b", BODY_KB), "x-route", "model"));
		assertThat(first.get(10, TimeUnit.SECONDS).getStatus().value()).isEqualTo(200);
		await().atMost(Duration.ofSeconds(5)).until(() -> this.buffers.used() == 0);
		ENGINE.firstByteDelay.set(Duration.ZERO);
		assertThat(postGzip(chat("routed-b", BODY_KB), "x-route", "model").getStatus().value()).isEqualTo(200);
	}

	CompletableFuture<EntityExchangeResult<String>> holdingGzip(String body) {
		ENGINE.firstByteDelay.set(Duration.ofMillis(3000));
		CompletableFuture<EntityExchangeResult<String>> first = CompletableFuture.supplyAsync(() -> postGzip(body));
		await().atMost(Duration.ofSeconds(5)).until(() -> this.buffers.used() >= (BODY_KB - 1) * 1024);
		return first;
	}

	EntityExchangeResult<String> postGzip(String body, String... headers) {
		return this.client.post().uri("/v1/chat/completions").headers(h -> {
			for (int i = 0; i < headers.length; i += 2) {
				h.add(headers[i], headers[i + 1]);
			}
			h.add("Content-Encoding", "gzip");
		})
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(gzip(body))
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	static byte[] gzip(String text) {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		try (GZIPOutputStream zip = new GZIPOutputStream(out)) {
			zip.write(text.getBytes(StandardCharsets.UTF_8));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return out.toByteArray();
	}

	@Test
	void aBodyReadByTheModelPredicateIsHeldOnceAndGivenBack() throws Exception {
		CompletableFuture<EntityExchangeResult<String>> first = holding(chat("routed-a", BODY_KB), "x-route", "model");
		// Read by the predicate, used by the routing filter: reserved once.
		assertThat(this.buffers.used()).isBetween((BODY_KB - 1) * 1024L, BODY_KB * 1024L);
		assertThat(first.get(10, TimeUnit.SECONDS).getStatus().value()).isEqualTo(200);
	}

	@Test
	void refusedAndInvalidBodiesGiveTheirBytesBack() {
		ENGINE.firstByteDelay.set(Duration.ZERO);
		assertThat(post(chat("m", 120)).getStatus().value()).isEqualTo(413);
		assertThat(post("{\"model\":\"m\",\"messages\":" + "x".repeat(60_000)).getStatus().value()).isEqualTo(400);
		assertThat(post(chat("routed-c", 120), "x-route", "model").getStatus().value()).isEqualTo(413);
	}

	@Test
	void aClientThatGoesAwayGivesItsBytesBack() {
		ENGINE.firstByteDelay.set(Duration.ofSeconds(20));
		Disposable call = WebClient.create("http://127.0.0.1:" + this.port)
			.post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(chat("m", BODY_KB))
			.retrieve()
			.bodyToMono(String.class)
			.subscribe(body -> {
			}, error -> {
			});
		await().atMost(Duration.ofSeconds(5)).until(() -> this.buffers.used() >= (BODY_KB - 1) * 1024);
		call.dispose();
		// Long before the engine would answer.
		await().atMost(Duration.ofSeconds(3)).until(() -> this.buffers.used() == 0);
	}

	@Test
	void aClientThatLeavesMidUploadIsNoServerError(CapturedOutput output) throws Exception {
		for (String route : List.of("", "x-route: model\r\n")) {
			try (Socket socket = new Socket("127.0.0.1", this.port)) {
				OutputStream out = socket.getOutputStream();
				out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
						+ "Content-Type: application/json\r\nContent-Length: 1000\r\n" + route + "\r\n"
						+ "{\"model\":\"routed-x\",\"messages\":[")
					.getBytes(StandardCharsets.US_ASCII));
				out.flush();
				await().atMost(Duration.ofSeconds(5)).until(() -> this.buffers.used() > 0);
			}
			await().atMost(Duration.ofSeconds(5)).until(() -> this.buffers.used() == 0);
		}
		// Nobody is left to answer: no 500 in the server's meters, no error in its log.
		await().atMost(Duration.ofSeconds(5))
			.until(() -> this.meters.find("http.server.requests").tag("status", "499").timers().size() == 1
					&& this.meters.get("http.server.requests").tag("status", "499").timer().count() == 2);
		assertThat(this.meters.find("http.server.requests").tag("status", "500").timers()).isEmpty();
		assertThat(output.getAll()).doesNotContain("500 Server Error").doesNotContain("AbortedException");
	}

	/**
	 * A body refused before it was read whole (too large by its length, too slow, or
	 * beyond the budget) has its connection closed after the answer: kept open, the
	 * server would read (and drop) whatever the client sent next, without end for a
	 * chunked body, and a client could hold the connection past the read deadline.
	 */
	@Test
	void aBodyRefusedBeforeItWasReadWholeHasItsConnectionClosed() throws Exception {
		String tooLarge = "Content-Length: 10000000\r\n\r\n{\"model\":\"m\",";
		String stalled = "Content-Length: 1000\r\n\r\n{\"model\":\"routed-x\",";
		for (String route : List.of("", "x-route: model\r\n")) {
			assertThat(answerThenEnd(route + tooLarge)).startsWith("HTTP/1.1 413").contains("request_too_large");
			assertThat(answerThenEnd(route + stalled)).startsWith("HTTP/1.1 408").contains("request_timeout");
			// Chunked, without end: the server stops reading it once it is over the limit
			// (it read on before, for as long as the client sent).
			EndlessUpload.assertReadingStops(this.port,
					"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
							+ route);
		}
	}

	/**
	 * A chunked body over the limit but not endless is read to its end and dropped: its
	 * client, still sending when the limit was passed, gets the 413 on a connection kept
	 * alive (closing it at once reset such clients before they read the answer).
	 */
	@Test
	void aChunkedBodyOverTheLimitIsReadToItsEndAndAnswered() throws Exception {
		for (String route : List.of("", "x-route: model\r\n")) {
			try (Socket socket = new Socket("127.0.0.1", this.port)) {
				socket.setSoTimeout(10_000);
				OutputStream out = socket.getOutputStream();
				String chunk = "8000\r\n" + "x".repeat(0x8000) + "\r\n";
				out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
						+ route + "Transfer-Encoding: chunked\r\n\r\n" + chunk.repeat(5) + "0\r\n\r\n")
					.getBytes(StandardCharsets.US_ASCII));
				out.flush();
				String answer = new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
				assertThat(answer).isEqualTo("HTTP/1.1 413");
				// The same connection serves the next request.
				out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
						+ "Content-Length: 10000000\r\n\r\n")
					.getBytes(StandardCharsets.US_ASCII));
				out.flush();
				// The rest of the first answer, then the second (whose declared length is
				// past what is drained: it ends the connection, and so the stream).
				String rest = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
				int second = rest.indexOf("HTTP/1.1 413");
				assertThat(second).isPositive();
				assertThat(rest.substring(0, second)).contains("request_too_large")
					.doesNotContainIgnoringCase("connection: close");
				assertThat(rest.substring(second)).containsIgnoringCase("connection: close");
			}
		}
	}

	/**
	 * A request answered before its body is read (a bad SLO header) has its body read and
	 * dropped first, within the same bounds: an endless one is not read without end.
	 */
	@Test
	void aBodyAnsweredBeforeItIsReadIsNotReadWithoutEnd() throws Exception {
		EndlessUpload.assertReadingStops(this.port, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
				+ "Content-Type: application/json\r\nx-slo-ttft-ms: abc\r\n");
	}

	/**
	 * A body refused by its declared length (over the limit, within what is drained) is
	 * drained within the read deadline: trickled past it, its connection ends.
	 */
	@Test
	void aRefusedBodyTrickledPastTheDeadlineHasItsConnectionEnded() throws Exception {
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
					+ "Content-Length: 300000\r\n\r\n{")
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			assertThat(new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII))
				.isEqualTo("HTTP/1.1 413");
			// One byte every 200 ms for 8 s: the deadline is 1 s.
			assertThatExceptionOfType(IOException.class).isThrownBy(() -> {
				for (int i = 0; i < 40; i++) {
					Thread.sleep(200);
					out.write('x');
					out.flush();
				}
			});
		}
	}

	/**
	 * Sends a request with {@code rest} after its first headers and reads the answer to
	 * the end of the stream, which must come within 10 s.
	 */
	String answerThenEnd(String rest) throws IOException {
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
					+ "Content-Type: application/json\r\n" + rest)
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			// Read until the server closes: a connection kept open times the read out.
			String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			assertThat(answer).containsIgnoringCase("connection: close");
			return answer;
		}
	}

	/** A client that sends the start of its body and then nothing. */
	Mono<ResponseEntity<String>> stalled(String... headers) {
		byte[] start = "{\"model\":\"routed-x\",\"messages\":[{\"role\":\"user\",\"content\":\"".getBytes();
		Flux<DataBuffer> body = Flux.concat(Mono.just(DefaultDataBufferFactory.sharedInstance.wrap(start)),
				Flux.never());
		return WebClient.create("http://127.0.0.1:" + this.port).post().uri("/v1/chat/completions").headers(h -> {
			for (int i = 0; i < headers.length; i += 2) {
				h.add(headers[i], headers[i + 1]);
			}
		})
			.contentType(MediaType.APPLICATION_JSON)
			.body(BodyInserters.fromDataBuffers(body))
			.retrieve()
			.toEntity(String.class)
			.onErrorResume(WebClientResponseException.class,
					ex -> Mono.just(ResponseEntity.status(ex.getStatusCode())
						.headers(ex.getHeaders())
						.body(ex.getResponseBodyAsString())));
	}

	@Test
	void aBodyThatStopsArrivingGets408AndItsBytesBack() {
		for (String[] headers : List.of(new String[0], new String[] { "x-route", "model" })) {
			long started = System.nanoTime();
			ResponseEntity<String> r = stalled(headers).block(Duration.ofSeconds(10));
			assertThat(r.getStatusCode().value()).isEqualTo(408);
			assertThat(r.getBody()).contains("\"code\":\"request_timeout\"", "dualmap.body-read-timeout");
			assertThat(r.getHeaders().getFirst("x-request-id")).isNotBlank();
			assertThat(Duration.ofNanos(System.nanoTime() - started)).isBetween(Duration.ofMillis(900),
					Duration.ofSeconds(5));
		}
	}

}

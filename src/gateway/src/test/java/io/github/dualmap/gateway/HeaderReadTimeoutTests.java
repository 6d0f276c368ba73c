package io.github.dualmap.gateway;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.netty.NettyPipeline;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link HeaderReadTimeout} around a real HTTP/1.1 codec, on a channel whose clock only
 * moves when told: the deadline runs from a request's first byte to its decoded head, and
 * never while the connection is idle or a request is in progress.
 */
class HeaderReadTimeoutTests {

	/**
	 * Heads the HTTP codec cannot decode: the raw request, the status line it gets and
	 * the OpenAI error code in its body.
	 */
	static final String[][] UNDECODABLE_HEADS = {
			{ "GET /v1/models HTTP/1.1\r\nHost: localhost\r\nX-Big: " + "a".repeat(9_000) + "\r\n\r\n",
					"HTTP/1.1 431 Request Header Fields Too Large\r\n", "\"code\":\"headers_too_large\"" },
			{ "GET /" + "a".repeat(5_000) + " HTTP/1.1\r\nHost: localhost\r\n\r\n",
					"HTTP/1.1 414 Request-URI Too Long\r\n", "\"code\":\"request_line_too_long\"" },
			{ "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n",
					"HTTP/1.1 400 Bad Request\r\n", "\"code\":\"invalid_http_request\"" } };

	private static final Duration TIMEOUT = Duration.ofMillis(300);

	private final HeaderReadTimeout.Expirations expirations = new HeaderReadTimeout.Expirations();

	private final EmbeddedChannel channel = channel(this.expirations);

	private static EmbeddedChannel channel(HeaderReadTimeout.Expirations expirations) {
		return channel(TIMEOUT, expirations);
	}

	private static EmbeddedChannel channel(Duration timeout, HeaderReadTimeout.Expirations expirations) {
		EmbeddedChannel channel = new EmbeddedChannel();
		channel.freezeTime();
		// Named as Reactor Netty names its codec.
		channel.pipeline().addLast(NettyPipeline.HttpCodec, new HttpServerCodec());
		HeaderReadTimeout.addTo(channel.pipeline(), timeout, expirations);
		return channel;
	}

	@AfterEach
	void release() {
		this.channel.finishAndReleaseAll();
	}

	private void receive(String text) {
		this.channel.writeInbound(Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII));
	}

	private void advance(long millis) {
		this.channel.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
		this.channel.runScheduledPendingTasks();
	}

	/** Answers the request in progress, as the server would: 200 with a short body. */
	private void respond() {
		FullHttpResponse ok = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
				Unpooled.copiedBuffer("ok", StandardCharsets.US_ASCII));
		ok.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 2);
		this.channel.writeOutbound(ok);
	}

	/** The requests decoded so far, released. */
	private int requestsDecoded() {
		int requests = 0;
		for (Object msg; (msg = this.channel.readInbound()) != null;) {
			if (msg instanceof HttpRequest) {
				requests++;
			}
			ReferenceCountUtil.release(msg);
		}
		return requests;
	}

	/** Everything written to the connection so far, as text. */
	private String written() {
		StringBuilder text = new StringBuilder();
		for (Object msg; (msg = this.channel.readOutbound()) != null;) {
			ByteBuf bytes = (ByteBuf) msg;
			text.append(bytes.toString(StandardCharsets.UTF_8));
			bytes.release();
		}
		return text.toString();
	}

	@Test
	void aHeadNotDecodedWithinTheTimeoutIsAnswered408AndItsConnectionClosed() {
		receive("GET /v1/models HTTP/1.1\r\nHost: loc");
		advance(299);
		assertThat(this.channel.isOpen()).isTrue();
		assertThat(written()).isEmpty();
		receive("alhost\r\nX-Slow: a");
		assertThat(this.expirations.count()).isZero();
		advance(1);
		assertThat(this.expirations.count()).isOne();
		String answer = written();
		assertThat(answer).startsWith("HTTP/1.1 408 Request Timeout\r\n")
			.containsIgnoringCase("content-type: application/json\r\n")
			.containsIgnoringCase("connection: close\r\n")
			.endsWith("\r\n\r\n{\"error\":{\"message\":\"request head not received within "
					+ "dualmap.server.header-read-timeout (300 ms)\",\"type\":\"invalid_request_error\","
					+ "\"param\":null,\"code\":\"request_timeout\"}}");
		String body = answer.substring(answer.indexOf("\r\n\r\n") + 4);
		assertThat(answer).containsIgnoringCase("content-length: " + body.getBytes(StandardCharsets.UTF_8).length);
		assertThat(this.channel.isOpen()).isFalse();
		assertThat(requestsDecoded()).isZero();
	}

	@Test
	void aHeadTheCodecCannotDecodeIsAnsweredWithTheErrorBodyAndItsConnectionClosed() {
		for (String[] c : UNDECODABLE_HEADS) {
			EmbeddedChannel channel = channel(this.expirations);
			channel.writeInbound(Unpooled.copiedBuffer(c[0], StandardCharsets.US_ASCII));
			StringBuilder text = new StringBuilder();
			for (Object msg; (msg = channel.readOutbound()) != null;) {
				text.append(((ByteBuf) msg).toString(StandardCharsets.UTF_8));
				((ByteBuf) msg).release();
			}
			assertThat(text.toString()).as(c[1])
				.startsWith(c[1])
				.containsIgnoringCase("content-type: application/json\r\n")
				.containsIgnoringCase("connection: close\r\n")
				.contains("\"type\":\"invalid_request_error\"")
				.contains(c[2]);
			assertThat(channel.isOpen()).isFalse();
			Object decoded = channel.readInbound();
			assertThat(decoded).as("nothing reaches the server").isNull();
			channel.finishAndReleaseAll();
		}
		assertThat(this.expirations.count()).isZero();
	}

	@Test
	void theRestOfAHeadThatArrivesWhileThe408IsWrittenIsNotServed() {
		// The 408 stays on its way out (a client that does not read).
		List<Object> held = new ArrayList<>();
		this.channel.pipeline().addFirst(new ChannelOutboundHandlerAdapter() {
			@Override
			public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
				held.add(msg);
			}
		});
		receive("GET /v1/models HTTP/1.1\r\n");
		advance(300);
		assertThat(held).isNotEmpty();
		assertThat(this.channel.isOpen()).isTrue();
		receive("Host: localhost\r\n\r\n");
		assertThat(requestsDecoded()).isZero();
		held.forEach(ReferenceCountUtil::release);
	}

	/**
	 * A timeout of 0 sets no deadline, however long a head takes; a head the codec cannot
	 * decode is still answered with the error body.
	 */
	@Test
	void aTimeoutOfZeroTimesNoHeadAndStillAnswersOneThatCannotBeDecoded() {
		EmbeddedChannel off = channel(Duration.ZERO, this.expirations);
		try {
			off.writeInbound(Unpooled.copiedBuffer("GET /v1/models HTTP/1.1\r\nHost: loc", StandardCharsets.US_ASCII));
			off.advanceTimeBy(1, TimeUnit.HOURS);
			off.runScheduledPendingTasks();
			assertThat(off.isOpen()).isTrue();
			assertThat((Object) off.readOutbound()).isNull();
			off.writeInbound(Unpooled.copiedBuffer("alhost\r\n\r\n", StandardCharsets.US_ASCII));
			Object request = off.readInbound();
			assertThat(request).isInstanceOf(HttpRequest.class);
			ReferenceCountUtil.release(request);
		}
		finally {
			off.finishAndReleaseAll();
		}
		EmbeddedChannel big = channel(Duration.ZERO, this.expirations);
		try {
			big.writeInbound(Unpooled.copiedBuffer(
					"GET /v1/models HTTP/1.1\r\nHost: localhost\r\nX-Big: " + "a".repeat(9_000) + "\r\n\r\n",
					StandardCharsets.US_ASCII));
			StringBuilder text = new StringBuilder();
			for (Object msg; (msg = big.readOutbound()) != null;) {
				text.append(((ByteBuf) msg).toString(StandardCharsets.UTF_8));
				((ByteBuf) msg).release();
			}
			assertThat(text.toString()).startsWith("HTTP/1.1 431 Request Header Fields Too Large\r\n")
				.contains("\"code\":\"headers_too_large\"");
			assertThat(big.isOpen()).isFalse();
		}
		finally {
			big.finishAndReleaseAll();
		}
		assertThat(this.expirations.count()).isZero();
	}

	@Test
	void aHeadDecodedWithinTheTimeoutIsNotTimedOut() {
		receive("GET /v1/models HTTP/1.1\r\n");
		advance(200);
		receive("Host: localhost\r\n\r\n");
		assertThat(requestsDecoded()).isEqualTo(1);
		// However long the server takes to answer.
		advance(60_000);
		assertThat(written()).isEmpty();
		assertThat(this.channel.isOpen()).isTrue();
		assertThat(this.expirations.count()).isZero();
	}

	@Test
	void idleTimeBetweenRequestsDoesNotCountAndTheDeadlineRestartsForEachRequest() {
		receive("GET /a HTTP/1.1\r\nHost: localhost\r\n\r\n");
		assertThat(requestsDecoded()).isEqualTo(1);
		respond();
		assertThat(written()).startsWith("HTTP/1.1 200 ");
		// A kept-alive connection with no request on it: server.netty.idle-timeout's.
		advance(60_000);
		assertThat(this.channel.isOpen()).isTrue();
		// A second head, 250 ms from its first byte to its last: in time, although
		// more than the timeout has passed since the first request.
		receive("GET /b HTTP/1.1\r\n");
		advance(250);
		receive("Host: localhost\r\n\r\n");
		assertThat(requestsDecoded()).isEqualTo(1);
		respond();
		assertThat(written()).startsWith("HTTP/1.1 200 ");
		// A third, given its own 300 ms from its first byte.
		advance(1_000);
		receive("GET /c HTTP/1.1\r\n");
		advance(250);
		assertThat(written()).isEmpty();
		advance(50);
		assertThat(written()).startsWith("HTTP/1.1 408 ");
		assertThat(this.channel.isOpen()).isFalse();
	}

	@Test
	void aPipelinedHeadIsTimedOnlyOnceThePreviousResponseIsWritten() {
		receive("GET /a HTTP/1.1\r\nHost: localhost\r\n\r\n");
		assertThat(requestsDecoded()).isEqualTo(1);
		// While the server is still answering the first request.
		receive("GET /b HTTP/1.1\r\n");
		advance(60_000);
		assertThat(written()).isEmpty();
		respond();
		assertThat(written()).startsWith("HTTP/1.1 200 ");
		// The first bytes after the response start the deadline.
		receive("Host: loc");
		advance(300);
		assertThat(written()).startsWith("HTTP/1.1 408 ");
	}

	@Test
	void aBodyStillArrivingAfterItsResponseIsNotAHead() {
		// Answered before its body was read (the rest is read and dropped).
		receive("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\n12");
		assertThat(requestsDecoded()).isEqualTo(1);
		respond();
		assertThat(written()).startsWith("HTTP/1.1 200 ");
		receive("345");
		advance(1_000);
		receive("67890");
		assertThat(written()).isEmpty();
		assertThat(this.channel.isOpen()).isTrue();
		requestsDecoded();
		// The next bytes begin a head again.
		receive("G");
		advance(300);
		assertThat(written()).startsWith("HTTP/1.1 408 ");
	}

	@Test
	void anInterimResponseDoesNotEndTheRequest() {
		// 100 Continue, then a body that takes its time: the body's deadline, not this.
		receive("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\n"
				+ "Content-Length: 4\r\n\r\n");
		assertThat(requestsDecoded()).isEqualTo(1);
		this.channel.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
		receive("ab");
		advance(1_000);
		receive("cd");
		assertThat(requestsDecoded()).isZero();
		advance(1_000);
		assertThat(written()).startsWith("HTTP/1.1 100 ").doesNotContain("408");
		// A response in parts ends it with its last part.
		this.channel.writeOutbound(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
		this.channel.writeOutbound(new DefaultHttpContent(Unpooled.copiedBuffer("ok", StandardCharsets.US_ASCII)));
		receive("GET /b HTTP/1.1\r\n");
		advance(1_000);
		assertThat(written()).doesNotContain("408");
		this.channel.writeOutbound(LastHttpContent.EMPTY_LAST_CONTENT);
		receive("Host: loc");
		advance(300);
		assertThat(written()).startsWith("HTTP/1.1 408 ");
	}

	@Test
	void aConnectionUpgradedAwayFromHttp11IsNeverTimed() {
		// A WebSocket: 101, then frames that are no request heads.
		receive("GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
		assertThat(requestsDecoded()).isEqualTo(1);
		this.channel
			.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.SWITCHING_PROTOCOLS));
		written();
		this.channel.pipeline().remove(NettyPipeline.HttpCodec);
		receive("\u0081\u0002hi");
		advance(60_000);
		assertThat(this.channel.isOpen()).isTrue();
		assertThat(written()).isEmpty();
	}

	@Test
	void aClosedConnectionHasNoDeadlineLeft() {
		java.util.concurrent.atomic.AtomicBoolean inactive = new java.util.concurrent.atomic.AtomicBoolean();
		this.channel.pipeline().addLast(new io.netty.channel.ChannelInboundHandlerAdapter() {
			@Override
			public void channelInactive(ChannelHandlerContext ctx) {
				inactive.set(true);
			}
		});
		receive("GET / HTTP/1.1\r\n");
		this.channel.close();
		// The handlers after it (Reactor Netty's) still hear that the connection closed.
		assertThat(inactive).isTrue();
		advance(1_000);
		assertThat(written()).isEmpty();
	}

	@Test
	void goesAroundTheCodecOnceAndOnlyWhereThereIsOne() {
		ChannelPipeline pipeline = this.channel.pipeline();
		HeaderReadTimeout.addTo(pipeline, TIMEOUT, this.expirations);
		List<String> names = pipeline.names();
		assertThat(names).containsSubsequence(HeaderReadTimeout.BYTES_NAME, NettyPipeline.HttpCodec,
				HeaderReadTimeout.NAME);
		assertThat(names.indexOf(HeaderReadTimeout.NAME)).isEqualTo(names.indexOf(NettyPipeline.HttpCodec) + 1);
		assertThat(names.indexOf(HeaderReadTimeout.BYTES_NAME)).isEqualTo(names.indexOf(NettyPipeline.HttpCodec) - 1);
		assertThat(names.stream().filter(HeaderReadTimeout.NAME::equals)).hasSize(1);
		assertThat(names.stream().filter(HeaderReadTimeout.BYTES_NAME::equals)).hasSize(1);
		// With h2c on, Netty's upgrade handler adds the codec under a name of its own.
		EmbeddedChannel h2c = new EmbeddedChannel(new HttpServerCodec());
		h2c.freezeTime();
		HeaderReadTimeout.addTo(h2c.pipeline(), TIMEOUT, this.expirations);
		assertThat(h2c.pipeline().names()).hasSizeGreaterThanOrEqualTo(3)
			.startsWith(HeaderReadTimeout.BYTES_NAME)
			.element(2)
			.isEqualTo(HeaderReadTimeout.NAME);
		h2c.writeInbound(Unpooled.copiedBuffer("GET / HTTP/1.1\r\n", StandardCharsets.US_ASCII));
		h2c.advanceTimeBy(300, TimeUnit.MILLISECONDS);
		h2c.runScheduledPendingTasks();
		assertThat(h2c.isOpen()).isFalse();
		h2c.finishAndReleaseAll();
		EmbeddedChannel withoutCodec = new EmbeddedChannel();
		HeaderReadTimeout.addTo(withoutCodec.pipeline(), TIMEOUT, this.expirations);
		assertThat(withoutCodec.pipeline().get(HeaderReadTimeout.NAME)).isNull();
		assertThat(withoutCodec.pipeline().get(HeaderReadTimeout.BYTES_NAME)).isNull();
		withoutCodec.finishAndReleaseAll();
	}

}

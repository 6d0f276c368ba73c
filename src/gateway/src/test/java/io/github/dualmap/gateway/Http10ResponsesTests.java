package io.github.dualmap.gateway;

import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.Test;
import reactor.netty.NettyPipeline;

import static org.assertj.core.api.Assertions.assertThat;

class Http10ResponsesTests {

	/** A server connection: the codec under Reactor Netty's name, then the handler. */
	private static EmbeddedChannel connection() {
		EmbeddedChannel channel = new EmbeddedChannel();
		channel.pipeline().addLast(NettyPipeline.HttpCodec, new HttpServerCodec());
		Http10Responses.addTo(channel.pipeline());
		return channel;
	}

	/** Sends {@code request} in and returns the decoded head the server side sees. */
	private static HttpRequest receive(EmbeddedChannel channel, String request) {
		channel.writeInbound(Unpooled.copiedBuffer(request, StandardCharsets.US_ASCII));
		HttpRequest head = null;
		for (Object msg; (msg = channel.readInbound()) != null;) {
			if (msg instanceof HttpRequest r) {
				head = r;
			}
			ReferenceCountUtil.release(msg);
		}
		return head;
	}

	/** A streamed response of unknown length, as Reactor Netty writes one: chunked. */
	private static void stream(EmbeddedChannel channel, String... parts) {
		HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
		head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
		HttpUtil.setTransferEncodingChunked(head, true);
		channel.writeOutbound(head);
		for (String part : parts) {
			channel.writeOutbound(new DefaultHttpContent(Unpooled.copiedBuffer(part, StandardCharsets.UTF_8)));
		}
		channel.writeOutbound(LastHttpContent.EMPTY_LAST_CONTENT);
	}

	private static String written(EmbeddedChannel channel) {
		StringBuilder out = new StringBuilder();
		for (Object msg; (msg = channel.readOutbound()) != null;) {
			out.append(((ByteBuf) msg).toString(StandardCharsets.UTF_8));
			ReferenceCountUtil.release(msg);
		}
		return out.toString();
	}

	@Test
	void aStreamedAnswerToAnHttp10RequestEndsWithTheConnectionNotInChunks() {
		EmbeddedChannel channel = connection();
		receive(channel, "POST /v1/chat/completions HTTP/1.0\r\nContent-Length: 0\r\n\r\n");
		stream(channel, "data: one\n\n", "data: two\n\n");
		String out = written(channel);
		assertThat(out).startsWith("HTTP/1.1 200 OK\r\n")
			.doesNotContainIgnoringCase("transfer-encoding")
			.containsIgnoringCase("connection: close")
			.endsWith("\r\n\r\ndata: one\n\ndata: two\n\n");
		assertThat(channel.isOpen()).as("the close ends the body").isFalse();
		channel.finishAndReleaseAll();
	}

	@Test
	void anHttp10ClientAskingForKeepAliveStillGetsItsBodyEndedByTheClose() {
		EmbeddedChannel channel = connection();
		receive(channel, "GET /v1/models HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
		HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
		HttpUtil.setTransferEncodingChunked(head, true);
		head.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
		channel.writeOutbound(head);
		channel.writeOutbound(new DefaultHttpContent(Unpooled.copiedBuffer("{}", StandardCharsets.UTF_8)));
		assertThat(channel.isOpen()).isTrue();
		channel.writeOutbound(LastHttpContent.EMPTY_LAST_CONTENT);
		String out = written(channel);
		assertThat(out).doesNotContainIgnoringCase("transfer-encoding")
			.containsIgnoringCase("connection: close")
			.doesNotContainIgnoringCase("keep-alive")
			.endsWith("\r\n\r\n{}");
		assertThat(channel.isOpen()).isFalse();
		channel.finishAndReleaseAll();
	}

	@Test
	void http11AndAnswersOfKnownLengthAreLeftAlone() {
		EmbeddedChannel channel = connection();
		receive(channel, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
		stream(channel, "data: one\n\n");
		String chunked = written(channel);
		assertThat(chunked).containsIgnoringCase("transfer-encoding: chunked")
			.contains("b\r\ndata: one\n\n\r\n0\r\n\r\n");
		assertThat(channel.isOpen()).isTrue();
		// An HTTP/1.0 request answered with a Content-Length needs nothing.
		receive(channel, "GET /b HTTP/1.0\r\n\r\n");
		DefaultFullHttpResponse full = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
				Unpooled.copiedBuffer("ok", StandardCharsets.UTF_8));
		HttpUtil.setContentLength(full, 2);
		channel.writeOutbound(full);
		assertThat(written(channel)).containsIgnoringCase("content-length: 2")
			.doesNotContainIgnoringCase("connection: close")
			.endsWith("\r\n\r\nok");
		assertThat(channel.isOpen()).isTrue();
		channel.finishAndReleaseAll();
	}

	@Test
	void pipelinedRequestsAreAnsweredEachByItsOwnVersion() {
		EmbeddedChannel channel = connection();
		receive(channel, "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.0\r\n\r\n");
		// An interim response answers no request.
		channel.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
		stream(channel, "first");
		assertThat(written(channel)).containsIgnoringCase("transfer-encoding: chunked");
		assertThat(channel.isOpen()).isTrue();
		stream(channel, "second");
		assertThat(written(channel)).doesNotContainIgnoringCase("transfer-encoding").endsWith("\r\n\r\nsecond");
		assertThat(channel.isOpen()).isFalse();
		channel.finishAndReleaseAll();
	}

	@Test
	void goesAfterTheCodecOnceAndNowhereWithoutOne() {
		EmbeddedChannel channel = connection();
		Http10Responses.addTo(channel.pipeline());
		assertThat(channel.pipeline().names()).containsSubsequence(NettyPipeline.HttpCodec, Http10Responses.NAME);
		assertThat(channel.pipeline().names().stream().filter(Http10Responses.NAME::equals)).hasSize(1);
		EmbeddedChannel bare = new EmbeddedChannel();
		Http10Responses.addTo(bare.pipeline());
		assertThat(bare.pipeline().get(Http10Responses.NAME)).isNull();
		// With h2c on, Netty's upgrade handler names the codec itself.
		EmbeddedChannel h2c = new EmbeddedChannel();
		h2c.pipeline().addLast("upgrade-codec", new HttpServerCodec());
		Http10Responses.addTo(h2c.pipeline());
		assertThat(h2c.pipeline().names()).containsSubsequence("upgrade-codec", Http10Responses.NAME);
		channel.finishAndReleaseAll();
		bare.finishAndReleaseAll();
		h2c.finishAndReleaseAll();
	}

}

package io.github.dualmap.gateway;

import java.util.ArrayDeque;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;

/**
 * Ends a response of unknown length to an HTTP/1.0 request by closing the connection
 * instead of chunking it. Reactor Netty (1.3.6 with Netty 4.2.15) frames every response
 * without a {@code Content-Length} with {@code Transfer-Encoding: chunked}, whatever the
 * request's version, which RFC 9112 (section 6.1) forbids: an HTTP/1.0 client does not
 * decode chunks and reads the chunk sizes as part of the body. A streamed completion is
 * such a response, and nginx, for one, proxies with HTTP/1.0 unless
 * {@code proxy_http_version 1.1} is set. For such a response this handler takes
 * {@code chunked} out of its head, marks it {@code Connection: close} and closes the
 * connection once its last part is written, which is how HTTP/1.0 delimits a body (RFC
 * 9112, section 6.3). Responses with a length, and every response to HTTP/1.1, pass
 * untouched.
 * <p>
 * Sits right after the HTTP/1.1 codec ({@link NettyPipeline#HttpCodec
 * reactor.left.httpCodec}, or the {@link HttpServerCodec} Netty's h2c upgrade handler
 * adds under a name of its own), where it sees each decoded request and each response
 * before they are encoded; requests pipelined on one connection are answered in order, so
 * the versions of the requests read wait in a queue for their responses. One instance per
 * connection, touched only on its event loop.
 */
public final class Http10Responses extends ChannelDuplexHandler {

	/** Its name in the channel pipeline. */
	public static final String NAME = "dualmap.http10Responses";

	// Whether each request read and not yet answered was HTTP/1.0, oldest first.
	private final ArrayDeque<Boolean> http10 = new ArrayDeque<>(2);

	// The response being written lost its chunking: close after its last part.
	private boolean closeAfterLast;

	private Http10Responses() {
	}

	/** {@code server} with the handler on every HTTP/1.1 connection it accepts. */
	public static HttpServer install(HttpServer server) {
		return server.doOnChannelInit((observer, channel, remote) -> addTo(channel.pipeline()));
	}

	static void addTo(ChannelPipeline pipeline) {
		if (pipeline.get(NAME) != null) {
			return;
		}
		ChannelHandlerContext codec = Http11Codec.in(pipeline);
		if (codec != null) {
			pipeline.addAfter(codec.name(), NAME, new Http10Responses());
		}
	}

	@Override
	public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
		if (msg instanceof HttpRequest request) {
			this.http10.addLast(HttpVersion.HTTP_1_0.equals(request.protocolVersion()));
		}
		super.channelRead(ctx, msg);
	}

	@Override
	public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
		if (msg instanceof HttpResponse response && response.status().codeClass() != HttpStatusClass.INFORMATIONAL) {
			// A final response answers the oldest request waiting for one.
			Boolean old = this.http10.pollFirst();
			if (Boolean.TRUE.equals(old) && HttpUtil.isTransferEncodingChunked(response)) {
				HttpUtil.setTransferEncodingChunked(response, false);
				response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
				this.closeAfterLast = true;
			}
		}
		if (msg instanceof LastHttpContent && this.closeAfterLast) {
			this.closeAfterLast = false;
			ctx.write(msg, promise.unvoid()).addListener(ChannelFutureListener.CLOSE);
			return;
		}
		super.write(ctx, msg, promise);
	}

}

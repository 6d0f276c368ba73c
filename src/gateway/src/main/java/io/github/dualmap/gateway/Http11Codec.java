package io.github.dualmap.gateway;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpServerCodec;
import org.jspecify.annotations.Nullable;
import reactor.netty.NettyPipeline;

/**
 * Where a server connection's HTTP/1.1 codec sits, for the handlers placed around it
 * ({@link HeaderReadTimeout}, {@link Http10Responses}).
 */
final class Http11Codec {

	private Http11Codec() {
	}

	/**
	 * The codec under Reactor Netty's name ({@link NettyPipeline#HttpCodec}) or, with h2c
	 * on, the {@link HttpServerCodec} Netty's upgrade handler adds under a name of its
	 * own; {@code null} when the connection has none (HTTP/2 negotiated by TLS).
	 */
	static @Nullable ChannelHandlerContext in(ChannelPipeline pipeline) {
		ChannelHandlerContext codec = pipeline.context(NettyPipeline.HttpCodec);
		return codec != null ? codec : pipeline.context(HttpServerCodec.class);
	}

}
